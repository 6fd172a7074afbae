import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// An OpenZeppelin smart account's credential (an `AuthPayload`), byte for byte what the independent reference
/// fixtures/make-smart-accounts.py (stellar-sdk's XDR, written from the contract's source) makes, and each refusal.
@Suite struct SmartAccountCredentialTests {
    struct Signer: Decodable { let kind, address: String; let key: String? }
    struct Case: Decodable {
        let name, payload, verifier, signerSeed, existing: String
        let contextRuleIDs: [UInt32]
        let digest, signature, credential: String
        let signers: [Signer]
    }
    struct Refusal: Decodable {
        let name, refusal, payload, verifier, signerSeed, existing: String
        let contextRuleIDs: [UInt32]
    }
    struct File: Decodable { let contract: String; let maxSigners: Int; let cases: [Case]; let refusals: [Refusal] }
    static let file = try! Fixtures.load(File.self, "smart-accounts.json")

    static func keyPair(_ seedHex: String) throws -> KeyPair {
        var seed = Fixtures.hex(seedHex)
        return try KeyPair(seed: SecureBytes(consuming: &seed))
    }

    static func bytes(_ base64: String) -> [UInt8] { Base64.decode(Array(base64.utf8)) ?? [] }

    static func named(_ name: String) throws -> Case { try #require(file.cases.first { $0.name == name }) }

    static func add(_ fixture: Case) throws -> [UInt8] {
        let key = try keyPair(fixture.signerSeed)
        let digest = SmartAccountCredential.digest(payload: Fixtures.hex(fixture.payload), contextRuleIDs: fixture.contextRuleIDs)
        return try SmartAccountCredential.adding(
            signature: key.signature(for: digest), by: key.publicKey,
            rules: SmartAccountRules(verifier: fixture.verifier, contextRuleIDs: fixture.contextRuleIDs), to: bytes(fixture.existing))
    }

    /// The issue's example, literally: for rule ids [0] the payload is followed by these 20 bytes.
    @Test func digestOfRuleZeroAppendsTheIssuesBytes() throws {
        let payload = Fixtures.hex(try Self.named("first signer, one rule").payload)
        let appended = Fixtures.hex("00000010" + "00000001" + "00000001" + "00000003" + "00000000")
        let expected = (payload + appended).withUnsafeBytes { Sodium.sha256($0) }
        #expect(SmartAccountCredential.digest(payload: payload, contextRuleIDs: [0]) == expected)
        #expect(Hex.string(expected) == (try Self.named("first signer, one rule").digest))
    }

    @Test func everyCaseIsTheReferencesBytes() throws {
        #expect(Self.file.cases.count == 14)
        #expect(Self.file.maxSigners == SmartAccountCredential.maximumSignersPerRule)
        for fixture in Self.file.cases {
            let key = try Self.keyPair(fixture.signerSeed)
            let digest = SmartAccountCredential.digest(payload: Fixtures.hex(fixture.payload), contextRuleIDs: fixture.contextRuleIDs)
            #expect(Hex.string(digest) == fixture.digest, "\(fixture.name)")
            #expect(Hex.string(key.signature(for: digest)) == fixture.signature, "\(fixture.name)")
            let credential = try Self.add(fixture)
            #expect(Base64.string(credential) == fixture.credential, "\(fixture.name)")
            // Read back: the rule ids, and every signer in the reference's order.
            let read = try #require(try SmartAccountCredential.read(credential))
            #expect(read.contextRuleIDs == fixture.contextRuleIDs, "\(fixture.name)")
            #expect(read.signers.map { Signer(kind: $0.kind.rawValue, address: $0.address, key: $0.keyHex) }.map(\.description)
                    == fixture.signers.map(\.description), "\(fixture.name)")
            // Nothing to read before the first signature.
            let existing = try SmartAccountCredential.read(Self.bytes(fixture.existing))
            #expect((existing == nil) == (Self.bytes(fixture.existing) == [0, 0, 0, 1]), "\(fixture.name)")
        }
    }

    @Test func aSignatureAlreadyThereLeavesTheCredentialAsItWas() throws {
        let fixture = try Self.named("already signed by this key with this signature: unchanged")
        #expect(try Self.add(fixture) == Self.bytes(fixture.existing))
        // Adding the same signature again to any signed credential changes nothing.
        for fixture in Self.file.cases {
            let signed = Self.bytes(fixture.credential)
            let key = try Self.keyPair(fixture.signerSeed)
            let again = try SmartAccountCredential.adding(
                signature: Fixtures.hex(fixture.signature), by: key.publicKey,
                rules: SmartAccountRules(verifier: fixture.verifier, contextRuleIDs: fixture.contextRuleIDs), to: signed)
            #expect(again == signed, "\(fixture.name)")
        }
    }

