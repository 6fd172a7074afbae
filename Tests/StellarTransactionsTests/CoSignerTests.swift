import Testing
@testable import StellarKeys
@testable import StellarTransactions

/// A co-signer: a key that is one of a needed account's signers (by its account JSON), not the source of
/// anything. fixtures/multisig.json's `payment`: account A, its master key and B and C weighted 1, medium
/// threshold 2; A and B reach it, so C's signature comes after it was met and is extra (tx_bad_auth_extra).
@Suite struct CoSignerTests {
    static let network = try! StellarNetwork(named: "testnet")
    static let keys = MultisigFixtures.loaded.keys
    static let testCase = MultisigFixtures.named("payment")

    static func key(_ name: String) throws -> PublicKey { try PublicKey(accountID: keys[name]!) }

    /// The payment signed by A and B: medium threshold 2 met.
    static func signedByAAndB() throws -> TransactionEnvelope {
        let copies = try testCase.copies.prefix(2).enumerated().map { ("copy \($0.offset + 1)", try TransactionEnvelope(base64: $0.element.envelope)) }
        return try TransactionEnvelope(xdr: try TransactionEnvelope.combining(copies, on: network, knownSigners: []).envelope)
    }

    /// C is a signer of A: it is not told it has no part, and the warning that its signature would be extra
    /// says why (A's threshold is met without it), naming A.
    @Test func aSignerAfterTheThresholdIsToldWhyItsSignatureIsExtra() throws {
        let carol = try Self.key("C"), account = Self.keys["A"]!
        let summary = TransactionSummary(try Self.signedByAAndB(), on: Self.network, signingAs: ("carol", carol),
                                         accounts: try MultisigFixtures.accounts(for: Self.testCase))
        #expect(!summary.warnings.contains { $0.contains("is neither the source") }, "\(summary.warnings)")
        let check = try #require(summary.thresholds)
        #expect(check.isNewSignatureUsed == false)
        #expect(check.signingKeyRoles.map(\.account) == [account] && check.signingKeyRoles.map(\.key) == [carol.accountID])
        #expect(summary.warnings.contains(
            "\(carol.accountID)'s signature would not be used: \(carol.accountID) is a signer of \(account), whose threshold is met without it, "
                + "so the network would refuse the transaction (tx_bad_auth_extra)"), "\(summary.warnings)")
        #expect(!summary.warnings.contains { $0.contains("no account this transaction needs takes it") })
        // The authority line agrees: enough without it.
        #expect(check.lines.contains { $0.hasSuffix("with \(carol.accountID)'s signature: weight 3 of 2: enough without it, so it would be extra") },
                "\(check.lines)")
        // A key that is no needed account's signer keeps both warnings as they were.
        let stranger = try Self.key("Z")
        let other = TransactionSummary(try Self.signedByAAndB(), on: Self.network, signingAs: ("z", stranger),
                                       accounts: try MultisigFixtures.accounts(for: Self.testCase))
        #expect(other.warnings.contains { $0.hasPrefix("\(stranger.accountID) is neither the source") })
        #expect(other.warnings.contains { $0.hasPrefix("\(stranger.accountID)'s signature would not be used: no account this transaction needs takes it") })
        // Its signature there already (nothing new to add): still a signer of A, not a stranger to the transaction.
        let signed = TransactionSummary(try TransactionEnvelope(base64: Self.testCase.combined), on: Self.network, signingAs: ("carol", carol),
                                        accounts: try MultisigFixtures.accounts(for: Self.testCase))
        #expect(signed.thresholds?.newSignatureBy == nil && signed.thresholds?.signingKeyRoles.map(\.account) == [account])
        #expect(!signed.warnings.contains { $0.contains("is neither the source") }, "\(signed.warnings)")
    }

    /// A precondition's extra signer (K) is no account's signer, but its signature is used: no "no part" warning.
    @Test func anExtraSignerOfThePreconditionsIsNotWarnedOfHavingNoPart() throws {
        let testCase = MultisigFixtures.named("extra_signer")
        let k = try Self.key("K")
        let first = try TransactionEnvelope(base64: testCase.copies[0].envelope)
        let summary = TransactionSummary(first, on: Self.network, signingAs: ("k", k), accounts: try MultisigFixtures.accounts(for: testCase))
        #expect(summary.thresholds?.isNewSignatureUsed == true && summary.thresholds?.signingKeyRoles.isEmpty == true)
        #expect(!summary.warnings.contains { $0.contains("is neither the source") }, "\(summary.warnings)")
    }

    /// Trimming would remove the signature about to be made: refused before it is made, saying whose and why.
    @Test func trimmingRefusesWhenItWouldRemoveTheNewSignature() throws {
        let carol = try Self.key("C"), account = Self.keys["A"]!
        let accounts = try MultisigFixtures.accounts(for: Self.testCase)
        let check = try Self.signedByAAndB().signatureCheck(on: Self.network, accounts: accounts, adding: carol)
        #expect(throws: TrimError.newSignatureExtra(key: carol.accountID, roles: check.signingKeyRoles)) { try check.checkTrimmable() }
        let message = TrimError.newSignatureExtra(key: carol.accountID, roles: check.signingKeyRoles).message
        #expect(message == "\(carol.accountID)'s signature would be removed as extra: \(carol.accountID) is a signer of \(account), "
                + "whose threshold is met without it; nothing was signed.")
        // A signature that counts is kept: no refusal.
        let first = try TransactionEnvelope(base64: Self.testCase.copies[0].envelope)
        try first.signatureCheck(on: Self.network, accounts: accounts, adding: carol).checkTrimmable()
        // A key no needed account takes: refused, saying so.
        let stranger = try Self.key("Z")
        #expect(throws: TrimError.newSignatureExtra(key: stranger.accountID, roles: [])) {
            try first.signatureCheck(on: Self.network, accounts: accounts, adding: stranger).checkTrimmable()
        }
        #expect(TrimError.newSignatureExtra(key: stranger.accountID, roles: []).message.contains("no account this transaction needs takes it"))
    }

    /// An unused signature is named by the signer whose key made it, and its role: C is a signer of A, not A.
    @Test func anUnusedSignatureIsNamedByItsSigner() throws {
        let combined = try TransactionEnvelope(base64: Self.testCase.combined)
        let accounts = try MultisigFixtures.accounts(for: Self.testCase)
        let check = combined.signatureCheck(on: Self.network, accounts: accounts)
        let carol = Self.keys["C"]!, account = Self.keys["A"]!
        let unused = try #require(check.unused.first)
        #expect(unused.roles.map(\.key) == [carol] && unused.roles.map(\.account) == [account] && unused.roles.map(\.isMaster) == [false])
        let warning = try #require(check.warnings.first)
        #expect(warning == "signature 3 (hint \(unused.hint)) is by \(carol), a signer of \(account), but not used: the threshold of \(account) was met "
                + "before it was reached (by the signatures before it, or a pre-auth signer), so the network would refuse the transaction (tx_bad_auth_extra)")
        #expect(!warning.contains("\(account)'s"), "it does not read as the account's own")
        // The master key's signature is the account's own.
        let used = check.signatures.first { $0.index == 1 }
        #expect(used?.roles.map(\.isMaster) == [true] && used?.roles.map(\.key) == [account])
        // Trimming says whose signature it removed.
        let trimmed = try combined.trimmed(on: Self.network, accounts: accounts)
        #expect(trimmed.notes == ["removed signature 3 (hint \(unused.hint)) by \(carol), a signer of \(account): not used, the threshold of \(account) was met before it was reached"])
    }
}
