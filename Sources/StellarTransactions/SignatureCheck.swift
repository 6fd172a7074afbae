import StellarKeys

/// The threshold an operation needs of its source account (`OperationFrame::getThresholdLevel` and its
/// overrides in stellar-core, read at a9b8613218e141ddb89d621e5f04d4c75a149d36).
public enum ThresholdLevel: String, Sendable, Encodable, Comparable {
    case low, medium, high

    public static func < (a: ThresholdLevel, b: ThresholdLevel) -> Bool { a.order < b.order }
    private var order: Int { self == .low ? 0 : self == .medium ? 1 : 2 }

    /// Low: bump_sequence, claim_claimable_balance, extend_footprint_ttl, inflation, restore_footprint,
    /// allow_trust, set_trust_line_flags. High: account_merge, and set_options when it sets the master weight, a
    /// threshold or a signer (present at all, even unchanged). Medium: every other operation.
    init(_ body: XDR.OperationBody) {
        switch body {
        case .bumpSequenceOp, .claimClaimableBalanceOp, .extendFootprintTTLOp, .inflation, .restoreFootprintOp,
             .allowTrustOp, .setTrustLineFlagsOp:
            self = .low
        case .destination:
            self = .high
        case .setOptionsOp(let op):
            let changesAuthority = op.masterWeight != nil || op.lowThreshold != nil || op.medThreshold != nil
                || op.highThreshold != nil || op.signer != nil
            self = changesAuthority ? .high : .medium
        default:
            self = .medium
        }
    }
}

/// What the network's signature check would find in an envelope, worked out offline from the accounts' signers
/// and thresholds (`AccountSigners`), as stellar-core does it (read at stellar/stellar-core
/// a9b8613218e141ddb89d621e5f04d4c75a149d36):
///
/// - the accounts whose authority is needed: the source at its low threshold (`checkAllTransactionSignatures`),
///   the extra signers of its preconditions (each must sign: `checkExtraSigners`), then each operation's source
///   (muxed or not, its `G…`) at the operation's level (`checkOperationSignatures`); for a fee bump, the fee
///   source at its low threshold over the outer signatures, and the inner transaction as above over its own;
/// - each such check as `SignatureChecker::checkSignature`: the master key weighted by its weight when that is not
///   0, then the signers; pre-auth signers matching the hash count first, without a signature; then hash-x, then
///   Ed25519, then signed-payload signers, each signature taken by the first signer of that kind that accepts it
///   (which then takes no other), and the check stops as soon as the weight reaches the threshold. A threshold of 0
///   still needs one signer to match;
/// - a signature no check took ("used") makes the network refuse the transaction with `tx_bad_auth_extra`: one
///   that no needed account accepts, or one that came after the threshold was already met.
///
/// What it cannot know: whether the account JSON is current, whether an account exists (an operation's source
/// that does not is checked against its own key only), the ledger's protocol version, and stellar-core's budget of
/// 1000 Ed25519 verifications per transaction.
public struct SignatureCheck: Sendable, Encodable {
    /// Which signatures of an envelope: a fee bump has its own (`outer`) and its inner transaction's (`inner`).
    public enum Part: String, Sendable, Encodable {
        case transaction, outer, inner
    }

    /// One use of an account's authority.
    public struct Need: Sendable, Encodable {
        /// `source`, `fee source`, `operation 2 (set_options)`.
        public let what: String
        public let level: ThresholdLevel
    }

    public struct Signed: Sendable, Encodable {
        public let key: String
        public let type: String
        public let weight: UInt8
        public let isMaster: Bool
    }

    /// An account whose authority the transaction needs, and whether the signatures present give it.
    public struct Account: Sendable, Encodable {
        public let account: String
        public let part: Part
        public let needs: [Need]
        /// The highest level needed; `threshold` is the account's threshold at it (nil: no JSON for the account).
        public let level: ThresholdLevel
        public let threshold: UInt8?
        /// The weight of the valid signatures present (and pre-auth signers matching the hash), each signer once.
        public let weight: Int?
        public let signedBy: [Signed]
        /// Whether every check of this account passes; nil when unknown.
        public let isMet: Bool?
        /// With the signature about to be added: the weight, and whether every check passes.
        public let weightWithNewSignature: Int?
        public let isMetWithNewSignature: Bool?

        /// The source JSON was given for it.
        public var isKnown: Bool { threshold != nil }
    }

    /// A signer named by the transaction's preconditions (`extraSigners`), which must sign it.
    public struct ExtraSigner: Sendable, Encodable {
        public let key: String
        public let part: Part
        public let isSigned: Bool
    }

    /// What a key is to a needed account: one of its signers, the master key or another (by its JSON).
    public struct Role: Sendable, Encodable, Equatable {
        /// The signer's key (`G…`, or `X…`, `P…` for a hash-x or signed-payload signer).
        public let key: String
        public let account: String
        public let isMaster: Bool
    }