    /// Delegated signers come before External ones, and an account before a contract even when the contract's
    /// bytes are lower (all zero here): the host compares the symbol, then the address's arm, then its bytes.
    @Test func delegatedBeforeExternalAndAccountBeforeContract() throws {
        let fixture = try Self.named("fourth signer: Delegated signers, and External keys on both sides")
        let read = try #require(try SmartAccountCredential.read(Self.bytes(fixture.credential)))
        #expect(read.signers.map(\.kind) == [.delegated, .delegated, .external, .external, .external])
        #expect(try read.signers[0].address.hasPrefix("G") && read.signers[1].address == (StrKey(kind: .contract, payload: [UInt8](repeating: 0, count: 32))).stringValue)
        // Swapping the two Delegated signers is refused, as is an External one before them.
        let refused = try #require(Self.file.refusals.first { $0.name.hasPrefix("External before Delegated") })
        #expect(throws: SmartAccountError.signersOutOfOrder(entry: 2)) { try SmartAccountCredential.read(Self.bytes(refused.existing)) }
    }

    /// Keys compare as byte strings, a shorter prefix first, not by their XDR (whose length comes first): a
    /// 65-byte key with a lower first byte sorts before a 32-byte one, a 16-byte key with a higher one after it.
    @Test func keysCompareAsBytesNotByLength() throws {
        let verifier = [UInt8](repeating: 0x5A, count: 32)
        func external(_ key: [UInt8]) -> SmartAccountCredential.Signer {
            .init(kind: .external, addressType: 1, addressBytes: verifier, key: key)
        }
        let ours = external([UInt8](repeating: 0x50, count: 32))
        #expect(SmartAccountCredential.Signer.hostOrder(external([0x4F] + [UInt8](repeating: 0xFF, count: 64)), ours) < 0)
        #expect(SmartAccountCredential.Signer.hostOrder(external([0x51] + [UInt8](repeating: 0, count: 15)), ours) > 0)
        #expect(SmartAccountCredential.Signer.hostOrder(external([UInt8](repeating: 0x50, count: 16)), ours) < 0)
        #expect(SmartAccountCredential.Signer.hostOrder(ours, ours) == 0)
        let fixture = try Self.named("keys of other lengths: compared as bytes, not by length")
        let keys = try #require(try SmartAccountCredential.read(Self.bytes(fixture.credential))).signers.map { $0.key?.count }
        #expect(keys == [65, 16, 32, 16])
    }

