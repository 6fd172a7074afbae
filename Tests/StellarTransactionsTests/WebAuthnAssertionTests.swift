import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// What a P-256 key signs for a smart account and what its credential holds, byte for byte what the independent
/// reference fixtures/make-webauthn.py (cryptography's P-256, stellar-sdk's XDR, the verifiers' checks written from
/// their source) makes: WebAuthn assertions, low-S signatures, refusals, credentials beside Ed25519 signers, and an
/// authorization entry signed through `AuthorizationEntry.signed`.
@Suite struct WebAuthnAssertionTests {
    struct Assertion: Decodable {
        struct Raw: Decodable { let r, s, signature: String; let sIsHigh: Bool }
        let name, publicKey, digest, relyingPartyID, authenticatorData, clientDataJSON, messageDigest: String
        let flags: UInt8
        let r, s, otherS, sigData: String
        let sIsHigh: Bool
        let secp256r1: Raw
    }
    struct Signatures: Decodable {
        struct Refusal: Decodable { let name, r, s, refusal: String }
        struct Edge: Decodable { let name, s, low: String }
        let refusals: [Refusal]
        let edges: [Edge]
    }
    struct FlagRefusal: Decodable { let name: String; let flags: UInt8 }
    struct Signer: Decodable, Equatable { let kind, address: String; let key: String? }
    struct SmartCase: Decodable {
        let name, payload, verifier, keyData, existing, digest, r, s, credential: String
        let contextRuleIDs: [UInt32]
        let signers: [Signer]
    }
    struct Entry: Decodable {
        let form, smartAccount, verifier, network, publicKey, entry, signed, digest, digestToSign, r, s: String
        let contextRuleIDs: [UInt32]
        let expiration: UInt32
    }
    struct File: Decodable {
        let order, relyingPartyID: String
        let assertions: [Assertion]
        let signatures: Signatures
        let flagRefusals: [FlagRefusal]
        let smartAccounts: [SmartCase]
        let entries: [Entry]
    }
    static let file = try! Fixtures.load(File.self, "webauthn.json")
    static let hex = Fixtures.hex

    static func assertion(_ fixture: Assertion) throws -> WebAuthnAssertion {
        try WebAuthnAssertion(challenge: hex(fixture.digest), relyingPartyID: fixture.relyingPartyID,
                              flags: WebAuthnAssertion.Flags(rawValue: fixture.flags))
    }

    @Test func everyAssertionIsTheReferencesBytes() throws {
        #expect(Self.file.assertions.count == 7)
        #expect(Self.file.relyingPartyID == WebAuthnAssertion.defaultRelyingPartyID)
        #expect(Self.file.order == Hex.string(P256Signature.order))
        for fixture in Self.file.assertions {
            let assertion = try Self.assertion(fixture)
            #expect(Hex.string(assertion.authenticatorData) == fixture.authenticatorData, "\(fixture.name)")
            #expect(String(decoding: assertion.clientDataJSON, as: UTF8.self) == fixture.clientDataJSON, "\(fixture.name)")
            #expect(Hex.string(assertion.messageDigest) == fixture.messageDigest, "\(fixture.name)")
            // The s the signer made and n − s give the one signature value, s low.
            #expect(Hex.string(try assertion.signatureData(r: Self.hex(fixture.r), s: Self.hex(fixture.s))) == fixture.sigData, "\(fixture.name)")
            #expect(Hex.string(try assertion.signatureData(r: Self.hex(fixture.r), s: Self.hex(fixture.otherS))) == fixture.sigData, "\(fixture.name)")
        }
        // The signer's own s was high in some cases and low in others, in both forms.
        #expect(Set(Self.file.assertions.map(\.sIsHigh)) == [true, false])
        #expect(Set(Self.file.assertions.map(\.secp256r1.sIsHigh)) == [true, false])
        // The unpadded base64url alphabet: '-' and '_', where base64 has '+' and '/'.
        #expect(Self.file.assertions.contains { $0.clientDataJSON.contains("-") && $0.clientDataJSON.contains("_") })
    }