    /// A signature in the envelope, and whether a check takes it.
    public struct Signature: Sendable, Encodable {
        public let part: Part
        /// 1-based, in its list.
        public let index: Int
        public let hint: String
        /// Which needed accounts have a signer that accepts it (each once).
        public let acceptedBy: [String]
        /// The signer of each of those accounts that accepts it: whose key made it, and what it is to the account.
        public let roles: [Role]
        /// Whether the network's checks take it: false makes it refuse the transaction (`tx_bad_auth_extra`);
        /// nil when that cannot be told (an account it could belong to has no JSON).
        public let isUsed: Bool?
    }

    public let accounts: [Account]
    public let extraSigners: [ExtraSigner]
    public let signatures: [Signature]
    /// Whether a JSON was given for every account the transaction needs.
    public let isComplete: Bool
    /// The signature about to be added, by this key (on the outer transaction of a fee bump), if any; whether the
    /// envelope holds one by it already; and whether a check would take it.
    public let newSignatureBy: String?
    public let isNewSignatureUsed: Bool?
    /// What the key about to sign is to the needed accounts of the signatures it signs (the outer ones of a fee
    /// bump): each account whose JSON lists it as a signer, whether or not the envelope holds its signature already.
    /// Empty: none of them, or no key about to sign.
    public let signingKeyRoles: [Role]

    /// The signatures the network would refuse the transaction for.
    public var unused: [Signature] { signatures.filter { $0.isUsed == false } }

    private enum CodingKeys: String, CodingKey {
        case accounts, extraSigners, signatures, isComplete = "complete", newSignatureBy, isNewSignatureUsed = "newSignatureUsed", signingKeyRoles
    }
}

extension TransactionEnvelope {
    /// What the network's signature check would find, given the signers and thresholds of `accounts` (one for
    /// every needed account, for a complete answer). `adding`: a key about to sign, whose signature is counted
    /// as if appended (to the outer signatures of a fee bump), unless the envelope holds one by it already.
    package func signatureCheck(on network: StellarNetwork, accounts: [AccountSigners], adding key: PublicKey? = nil) -> SignatureCheck {
        var checks = SignatureCheckRun(accounts: accounts, signingKey: key)
        let newKey = key.flatMap { isSigned(by: $0, hash: hash(on: network)) ? nil : $0 }
        switch decoded {
        case .v0(let v0):
            checks.run(.transaction, hash: hash(on: network), signatures: signatures, newKey: newKey,
                       source: v0.sourceAccountEd25519.value, operations: v0.operations, extraSigners: [])
        case .v1(let v1):
            checks.run(.transaction, hash: hash(on: network), signatures: signatures, newKey: newKey,
                       source: SummaryText.ed25519(of: v1.sourceAccount), operations: v1.operations,
                       extraSigners: v1.cond.extraSigners)
        case .feeBump(let bump):
            checks.run(.outer, hash: hash(on: network), signatures: signatures, newKey: newKey,
                       feeSource: SummaryText.ed25519(of: bump.feeSource))
            guard case .v1(let inner) = bump.innerTx else { preconditionFailure("the decoder admits only v1 inner transactions") }
            checks.run(.inner, hash: innerHash(on: network), signatures: inner.signatures.map { ($0.hint.value, $0.signature.value) },
                       newKey: nil, source: SummaryText.ed25519(of: inner.tx.sourceAccount), operations: inner.tx.operations,
                       extraSigners: inner.tx.cond.extraSigners)
        }
        return checks.result(newKey: newKey)
    }

    /// The hash of a fee bump's inner transaction on `network`: what its own signatures sign.
    func innerHash(on network: StellarNetwork) -> [UInt8] {
        // The inner transaction's bytes: after the envelope type, the fee source, the fee and the inner type.
        var reader = XDRReader(bytes)
        let range: Range<Int>? = try? {
            _ = try XDR.EnvelopeType(xdr: &reader)
            _ = try XDR.MuxedAccount(xdr: &reader)
            _ = try reader.int64()
            _ = try reader.int32()
            let start = reader.offset
            _ = try XDR.Transaction(xdr: &reader)
            return start..<reader.offset
        }()
        guard let range else { preconditionFailure("a fee bump read once reads again") }
        return network.id.withUnsafeBytes { id in
            [UInt8]([0, 0, 0, 2]).withUnsafeBytes { tag in
                bytes.withUnsafeBytes { all in Sodium.sha256(parts: [id, tag, UnsafeRawBufferPointer(rebasing: all[range])]) }
            }
        }
    }
}

extension SummaryText {
    /// An operation's type as a summary names it (`payment`, `set_options`).
    static func operationName(_ operation: XDR.Operation) -> String {
        var elided: [Elision] = []
        return self.operation(operation, elided: &elided).type
    }
}