    @Test(arguments: file.refusals.map(\.name))
    func refused(name: String) throws {
        let fixture = try #require(Self.file.refusals.first { $0.name == name })
        let key = try Self.keyPair(fixture.signerSeed)
        let digest = SmartAccountCredential.digest(payload: Fixtures.hex(fixture.payload), contextRuleIDs: fixture.contextRuleIDs)
        let rules = try SmartAccountRules(verifier: fixture.verifier, contextRuleIDs: fixture.contextRuleIDs)
        let existing = Self.bytes(fixture.existing)
        let error = try #require(throws: SmartAccountError.self) {
            try SmartAccountCredential.adding(signature: key.signature(for: digest), by: key.publicKey, rules: rules, to: existing)
        }
        #expect(Self.kind(error) == fixture.refusal, "\(error.message)")
        #expect(error.message.hasSuffix("; nothing was signed.") && !error.message.contains("\n"))
        // What `adding` refuses as malformed, `read` refuses too; the rest is well-formed and readable.
        if fixture.refusal == "notAuthPayload" || fixture.refusal == "signersOutOfOrder" {
            let again = try #require(throws: SmartAccountError.self) { try SmartAccountCredential.read(existing) }
            #expect(again == error)
        } else if name == "sixteen signers for one rule" {
            #expect(throws: SmartAccountError.tooManySigners(16, most: 15)) { try SmartAccountCredential.read(existing) }
        } else {
            #expect(try SmartAccountCredential.read(existing) != nil)
        }
    }

    @Test func refusalsSayWhatWasWrong() throws {
        func refusal(_ name: String) throws -> [UInt8] { Self.bytes(try #require(Self.file.refusals.first { $0.name == name }).existing) }
        let key = try Self.keyPair(Self.file.refusals[0].signerSeed)
        let rules = try SmartAccountRules(verifier: Self.file.refusals[0].verifier, contextRuleIDs: [0])
        let signature = [UInt8](repeating: 7, count: 64)
        func add(_ bytes: [UInt8], _ rules: SmartAccountRules = rules) throws -> [UInt8] {
            try SmartAccountCredential.adding(signature: signature, by: key.publicKey, rules: rules, to: bytes)
        }
        #expect(throws: SmartAccountError.otherRules(found: [1], expected: [0])) { try add(try refusal("signatures for other rules")) }
        #expect(throws: SmartAccountError.otherSignature(key: key.publicKey.accountID)) {
            try add(try refusal("this key already there with another signature"))
        }
        #expect(throws: SmartAccountError.tooManySigners(16, most: 15)) {
            try add(try refusal("fifteen signers for one rule already: no room for a sixteenth"))
        }
        #expect(throws: SmartAccountError.signersOutOfOrder(entry: 2)) { try add(try refusal("a signer twice")) }
        #expect(throws: SmartAccountError.notAuthPayload(XDRError(offset: 12, expected: "the field context_rule_ids"))) {
            try add(try refusal("a field misnamed"))
        }
        #expect(throws: SmartAccountError.notAuthPayload(XDRError(offset: 8, expected: "exactly two fields, context_rule_ids and signers"))) {
            try add(try refusal("an extra field"))
        }
        #expect(throws: SmartAccountError.signatureLength(63)) {
            try SmartAccountCredential.adding(signature: Array(signature.dropLast()), by: key.publicKey, rules: rules, to: [0, 0, 0, 1])
        }
        // SCV_VOID with a byte more, and other SCVal arms, are not a credential to add to.
        #expect(throws: SmartAccountError.self) { try add([0, 0, 0, 1, 0]) }
        #expect(throws: SmartAccountError.notAuthPayload(XDRError(offset: 0, expected: "an AuthPayload (SCV_MAP) or SCV_VOID"))) {
            try add([0, 0, 0, 3, 0, 0, 0, 0])
        }
        // The rules are compared before the room is: a credential for rule [0] is not one for [0, 1].
        let two = try SmartAccountRules(verifier: rules.verifier, contextRuleIDs: [0, 1])
        #expect(throws: SmartAccountError.otherRules(found: [0], expected: [0, 1])) {
            try add(try refusal("fifteen signers for one rule already: no room for a sixteenth"), two)
        }
    }

    /// Every proper prefix of every credential is refused cleanly, never read past its end.
    @Test func truncatedCredentialsAreRefused() throws {
        for fixture in Self.file.cases {
            let credential = Self.bytes(fixture.credential)
            for count in 0..<credential.count {
                #expect(throws: SmartAccountError.self, "\(fixture.name), \(count) bytes") {
                    try SmartAccountCredential.read(Array(credential.prefix(count)))
                }
            }
        }
    }

    @Test func rulesAreChecked() throws {
        let verifier = try Self.named("first signer, one rule").verifier
        #expect(throws: SmartAccountError.verifierNotContract) {
            try SmartAccountRules(verifier: "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR", contextRuleIDs: [0])
        }
        #expect(throws: SmartAccountError.verifierNotContract) { try SmartAccountRules(verifier: verifier.lowercased(), contextRuleIDs: [0]) }
        #expect(throws: SmartAccountError.verifierNotContract) { try SmartAccountRules(verifier: "", contextRuleIDs: [0]) }
        #expect(throws: SmartAccountError.noContextRules) { try SmartAccountRules(verifier: verifier, contextRuleIDs: []) }
        #expect(throws: SmartAccountError.tooManyContextRules(65)) {
            try SmartAccountRules(verifier: verifier, contextRuleIDs: Array(repeating: 0, count: 65))
        }
        let most = try SmartAccountRules(verifier: verifier, contextRuleIDs: Array(0..<64))
        #expect(most.contextRuleIDs.count == 64 && most.verifier == verifier)
    }

    static func kind(_ error: SmartAccountError) -> String {
        switch error {
        case .verifierNotContract: "verifierNotContract"
        case .noContextRules: "noContextRules"
        case .tooManyContextRules: "tooManyContextRules"
        case .signatureLength: "signatureLength"
        case .keyDataLength: "keyDataLength"
        case .notAuthPayload: "notAuthPayload"
        case .otherRules: "otherRules"
        case .signersOutOfOrder: "signersOutOfOrder"
        case .tooManySigners: "tooManySigners"
        case .otherSignature: "otherSignature"
        }
    }
}

extension SmartAccountCredentialTests.Signer: CustomStringConvertible {
    var description: String { "\(kind) \(address) \(key ?? "-")" }
}
