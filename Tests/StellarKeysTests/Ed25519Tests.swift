import Testing
@testable import StellarKeys
import TestFixtures

@Suite struct Ed25519Tests {
    @Test func rfc8032VectorsDeriveTheirPublicKeysAndSignatures() throws {
        let vectors = try Ed25519Vectors.load()
        #expect(vectors.count == 3)
        for vector in vectors {
            var seed = Fixtures.hex(vector.secretKey)
            let keyPair = try KeyPair(seed: SecureBytes(consuming: &seed))
            let message = Fixtures.hex(vector.message)
            #expect(keyPair.publicKey.rawRepresentation == Fixtures.hex(vector.publicKey), "\(vector.name)")
            #expect(keyPair.signature(for: message) == Fixtures.hex(vector.signature), "\(vector.name)")
            #expect(keyPair.publicKey.isValidSignature(Fixtures.hex(vector.signature), for: message), "\(vector.name)")
        }
    }

    @Test func aFlippedBitInMessageOrSignatureFailsVerification() throws {
        for vector in try Ed25519Vectors.load() {
            let publicKey = try PublicKey(rawRepresentation: Fixtures.hex(vector.publicKey))
            let signature = Fixtures.hex(vector.signature)
            let message = Fixtures.hex(vector.message)
            for bit in 0..<(signature.count * 8) {
                var flipped = signature
                flipped[bit / 8] ^= 1 << UInt8(bit % 8)
                #expect(!publicKey.isValidSignature(flipped, for: message))
            }
            #expect(!publicKey.isValidSignature(signature, for: message + [0]))
            #expect(!publicKey.isValidSignature(Array(signature.dropLast()), for: message))
        }
    }

    @Test func seedsRoundTripThroughSecretSeedStrKeys() throws {
        for _ in 0..<100 {
            let keyPair = KeyPair.random()
            let restored = try KeyPair(secretSeed: keyPair.secretSeedStrKey())
            #expect(restored == keyPair)
            #expect(restored.seed.isEqual(to: keyPair.seed))
            let text = keyPair.secretSeedStrKey().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            #expect(text.hasPrefix("S") && text.count == 56)
            #expect(try StrKey(text, as: .secretSeed).payload == keyPair.seed.withUnsafeBytes { Array($0) })
        }
    }

    @Test func anAccountIDIsNotASecretSeed() {
        #expect(throws: StrKeyError.wrongKind(expected: .secretSeed, found: .accountID)) {
            try KeyPair(secretSeed: KeyPair.random().publicKey.accountID)
        }
    }

    @Test func seedsOfTheWrongLengthAreRefused() {
        #expect(throws: KeyError.invalidLength(expected: 32, found: 31)) {
            try KeyPair(seed: SecureBytes.random(count: 31))
        }
    }

    @Test func printingAKeyPairNeverShowsTheSecret() throws {
        let keyPair = KeyPair.random()
        let seedText = keyPair.secretSeedStrKey().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let seedHex = Hex.string(keyPair.seed.withUnsafeBytes { Array($0) })
        for printed in [String(describing: keyPair), String(reflecting: keyPair), "\(keyPair.seed)",
                        String(reflecting: keyPair.seed), "\(try StrKey(seedText))"] {
            #expect(!printed.contains(seedText) && !printed.lowercased().contains(seedHex), "\(printed)")
            #expect(printed.contains("redacted"))
        }
        #expect(String(describing: keyPair).contains(keyPair.publicKey.accountID))
    }

    @Test func secureBytesCompareByContent() {
        var a: [UInt8] = [1, 2, 3]
        var b: [UInt8] = [1, 2, 3]
        var c: [UInt8] = [1, 2, 4]
        let x = SecureBytes(consuming: &a)
        #expect(a.isEmpty)
        #expect(x.isEqual(to: SecureBytes(consuming: &b)))
        #expect(!x.isEqual(to: SecureBytes(consuming: &c)))
        #expect(!x.isEqual(to: SecureBytes.random(count: 4)))
    }

    @Test func sha256MatchesTheFIPSExample() {
        // FIPS 180-2 appendix B.1: SHA-256("abc").
        let digest = Array("abc".utf8).withUnsafeBytes { Sodium.sha256($0) }
        #expect(Hex.string(digest) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