extension XDR.Preconditions {
    var extraSigners: [XDR.SignerKey] {
        if case .v2(let v2) = self { return v2.extraSigners }
        return []
    }
}

/// The checks of one envelope, run in stellar-core's order, each signature marked when a check takes it.
private struct SignatureCheckRun {
    let accounts: [AccountSigners]
    var results: [SignatureCheck.Account] = []
    var extraSigners: [SignatureCheck.ExtraSigner] = []
    var signatures: [SignatureCheck.Signature] = []
    var isComplete = true
    var isNewSignatureUsed: Bool?
    /// The key about to sign, and what it is to the needed accounts of the part it signs.
    let signingKey: PublicKey?
    var signingKeyRoles: [SignatureCheck.Role] = []

    init(accounts: [AccountSigners], signingKey: PublicKey?) {
        self.accounts = accounts
        self.signingKey = signingKey
    }

    /// One list of signatures over one hash, as one `SignatureChecker`.
    struct Checker {
        let hash: [UInt8]
        let signatures: [(hint: [UInt8], signature: [UInt8])]
        /// The key of a signature about to be added, last in the list: it verifies for that key only.
        let newKey: PublicKey?
        var used: [Bool]
        var verified: [Int: [SignerKey: Bool]] = [:]

        init(hash: [UInt8], signatures: [(hint: [UInt8], signature: [UInt8])], newKey: PublicKey?) {
            self.hash = hash
            self.signatures = signatures
            self.newKey = newKey
            used = Array(repeating: false, count: signatures.count + (newKey == nil ? 0 : 1))
        }

        var count: Int { used.count }

        mutating func accepts(_ index: Int, _ key: SignerKey) -> Bool {
            if index == signatures.count, let newKey { return key == .ed25519(newKey) }
            if let known = verified[index]?[key] { return known }
            let result = key.accepts(hint: signatures[index].hint, signature: signatures[index].signature, hash: hash)
            verified[index, default: [:]][key] = result
            return result
        }

        /// `SignatureChecker::checkSignature`, over the signatures up to `upTo` (the new one left out or not).
        mutating func check(_ signers: [AccountSigners.Signer], needed: Int, upTo limit: Int) -> Bool {
            var total = 0
            for signer in signers where signer.key.preAuthorizes(hash) {
                total += Int(signer.weight)
                if total >= needed { return true }
            }
            for kind in ["hash-x", "ed25519", "signed payload"] {
                var remaining = signers.filter { $0.key.kindName == kind }
                for index in 0..<limit {
                    guard let found = remaining.firstIndex(where: { accepts(index, $0.key) }) else { continue }
                    used[index] = true
                    total += Int(remaining[found].weight)
                    if total >= needed { return true }
                    remaining.remove(at: found)
                }
            }
            return false
        }

        /// Every signer with a valid signature present (or matching the hash, for pre-auth), each once.
        mutating func present(_ signers: [AccountSigners.Signer], upTo limit: Int) -> [AccountSigners.Signer] {
            signers.filter { signer in signer.key.preAuthorizes(hash) || (0..<limit).contains { accepts($0, signer.key) } }
        }
    }

    mutating func run(_ part: SignatureCheck.Part, hash: [UInt8], signatures given: [(hint: [UInt8], signature: [UInt8])],
                      newKey: PublicKey?, source: [UInt8], operations: [XDR.Operation], extraSigners extra: [XDR.SignerKey]) {
        var needs: [(account: [UInt8], need: SignatureCheck.Need)] = [(source, .init(what: "source", level: .low))]
        for (index, operation) in operations.enumerated() {
            let name = SummaryText.operationName(operation)
            needs.append((operation.sourceAccount.map(SummaryText.ed25519) ?? source,
                          .init(what: "operation \(index + 1) (\(name))", level: ThresholdLevel(operation.body))))
        }
        run(part, hash: hash, signatures: given, newKey: newKey, needs: needs, extraSigners: extra.compactMap { try? SignerKey($0) })
    }

    mutating func run(_ part: SignatureCheck.Part, hash: [UInt8], signatures given: [(hint: [UInt8], signature: [UInt8])],
                      newKey: PublicKey?, feeSource: [UInt8]) {
        run(part, hash: hash, signatures: given, newKey: newKey, needs: [(feeSource, .init(what: "fee source", level: .low))], extraSigners: [])
    }