    @Test func eachFormSignsWhatTheReferenceSigns() throws {
        for fixture in Self.file.assertions {
            let digest = Self.hex(fixture.digest)
            let raw = fixture.secp256r1
            #expect(try P256SignatureForm.secp256r1.digestToSign(for: digest) == digest, "\(fixture.name)")
            #expect(Hex.string(try P256SignatureForm.secp256r1.credentialSignature(r: Self.hex(raw.r), s: Self.hex(raw.s), for: digest))
                    == raw.signature, "\(fixture.name)")
            // The WebAuthn form is the assertion with the default relying party and flags.
            guard fixture.relyingPartyID == WebAuthnAssertion.defaultRelyingPartyID, fixture.flags == 0x05 else { continue }
            #expect(Hex.string(try P256SignatureForm.webAuthn.digestToSign(for: digest)) == fixture.messageDigest, "\(fixture.name)")
            #expect(Hex.string(try P256SignatureForm.webAuthn.credentialSignature(r: Self.hex(fixture.r), s: Self.hex(fixture.s), for: digest))
                    == fixture.sigData, "\(fixture.name)")
        }
    }

    @Test func highSBecomesLowAtTheEdges() throws {
        for edge in Self.file.signatures.edges {
            let signature = try P256Signature(r: [1], s: Self.hex(edge.s))
            #expect(Hex.string(signature.s) == edge.low, "\(edge.name)")
            #expect(try P256Signature(rawRepresentation: signature.rawRepresentation) == signature, "\(edge.name)")
        }
        // A sized buffer without its leading zero bytes is the same number.
        let short = try P256Signature(r: [0x01], s: [0x00, 0x02])
        #expect(short.rawRepresentation == [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [2])
        #expect(P256Signature.subtract(P256Signature.order, P256Signature.order) == [UInt8](repeating: 0, count: 32))
    }

    @Test(arguments: file.signatures.refusals.map(\.name))
    func outOfRangeIsRefused(name: String) throws {
        let fixture = try #require(Self.file.signatures.refusals.first { $0.name == name })
        let expected: P256Error = fixture.refusal == "rOutOfRange" ? .rOutOfRange : .sOutOfRange
        #expect(throws: expected) { try P256Signature(r: Self.hex(fixture.r), s: Self.hex(fixture.s)) }
        let assertion = try Self.assertion(Self.file.assertions[0])
        #expect(throws: expected) { try assertion.signatureData(r: Self.hex(fixture.r), s: Self.hex(fixture.s)) }
        #expect(throws: expected) {
            try P256SignatureForm.secp256r1.credentialSignature(r: Self.hex(fixture.r), s: Self.hex(fixture.s), for: [UInt8](repeating: 1, count: 32))
        }
    }

    @Test func lengthsAreRefused() throws {
        #expect(throws: P256Error.signatureLength(33)) { try P256Signature(r: [1] + [UInt8](repeating: 0, count: 32), s: [1]) }
        #expect(throws: P256Error.signatureLength(63)) { try P256Signature(rawRepresentation: [UInt8](repeating: 1, count: 63)) }
        for form in P256SignatureForm.allCases {
            #expect(throws: P256Error.digestLength(31)) { try form.digestToSign(for: [UInt8](repeating: 1, count: 31)) }
            #expect(throws: P256Error.digestLength(33)) { try form.credentialSignature(r: [1], s: [1], for: [UInt8](repeating: 1, count: 33)) }
        }
    }

    /// The flags the reference verifier refuses are refused before anything is signed, and so are bits the
    /// assertion does not carry (AT, ED).
    @Test func flagsTheVerifierRefusesAreRefused() throws {
        #expect(Self.file.flagRefusals.count == 3)
        let challenge = [UInt8](repeating: 7, count: 32)
        for fixture in Self.file.flagRefusals {
            #expect(throws: P256Error.self, "\(fixture.name)") {
                try WebAuthnAssertion(challenge: challenge, flags: WebAuthnAssertion.Flags(rawValue: fixture.flags))
            }
        }
        #expect(throws: P256Error.self) { try WebAuthnAssertion(challenge: challenge, flags: WebAuthnAssertion.Flags(rawValue: 0x45)) }
        #expect(throws: P256Error.self) { try WebAuthnAssertion(challenge: challenge, flags: WebAuthnAssertion.Flags(rawValue: 0x85)) }
        let defaults = try WebAuthnAssertion(challenge: challenge)
        #expect(defaults.authenticatorData.count == 37 && defaults.authenticatorData[32] == 0x05 && defaults.authenticatorData.suffix(4) == [0, 0, 0, 0])
    }

    /// What a credential grows by is bounded before signing: the WebAuthn value is the longest.
    @Test func largestCredentialSignatureIsWebAuthns() throws {
        let assertion = try Self.assertion(Self.file.assertions[0])
        let value = try assertion.signatureData(r: [1], s: [1])
        #expect(value.count == P256SignatureForm.largestCredentialSignature)
        #expect(assertion.clientDataJSON.count <= WebAuthnAssertion.maximumClientDataSize)
        #expect(SmartAccountCredential.growth(keySize: 32, signatureSize: 64) == 180)
    }

    @Test func p256KeysAreChecked() throws {
        let point = Self.hex(Self.file.assertions[0].publicKey)
        let key = try P256PublicKey(keyData: point + [9, 9, 9])
        #expect(key.point == point && key.credentialID == [9, 9, 9] && key.keyData == point + [9, 9, 9])
        #expect(throws: P256Error.keyLength(64)) { try P256PublicKey(point: Array(point.prefix(64))) }
        #expect(throws: P256Error.keyLength(33)) { try P256PublicKey(keyData: [2] + Array(point[1..<33])) }
        #expect(throws: P256Error.keyNotUncompressed(0x02)) { try P256PublicKey(point: [2] + point.dropFirst()) }
        #expect(throws: P256Error.coordinateNotInField) { try P256PublicKey(point: [4] + P256PublicKey.fieldPrime + point.suffix(32)) }
        #expect(throws: P256Error.coordinateNotInField) { try P256PublicKey(point: Array(point.prefix(33)) + P256PublicKey.fieldPrime) }
        #expect(throws: P256Error.keyDataTooLong(257)) { try P256PublicKey(point: point, credentialID: [UInt8](repeating: 1, count: 192)) }
    }

    /// A 65-byte External key beside Ed25519 ones, in the host's order: by verifier first, then key bytes (a point
    /// starts 0x04), a credential id kept as registered.
    @Test func p256SignerJoinsACredentialInHostOrder() throws {
        #expect(Self.file.smartAccounts.count == 5)
        for fixture in Self.file.smartAccounts {
            let rules = try SmartAccountRules(verifier: fixture.verifier, contextRuleIDs: fixture.contextRuleIDs)
            let digest = SmartAccountCredential.digest(payload: Self.hex(fixture.payload), contextRuleIDs: fixture.contextRuleIDs)
            #expect(Hex.string(digest) == fixture.digest, "\(fixture.name)")
            let key = try P256PublicKey(keyData: Self.hex(fixture.keyData))
            let value = try WebAuthnAssertion(challenge: digest).signatureData(r: Self.hex(fixture.r), s: Self.hex(fixture.s))
            let existing = Base64.decode(fixture.existing) ?? []
            #expect(try SmartAccountCredential.hasRoom(for: key.keyData, rules: rules, in: existing), "\(fixture.name)")
            let credential = try SmartAccountCredential.adding(signature: value, by: key.keyData, rules: rules, to: existing)
            #expect(Base64.string(credential) == fixture.credential, "\(fixture.name)")
            let read = try #require(try SmartAccountCredential.read(credential))
            #expect(read.signers.map { Signer(kind: $0.kind.rawValue, address: $0.address, key: $0.keyHex) } == fixture.signers, "\(fixture.name)")
            // Once there, the key has no room for another signature, and the same one changes nothing.
            #expect(try !SmartAccountCredential.hasRoom(for: key.keyData, rules: rules, in: credential), "\(fixture.name)")
            #expect(try SmartAccountCredential.adding(signature: value, by: key.keyData, rules: rules, to: credential) == credential)
            #expect(throws: SmartAccountError.self) {
                try SmartAccountCredential.adding(signature: value.dropLast(4) + [0, 0, 0, 1], by: key.keyData, rules: rules, to: credential)
            }
        }
        #expect(throws: SmartAccountError.keyDataLength(257)) {
            try SmartAccountCredential.adding(signature: [1], by: [UInt8](repeating: 4, count: 257),
                                              rules: SmartAccountRules(verifier: Self.file.smartAccounts[0].verifier, contextRuleIDs: [0]), to: [0, 0, 0, 1])
        }
    }

    /// The entry signed through `AuthorizationEntry.signed` by a P-256 smart-account signer, in each form, is the
    /// entry stellar-sdk's `authorize_entry` made with the reference's signature: the payload's digest, what the key
    /// signs, and the credential all agree.
    @Test func entrySignedByP256KeyIsTheReferences() throws {
        #expect(Self.file.entries.map(\.form) == P256SignatureForm.allCases.map(\.rawValue))
        for fixture in Self.file.entries {
            let form = try #require(P256SignatureForm(rawValue: fixture.form))
            let signer = try AuthorizationSigner.smartAccount(
                fixture.smartAccount, p256Key: P256PublicKey(point: Self.hex(fixture.publicKey)),
                rules: SmartAccountRules(verifier: fixture.verifier, contextRuleIDs: fixture.contextRuleIDs))
            #expect(signer.key == nil && signer.address == fixture.smartAccount)
            var asked = 0
            let signed = try AuthorizationEntry(base64: fixture.entry).signed(for: signer, on: .testnet, expirationLedger: fixture.expiration) { payload in
                asked += 1
                #expect(Hex.string(payload.digest) == fixture.digest)
                #expect(Hex.string(try form.digestToSign(for: payload.digest)) == fixture.digestToSign)
                return try form.credentialSignature(r: Self.hex(fixture.r), s: Self.hex(fixture.s), for: payload.digest)
            }
            #expect(asked == 1)
            #expect(signed.base64 == fixture.signed, "\(fixture.form)")
        }
    }

    /// The account convention takes Ed25519 keys only: a P-256 key signs only as a smart account's External signer.
    @Test func p256KeySignsOnlyForSmartAccounts() throws {
        let key = try P256PublicKey(point: Self.hex(Self.file.assertions[0].publicKey))
        let contract = Self.file.entries[0].smartAccount
        #expect(throws: AuthorizationError.notAnEd25519Key(AuthorizationSigner.Key.p256(key).description)) {
            try AuthorizationSigner(signingKey: .p256(key), for: .ownAccount)
        }
        #expect(throws: AuthorizationError.self) { try AuthorizationSigner(signingKey: .p256(key), for: .contractAccount(contract)) }
        let ed25519 = try KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO").publicKey
        #expect(try AuthorizationSigner(signingKey: .ed25519(ed25519), for: .contractAccount(contract)).key == ed25519)
    }
}
