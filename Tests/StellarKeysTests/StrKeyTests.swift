import Testing
@testable import StellarKeys
import TestFixtures

@Suite struct StrKeyTests {
    @Test func sep23ValidStrKeysDecodeToTheirPublishedPayloads() throws {
        let vectors = try StrKeyVectors.load().valid
        #expect(vectors.count == 8)
        for vector in vectors {
            let strKey = try StrKey(vector.strkey)
            #expect(strKey.kind.rawValue == vector.type, "\(vector.description)")
            #expect(strKey.payload == Fixtures.hex(vector.payload), "\(vector.description)")
            #expect(strKey.stringValue == vector.strkey, "\(vector.description)")
            #expect(strKey.ed25519PublicKey?.accountID == vector.account ?? (strKey.kind == .accountID ? vector.strkey : nil))
            #expect(strKey.muxedID.map { String($0) } == vector.id)
            #expect(strKey.signedPayloadData.map { Hex.string($0) } == vector.signedPayload)
            #expect(try StrKey(kind: strKey.kind, payload: strKey.payload).stringValue == vector.strkey)
        }
    }

    @Test func sep23InvalidStrKeysAreRejected() throws {
        let vectors = try StrKeyVectors.load().invalid
        #expect(vectors.count == 15)
        for vector in vectors {
            #expect(throws: StrKeyError.self, "\(vector.description)") { try StrKey(vector.strkey) }
        }
    }

    /// Each SEP-23 invalid case fails for the reason the SEP gives, not by accident.
    @Test(arguments: [
        ("GAAAAAAAACGC6", StrKeyError.invalidPayloadLength(.accountID, 5)),
        ("MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUR", .nonCanonical),
        ("GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZA", .invalidLength(57)),
        ("GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUACUSI", .invalidPayloadLength(.accountID, 33)),
        ("G47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVP2I", .unknownVersionByte(0x37)),
        ("MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLKA", .invalidLength(70)),
        ("MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAAV75I", .invalidPayloadLength(.muxedAccount, 41)),
        ("M47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUQ", .unknownVersionByte(0x67)),
        ("MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUK===", .padding),
        ("MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUO", .invalidChecksum),
        ("BAAD6DBUX6J22DMZOHIEZTEQ64CVCHEDRKWZONFEUL5Q26QD7R76RGR4TV", .nonCanonical),
        ("BAAT6DBUX6J22DMZOHIEZTEQ64CVCHEDRKWZONFEUL5Q26QD7R76RGXACA", .unknownClaimableBalanceType(1)),
    ])
    func invalidStrKeysFailForTheirPublishedReason(strKey: String, expected: StrKeyError) {
        #expect(throws: expected) { try StrKey(strKey) }
    }

    @Test func signedPayloadsWithABadLengthPrefixOrPaddingAreRejected() throws {
        let cases = try StrKeyVectors.load().invalid.filter { $0.strkey.hasPrefix("P") }
        #expect(cases.count == 3)
        for vector in cases {
            #expect(throws: StrKeyError.self) { try StrKey(vector.strkey) }
            do {
                _ = try StrKey(vector.strkey)
            } catch let error as StrKeyError {
                guard case .invalidSignedPayload = error else {
                    Issue.record("\(vector.description): got \(error)")
                    continue
                }
            }
        }
    }

    @Test func malformedTextGetsASpecificError() throws {
        let valid = "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"
        #expect(throws: StrKeyError.empty) { try StrKey("") }
        #expect(throws: StrKeyError.lowercase) { try StrKey(valid.lowercased()) }
        #expect(throws: StrKeyError.invalidCharacter(position: 3)) { try StrKey("GA1QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ") }
        #expect(throws: StrKeyError.invalidCharacter(position: 57)) { try StrKey(valid + " ") }
        #expect(throws: StrKeyError.wrongKind(expected: .secretSeed, found: .accountID)) {
            try StrKey(valid, as: .secretSeed)
        }
        #expect(throws: StrKeyError.invalidLength(1)) { try StrKey("G") }
    }

    @Test func everySingleCharacterMutationOfAValidStrKeyIsRejected() throws {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var mutations = 0
        for vector in try StrKeyVectors.load().valid {
            let original = Array(vector.strkey)
            for position in original.indices {
                for symbol in alphabet where symbol != original[position] {
                    var mutated = original
                    mutated[position] = symbol
                    #expect(throws: StrKeyError.self) { try StrKey(String(mutated)) }
                    mutations += 1
                }
            }
        }
        #expect(mutations > 15_000)
    }

    @Test(arguments: StrKey.Kind.allCases)
    func tenThousandRandomKeysRoundTrip(kind: StrKey.Kind) throws {
        for _ in 0..<10_000 {
            let payload = Self.randomPayload(for: kind)
            let strKey = try StrKey(kind: kind, payload: payload)
            let text = strKey.stringValue
            #expect(text.first == kind.prefix)
            let decoded = try StrKey(text, as: kind)
            guard decoded.payload == payload else {
                Issue.record("\(kind) did not round-trip: \(Hex.string(payload))")
                return
            }
        }
    }

    @Test func muxedAccountsAndSignedPayloadsAreBuiltFromTheirParts() throws {
        let account = KeyPair.random().publicKey
        let muxed = StrKey.muxedAccount(account, id: .max)
        #expect(muxed.muxedID == .max && muxed.ed25519PublicKey == account)
        #expect(try StrKey(muxed.stringValue) == muxed)
        for length in 4...64 {
            let data = Sodium.randomBytes(count: length)
            let signer = try StrKey.signedPayload(signer: account, payload: data)
            #expect(signer.signedPayloadData == data && signer.ed25519PublicKey == account)
            #expect(try StrKey(signer.stringValue) == signer)
        }
        #expect(throws: StrKeyError.self) { try StrKey.signedPayload(signer: account, payload: [1, 2, 3]) }
        #expect(throws: StrKeyError.self) { try StrKey.signedPayload(signer: account, payload: .init(repeating: 1, count: 65)) }
    }

    @Test func payloadsOfTheWrongShapeCannotBeEncoded() {
        #expect(throws: StrKeyError.invalidPayloadLength(.accountID, 31)) {
            try StrKey(kind: .accountID, payload: .init(repeating: 0, count: 31))
        }
        #expect(throws: StrKeyError.unknownClaimableBalanceType(2)) {
            try StrKey(kind: .claimableBalance, payload: [2] + .init(repeating: 0, count: 32))
        }
    }

    static func randomPayload(for kind: StrKey.Kind) -> [UInt8] {
        switch kind {
        case .muxedAccount:
            return Sodium.randomBytes(count: 40)
        case .claimableBalance:
            return [0] + Sodium.randomBytes(count: 32)
        case .signedPayload:
            let length = Int.random(in: 4...64)
            let prefix = (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
            return Sodium.randomBytes(count: 32) + prefix + Sodium.randomBytes(count: length)
                + [UInt8](repeating: 0, count: ((length + 3) & ~3) - length)
        default:
            return Sodium.randomBytes(count: 32)
        }
    }
}
