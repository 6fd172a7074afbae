import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// fixtures/multisig.json, made by stellar-sdk 16.1.1 (fixtures/make-multisig.py), with the signature check its
/// Python reference worked out from stellar-core a9b8613218e141ddb89d621e5f04d4c75a149d36.
struct MultisigFixtures: Decodable {
    struct Copy: Decodable { let signers: [String]; let envelope: String }
    struct Expected: Decodable {
        struct Account: Decodable {
            let account, part, level: String
            let needs: [String]
            let threshold, weight: Int?
            let signedBy: [String]?
            let met: Bool?
        }
        struct Signature: Decodable { let part: String; let index: Int; let hint: String; let used: Bool? }
        struct Extra: Decodable { let key, part: String; let signed: Bool }
        let complete: Bool
        let accounts: [Account]
        let signatures: [Signature]
        let extraSigners: [Extra]
    }
    struct Case: Decodable, CustomTestStringConvertible {
        let name, note, hash, unsigned, combined: String
        let accountFiles: [String]
        let copies: [Copy]
        let expected: Expected
        let trimmed: String?
        var testDescription: String { name }
    }
    let passphrase: String
    let keys: [String: String]
    let accounts: [String: JSONValue]
    let cases: [Case]
    let tamperedCopy, feeBumpOtherInner: String

    static let loaded = try! Fixtures.load(MultisigFixtures.self, "multisig.json")
    static func named(_ name: String) -> Case { loaded.cases.first { $0.name == name }! }

    /// An account file's bytes, as a person saves Horizon's answer.
    static func accountJSON(_ name: String) -> [UInt8] {
        let raw = try! JSONSerialization.jsonObject(with: Data(contentsOf: Fixtures.root.appendingPathComponent("multisig.json"))) as! [String: Any]
        let account = (raw["accounts"] as! [String: Any])[name]!
        return Array(try! JSONSerialization.data(withJSONObject: account))
    }

    static func accounts(for testCase: Case) throws -> [AccountSigners] {
        try AccountSigners.read(testCase.accountFiles.map { ($0 + ".json", accountJSON($0)) })
    }
}

/// Any JSON value: the account files are kept as they are, and read as bytes by `accountJSON`.
struct JSONValue: Decodable {
    init(from decoder: Decoder) throws {}
}

@Suite struct MultisigTests {
    static let network = try! StellarNetwork(named: "testnet")
    static let combinable = MultisigFixtures.loaded.cases.filter { $0.copies.count > 1 }

    /// Copies signed apart, combined, are byte for byte the envelope stellar-sdk builds when every signer signs
    /// one envelope in turn: the first copy's bytes, then the others' new signatures in order (a 22-byte hash-x
    /// preimage, padded, and a CAP-40 signed payload's among them).
    @Test(arguments: combinable) func combiningCopiesIsSigningInTurn(_ testCase: MultisigFixtures.Case) throws {
        let copies = try testCase.copies.enumerated().map { ("copy \($0.offset + 1)", try TransactionEnvelope(base64: $0.element.envelope)) }
        let combined = try TransactionEnvelope.combining(copies, on: Self.network, knownSigners: [])
        #expect(combined.base64 == testCase.combined)
        #expect(Hex.string(combined.hash) == testCase.hash)
        // Each signature once: combining the result with its copies again changes nothing.
        let again = try TransactionEnvelope.combining([("combined", try TransactionEnvelope(xdr: combined.envelope))] + copies,
                                                      on: Self.network, knownSigners: [])
        #expect(again.base64 == testCase.combined)
    }

