import Foundation
import Testing
@testable import StellarKeys
import TestFixtures

struct SEP53Vectors: Decodable {
    struct Vector: Decodable {
        let name: String
        let messageText: String?
        let messageBase64: String?
        let seed: String
        let address: String
        let signatureBase64: String
        let signatureHex: String

        var message: [UInt8] {
            if let messageText { return Array(messageText.utf8) }
            return Array(Data(base64Encoded: messageBase64!)!)
        }
    }
    let vectors: [Vector]

    static func load() throws -> [Vector] { try Fixtures.load(Self.self, "sep53-messages.json").vectors }
}

@Suite struct SignedMessageTests {
    @Test func sep53VectorsSignAndVerify() throws {
        let vectors = try SEP53Vectors.load()
        #expect(vectors.count == 3)
        for vector in vectors {
            let keyPair = try KeyPair(secretSeed: vector.seed)
            #expect(keyPair.publicKey.accountID == vector.address)
            let signature = keyPair.messageSignature(for: vector.message)
            #expect(Data(signature).base64EncodedString() == vector.signatureBase64, "\(vector.name)")
            #expect(Hex.string(signature) == vector.signatureHex)
            #expect(keyPair.publicKey.isValidMessageSignature(signature, for: vector.message))
            // A SEP-53 signature is not a signature of the bare message.
            #expect(!keyPair.publicKey.isValidSignature(signature, for: vector.message))
        }
    }

    @Test func aFlippedBitAnywhereFailsVerification() throws {
        let vector = try SEP53Vectors.load()[0]
        let publicKey = try PublicKey(accountID: vector.address)
        let signature = Fixtures.hex(vector.signatureHex)
        for bit in 0..<(vector.message.count * 8) {
            var message = vector.message
            message[bit / 8] ^= 1 << (bit % 8)
            #expect(!publicKey.isValidMessageSignature(signature, for: message))
        }
        for bit in 0..<(signature.count * 8) {
            var flipped = signature
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(!publicKey.isValidMessageSignature(flipped, for: vector.message))
        }
        for bit in 0..<256 {
            var key = publicKey.rawRepresentation
            key[bit / 8] ^= 1 << (bit % 8)
            guard let other = try? PublicKey(rawRepresentation: key) else { continue }
            #expect(!other.isValidMessageSignature(signature, for: vector.message))
        }
    }

    @Test func theHashIsSHA256OfPrefixAndMessage() {
        let message = Array("Hello, World!".utf8)
        let expected = (Array("Stellar Signed Message:\n".utf8) + message).withUnsafeBytes { Sodium.sha256($0) }
        #expect(SignedMessage.hash(of: message) == expected)
    }
}