    private mutating func run(_ part: SignatureCheck.Part, hash: [UInt8], signatures given: [(hint: [UInt8], signature: [UInt8])],
                              newKey: PublicKey?, needs: [(account: [UInt8], need: SignatureCheck.Need)], extraSigners extra: [SignerKey]) {
        // Two runs of the same checks: with the signatures present, and with the new one too (used only for what
        // it would bring: the envelope as it is decides which present signatures are used).
        var checker = Checker(hash: hash, signatures: given, newKey: newKey)
        var withNew = Checker(hash: hash, signatures: given, newKey: newKey)
        let present = given.count
        let accounts = self.accounts
        let accountOf: ([UInt8]) -> AccountSigners? = { raw in accounts.first { $0.account.rawRepresentation == raw } }
        // Each needed account once, in the order first needed.
        var order: [[UInt8]] = []
        for (account, _) in needs where !order.contains(account) { order.append(account) }
        var met: [[UInt8]: Bool] = [:], metWithNew: [[UInt8]: Bool] = [:]
        var partComplete = true
        func runCheck(_ account: [UInt8], _ level: ThresholdLevel) {
            guard let signers = accountOf(account) else { partComplete = false; return }
            let needed = Int(signers.threshold(level))
            let passed = checker.check(signers.checkedSigners, needed: needed, upTo: present)
            met[account] = (met[account] ?? true) && passed
            if newKey != nil {
                let passedWithNew = withNew.check(signers.checkedSigners, needed: needed, upTo: present + 1)
                metWithNew[account] = (metWithNew[account] ?? true) && passedWithNew
            }
        }
        // The source first, then the extra signers, then the operations: `checkAllTransactionSignatures`, then
        // `checkOperationSignatures`.
        runCheck(needs[0].account, needs[0].need.level)
        let extraWeighted = extra.map { AccountSigners.Signer(key: $0, weight: 1) }
        if !extraWeighted.isEmpty {
            _ = checker.check(extraWeighted, needed: extraWeighted.count, upTo: present)
            if newKey != nil { _ = withNew.check(extraWeighted, needed: extraWeighted.count, upTo: present + 1) }
            let signed = checker.present(extraWeighted, upTo: present)
            extraSigners += extra.map { key in .init(key: key.strKey, part: part, isSigned: signed.contains { $0.key == key }) }
        }
        for (account, need) in needs.dropFirst() { runCheck(account, need.level) }

        for account in order {
            let accountID = SummaryText.strKey(.accountID, account)
            let own = needs.filter { $0.account == account }.map(\.need)
            let level = own.map(\.level).max() ?? .low
            guard let signers = accountOf(account) else {
                results.append(.init(account: accountID, part: part, needs: own, level: level, threshold: nil, weight: nil, signedBy: [],
                                     isMet: nil, weightWithNewSignature: nil, isMetWithNewSignature: nil))
                continue
            }
            let found = checker.present(signers.checkedSigners, upTo: present)
            let weight = found.reduce(0) { $0 + Int($1.weight) }
            let withNewWeight = newKey.map { _ in withNew.present(signers.checkedSigners, upTo: present + 1).reduce(0) { $0 + Int($1.weight) } }
            results.append(.init(
                account: accountID, part: part, needs: own, level: level, threshold: signers.threshold(level), weight: weight,
                signedBy: found.map { .init(key: $0.key.strKey, type: $0.key.kindName, weight: $0.weight, isMaster: $0.key == .ed25519(signers.account)) },
                isMet: met[account], weightWithNewSignature: withNewWeight, isMetWithNewSignature: newKey == nil ? nil : metWithNew[account]))
        }
        if !partComplete { isComplete = false }
        func role(_ signer: AccountSigners.Signer, of account: AccountSigners) -> SignatureCheck.Role {
            .init(key: signer.key.strKey, account: account.account.accountID, isMaster: signer.key == .ed25519(account.account))
        }
        for index in 0..<present {
            let roles = order.compactMap(accountOf).compactMap { account in
                account.checkedSigners.first { checker.accepts(index, $0.key) }.map { role($0, of: account) }
            }
            let isUsed: Bool? = checker.used[index] ? true : partComplete ? false : nil
            signatures.append(.init(part: part, index: index + 1, hint: Hex.string(given[index].hint), acceptedBy: roles.map(\.account),
                                    roles: roles, isUsed: isUsed))
        }
        // The new signature goes to this part's list (the outer one of a fee bump): the inner part is not its.
        if part != .inner, let signingKey {
            signingKeyRoles += order.compactMap(accountOf).compactMap { account in
                account.checkedSigners.first { $0.key == .ed25519(signingKey) }.map { role($0, of: account) }
            }
        }
        if newKey != nil { isNewSignatureUsed = withNew.used[present] ? true : partComplete ? false : nil }
    }

    func result(newKey: PublicKey?) -> SignatureCheck {
        SignatureCheck(accounts: results, extraSigners: extraSigners, signatures: signatures, isComplete: isComplete,
                       newSignatureBy: newKey?.accountID, isNewSignatureUsed: isNewSignatureUsed, signingKeyRoles: signingKeyRoles)
    }
}