    /// The signature check matches the Python reference: each needed account's level, threshold, weight present,
    /// signers and verdict; which signatures the network would take; the extra signers.
    @Test(arguments: MultisigFixtures.loaded.cases) func signatureCheckMatchesTheReference(_ testCase: MultisigFixtures.Case) throws {
        let envelope = try TransactionEnvelope(base64: testCase.combined)
        let check = envelope.signatureCheck(on: Self.network, accounts: try MultisigFixtures.accounts(for: testCase))
        let expected = testCase.expected
        #expect(check.isComplete == expected.complete)
        #expect(check.accounts.count == expected.accounts.count)
        for (found, wanted) in zip(check.accounts, expected.accounts) {
            #expect(found.account == wanted.account && found.part.rawValue == wanted.part && found.level.rawValue == wanted.level)
            #expect(found.needs.map(\.what) == wanted.needs)
            #expect(found.threshold.map(Int.init) == wanted.threshold && found.weight == wanted.weight && found.isMet == wanted.met)
            #expect(Set(found.signedBy.map(\.key)) == Set(wanted.signedBy ?? []))
        }
        #expect(check.signatures.map { "\($0.part.rawValue) \($0.index) \($0.hint) \(String(describing: $0.isUsed))" }
                == expected.signatures.map { "\($0.part) \($0.index) \($0.hint) \(String(describing: $0.used))" })
        #expect(check.extraSigners.map { "\($0.key) \($0.part.rawValue) \($0.isSigned)" }
                == expected.extraSigners.map { "\($0.key) \($0.part) \($0.signed)" })
        // Each signature the network would refuse is one warning; none when every signature is used.
        #expect(check.warnings.count == check.unused.count)
        #expect(check.warnings.allSatisfy { $0.contains("tx_bad_auth_extra") })
    }

    /// Trimming removes exactly the signatures the reference finds unused, and nothing else changes.
    @Test(arguments: MultisigFixtures.loaded.cases.filter { $0.trimmed != nil }) func trimmingRemovesTheUnusedSignatures(_ testCase: MultisigFixtures.Case) throws {
        let envelope = try TransactionEnvelope(base64: testCase.combined)
        let trimmed = try envelope.trimmed(on: Self.network, accounts: try MultisigFixtures.accounts(for: testCase))
        #expect(trimmed.base64 == testCase.trimmed)
        #expect(trimmed.removed.count == testCase.expected.signatures.filter { $0.used == false }.count)
        // What is left is all used.
        let after = try TransactionEnvelope(xdr: trimmed.envelope).signatureCheck(on: Self.network, accounts: try MultisigFixtures.accounts(for: testCase))
        #expect(after.unused.isEmpty)
    }

    @Test func trimmingNeedsEveryAccount() throws {
        let testCase = MultisigFixtures.named("unknown_account")
        let envelope = try TransactionEnvelope(base64: testCase.combined)
        #expect(throws: TrimError.accountsUnknown([MultisigFixtures.loaded.keys["E"]!])) {
            try envelope.trimmed(on: Self.network, accounts: try MultisigFixtures.accounts(for: testCase))
        }
    }

    /// The key about to sign: what its signature would bring, counted as appended.
    @Test func aNewSignatureIsCountedAsAppended() throws {
        let testCase = MultisigFixtures.named("payment")
        let firstCopy = try TransactionEnvelope(base64: testCase.copies[0].envelope)   // the master key's only
        let golden = try PublicKey(accountID: MultisigFixtures.loaded.keys["B"]!)
        let check = firstCopy.signatureCheck(on: Self.network, accounts: try MultisigFixtures.accounts(for: testCase), adding: golden)
        let account = try #require(check.accounts.first)
        #expect(account.weight == 1 && account.isMet == false)
        #expect(account.weightWithNewSignature == 2 && account.isMetWithNewSignature == true && check.isNewSignatureUsed == true)
        #expect(check.lines.contains { $0.contains("with \(golden.accountID)'s signature: weight 2 of 2: enough") })
        // A key whose signature no needed account takes is warned about.
        let stranger = try PublicKey(accountID: MultisigFixtures.loaded.keys["Z"]!)
        let extra = firstCopy.signatureCheck(on: Self.network, accounts: try MultisigFixtures.accounts(for: testCase), adding: stranger)
        #expect(extra.isNewSignatureUsed == false && extra.warnings.contains { $0.hasPrefix("\(stranger.accountID)'s signature would not be used") })
    }

    /// A key that is not the source of anything is warned about (it may be signing a transaction it has no part
    /// in), unless the account JSON shows it to be a signer of a needed account whose check takes its signature.
    /// (Found by the docs review of issue 32: every multisig signer was told its key had no part.)
    @Test func aSignerOfTheSourceIsNotWarnedOfHavingNoPart() throws {
        let testCase = MultisigFixtures.named("payment")
        let firstCopy = try TransactionEnvelope(base64: testCase.copies[0].envelope)
        let accounts = try MultisigFixtures.accounts(for: testCase)
        func warns(_ key: String, accounts: [AccountSigners]?) throws -> Bool {
            let key = try PublicKey(accountID: MultisigFixtures.loaded.keys[key]!)
            return TransactionSummary(firstCopy, on: Self.network, signingAs: ("someone", key), accounts: accounts).warnings
                .contains { $0.hasPrefix("\(key.accountID) is neither the source") }
        }
        #expect(try !warns("B", accounts: accounts))
        #expect(try warns("B", accounts: nil), "without the account's JSON, nothing shows the key's part")
        #expect(try warns("Z", accounts: accounts), "a key no needed account takes")
    }

    @Test func aCopyOfAnotherTransactionIsNamed() throws {
        let payment = try TransactionEnvelope(base64: MultisigFixtures.named("payment").combined)
        let other = try TransactionEnvelope(base64: MultisigFixtures.named("set_options").combined)
        do {
            _ = try TransactionEnvelope.combining([("a.xdr", payment), ("b.xdr", other)], on: Self.network, knownSigners: [])
            Issue.record("combined two transactions")
        } catch let error as CombineError {
            guard case .differentTransaction(let copy, _, _, let feeBump) = error else { throw error }
            #expect(copy == "b.xdr" && !feeBump && error.message.contains("b.xdr"))
        }
        // Fee bumps whose inner transactions hold different signatures: said to be why.
        let bump = try TransactionEnvelope(base64: MultisigFixtures.named("fee_bump").combined)
        let otherBump = try TransactionEnvelope(base64: MultisigFixtures.loaded.feeBumpOtherInner)
        #expect(throws: CombineError.self) {
            try TransactionEnvelope.combining([("a", bump), ("b", otherBump)], on: Self.network, knownSigners: [])
        }
        do {
            _ = try TransactionEnvelope.combining([("a", bump), ("b", otherBump)], on: Self.network, knownSigners: [])
        } catch let error as CombineError {
            #expect(error.message.contains("inner transaction's signatures"))
        }
    }

    /// A signature with a known signer's hint that does not verify is dropped; one no known signer's hint
    /// matches is kept, unchecked.
    @Test func anInvalidSignatureOfAKnownSignerIsDropped() throws {
        let testCase = MultisigFixtures.named("payment")
        let first = try TransactionEnvelope(base64: testCase.copies[0].envelope)
        let tampered = try TransactionEnvelope(base64: MultisigFixtures.loaded.tamperedCopy)
        let golden = SignerKey.ed25519(try PublicKey(accountID: MultisigFixtures.loaded.keys["B"]!))
        let combined = try TransactionEnvelope.combining([("first", first), ("tampered", tampered)], on: Self.network, knownSigners: [golden])
        #expect(combined.base64 == testCase.copies[0].envelope)
        #expect(combined.dropped.map(\.copy) == ["tampered"] && combined.dropped.first?.signers == [golden.strKey])
        #expect(combined.notChecked.map(\.copy) == ["first"])
        #expect(combined.notes.count == 2 && combined.notes[0].hasPrefix("dropped signature 1 of tampered"))
        // Without B known, the tampered signature is kept, unchecked.
        let blind = try TransactionEnvelope.combining([("first", first), ("tampered", tampered)], on: Self.network, knownSigners: [])
        #expect(blind.kept.count == 2 && blind.notChecked.count == 2)
        // With B's copy, its valid signature is checked and kept.
        let valid = try TransactionEnvelope(base64: testCase.copies[1].envelope)
        let checked = try TransactionEnvelope.combining([("first", first), ("b", valid)], on: Self.network, knownSigners: [golden])
        #expect(checked.kept.map(\.signers) == [[], [golden.strKey]])
    }

    /// More different signatures than an envelope holds: refused, nothing combined.
    @Test func moreThanTwentySignaturesAreRefused() throws {
        let unsigned = try TransactionEnvelope(base64: MultisigFixtures.named("payment").unsigned)
        let copies = try (1...21).map { n -> (name: String, envelope: TransactionEnvelope) in
            let pair = try KeyPair(seed: SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: UInt8(n)) })
            return ("copy \(n)", try TransactionEnvelope(xdr: try unsigned.signed(by: pair, on: Self.network).envelope))
        }
        #expect(throws: CombineError.tooManySignatures(21)) {
            try TransactionEnvelope.combining(copies, on: Self.network, knownSigners: [])
        }
        #expect(try TransactionEnvelope.combining(Array(copies.prefix(20)), on: Self.network, knownSigners: []).kept.count == 20)
    }

    /// Each field of an account's JSON is checked: one line names the file and what is wrong.
    @Test func aBadAccountFileIsRefusedInOneLine() throws {
        let good = String(decoding: MultisigFixtures.accountJSON("G"), as: UTF8.self)
        let g = MultisigFixtures.loaded.keys["G"]!
        let signer = #"{"key":"\#(g)","weight":1,"type":"ed25519_public_key"}"#
        let cases: [(String, String)] = [
            (#"{"id":"\#(g)","id":"\#(g)","thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":[]}"#, "appears twice"),
            (#"{"id":"\#(g)","thresholds":{"low_threshold":"0","med_threshold":0,"high_threshold":0},"signers":[]}"#, "'thresholds.low_threshold' is a string, not an integer"),
            (#"{"id":"\#(g)","thresholds":{"low_threshold":256,"med_threshold":0,"high_threshold":0},"signers":[]}"#, "not between 0 and 255"),
            (#"{"id":"\#(g)","thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":{}}"#, "'signers' is an object, not an array"),
            (#"{"id":"\#(g)","thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":[\#(Array(repeating: signer, count: 22).joined(separator: ","))]}"#, "lists 22 signers"),
            (#"{"id":"\#(g)","thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":[\#(signer),\#(signer)]}"#, "listed twice"),
            (#"{"id":"\#(g)","thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":[{"key":"\#(g)","weight":1,"type":"sha256_hash"}]}"#, "not the kind of key"),
            (#"{"thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":[]}"#, "has no 'id'"),
            (#"{"id":"GABC","thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0},"signers":[]}"#, "'id' is not a valid key"),
        ]
        for (json, reason) in cases {
            do {
                _ = try AccountSigners(horizonJSON: Array(json.utf8), source: "bad.json")
                Issue.record("accepted: \(json)")
            } catch let error as AccountSignersError {
                #expect(error.message.contains(reason) && error.message.hasPrefix("The account JSON bad.json cannot be used"), "\(error.message)")
                #expect(!error.message.contains("\n"))
            }
        }
        #expect(try AccountSigners(horizonJSON: Array(good.utf8), source: "g.json").masterWeight == 1)
        #expect(throws: AccountSignersError.self) {
            try AccountSigners.read([("g.json", Array(good.utf8)), ("again.json", Array(good.utf8))])
        }
    }

    /// The thresholds reach the summary: its lines and warnings, and its JSON's `thresholds`.
    @Test func theSummaryShowsTheThresholds() throws {
        let testCase = MultisigFixtures.named("payment")
        let envelope = try TransactionEnvelope(base64: testCase.combined)
        let accounts = try MultisigFixtures.accounts(for: testCase)
        let summary = SigningSummary.transaction(envelope, on: Self.network, signingAs: nil, accounts: accounts)
        #expect(summary.text.contains { $0.hasPrefix("  authority   \(MultisigFixtures.loaded.keys["A"]!) as source, operation 1 (payment): medium threshold 2") })
        #expect(summary.text.contains { $0.hasPrefix("  !! signature 3 (hint ") && $0.contains("tx_bad_auth_extra") })
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any]
        let thresholds = try #require((json?["transaction"] as? [String: Any])?["thresholds"] as? [String: Any])
        #expect(thresholds["complete"] as? Bool == true && (thresholds["signatures"] as? [[String: Any]])?.count == 3)
        // Without accounts, nothing is said of thresholds; with none known, each account is unknown.
        #expect(!SigningSummary.transaction(envelope, on: Self.network, signingAs: nil).text.contains { $0.contains("authority") })
        let unknown = SigningSummary.transaction(envelope, on: Self.network, signingAs: nil, accounts: [])
        #expect(unknown.text.contains { $0.contains("unknown, no account JSON for it") })
    }

    /// stellar-core's levels for the operations the fixtures do not sign.
    @Test func thresholdLevels() throws {
        let fixtures = try Fixtures.load(TransactionFixtures.self, "tx-envelopes.json")
        var levels: [String: ThresholdLevel] = [:]
        for entry in fixtures.envelopes {
            guard case .v1(let transaction) = try TransactionEnvelope(base64: entry.envelope).decoded else { continue }
            for operation in transaction.operations {
                levels[SummaryText.operationName(operation)] = ThresholdLevel(operation.body)
            }
        }
        let low = ["bump_sequence", "claim_claimable_balance", "extend_footprint_ttl", "inflation", "restore_footprint", "allow_trust",
                   "set_trust_line_flags"]
        for name in low { #expect(levels[name] == .low, "\(name)") }
        #expect(levels["account_merge"] == .high && levels["payment"] == .medium && levels["invoke_host_function"] == .medium)
        #expect(levels["create_account"] == .medium && levels["clawback"] == .medium && levels["manage_data"] == .medium)
    }
}
