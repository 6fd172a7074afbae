import FoundationEssentials
import StellarKeys
import StellarText

/// What a transaction envelope asks for, in words a person can check before signing it: the network and hash,
/// the source, fee, sequence number, preconditions, memo and signatures, and every operation with its key fields.
/// Text from the envelope (memos, data names, asset codes, strings) is quoted so that no two different values look
/// alike (`SummaryText.quoted`): a signer must never sign bytes it cannot read, nor show a summary that the
/// envelope's own bytes could rewrite on the terminal. What a person must not miss comes first, as `warnings`.
///
/// It does not show: the footprint's ledger keys (only their number), or anything a ledger would need to be
/// consulted for (balances, whether accounts exist, what a contract function does). Soroban values and invocation
/// trees are shown within bounds; what a bound leaves out is counted and hashed in a warning of its own.
///
/// `SigningSummary.transaction` is how a person is shown it; this is its structured part (and its JSON).
public struct TransactionSummary: Sendable, Encodable {
    public struct Operation: Sendable, Encodable {
        /// The XDR operation type in lower case, e.g. `payment`, `set_options`.
        public let type: String
        /// The operation's own source account, when it has one.
        public let source: String?
        /// The operation's key fields, by name, in the order shown.
        public let fields: [Field]
    }

    public struct Field: Sendable, Encodable {
        public let name: String
        public let value: Value
    }

    /// A field's value, typed for JSON and rendered for a terminal.
    public enum Value: Sendable, Equatable, Encodable, CustomStringConvertible {
        /// Written by keystore (an address, an amount and its asset): shown as it is.
        case plain(String)
        /// Text from the envelope: quoted and escaped on a terminal (`SummaryText.quoted`); in JSON the string
        /// itself, or `(not UTF-8) ` and its hex where the bytes are not UTF-8.
        case text([UInt8])
        /// A number of things.
        case count(Int)
        /// A value with parts (a Soroban value, an authorization entry): as text on a terminal, as typed JSON.
        case typed(String, JSONTree)

        /// As a terminal shows it.
        public var description: String {
            switch self {
            case .plain(let text): text
            case .text(let bytes): SummaryText.quoted(bytes)
            case .count(let count): String(count)
            case .typed(let text, _): text
            }
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .plain(let text): try container.encode(text)
            case .text(let bytes):
                if let text = String(validating: bytes, as: UTF8.self) {
                    try container.encode(text)
                } else {
                    try container.encode("(not UTF-8) " + Hex.string(bytes))
                }
            case .count(let count): try container.encode(count)
            case .typed(_, let tree): try container.encode(tree)
            }
        }
    }

    public struct FeeBump: Sendable, Encodable {
        public let feeSource: String
        public let fee: Int64
        public let feeXLM: String
        public let innerSignatures: Int
    }

    public struct Soroban: Sendable, Encodable {
        public let resourceFee: Int64
        public let resourceFeeXLM: String
        public let instructions: UInt32
        public let diskReadBytes: UInt32
        public let writeBytes: UInt32
        public let readOnlyEntries: Int
        public let readWriteEntries: Int
    }

    public let network: String
    public let networkPassphrase: String
    public let hash: String
    public let envelopeType: String
    public let source: String
    public let fee: Int64
    public let feeXLM: String
    public let sequence: Int64
    public let conditions: [String]
    public let memo: String?
    public let signatures: Int
    public let feeBump: FeeBump?
    public let soroban: Soroban?
    public let operations: [Operation]
    /// Who is about to sign: `NAME (G…)`; nil where no key is involved (a transaction only shown).
    public let signer: String?
    /// What a person must not miss, each one line: time bounds already past or not yet reached (by the local
    /// clock), a master key weighted 0, thresholds changed, a signer added, an account merged away, a signing
    /// key that is neither the source, the fee source, nor any operation's source (nor, by `accounts`, a signer of
    /// an account the transaction needs), and then what a bound left out of a Soroban value or invocation tree (how
    /// much, and its SHA-256); then the signatures the network would refuse the transaction for (`thresholds`).
    public let warnings: [String]
    /// What the bounds on Soroban values and invocation trees left out.
    let elisions: [Elision]
    /// Whether the signatures present meet the thresholds of the accounts the transaction needs, when their
    /// signers were given (`accounts`); nil when they were not asked about.
    public let thresholds: SignatureCheck?

    private enum CodingKeys: String, CodingKey {
        case network, networkPassphrase, hash, envelopeType, source, fee, feeXLM, sequence, conditions, memo, signatures, feeBump,
             soroban, operations, signer, warnings, thresholds
    }

    /// `signingAs`: the identity about to sign, by name and key, so that the summary names it and says when it
    /// has no part in the transaction. `now`: the time bounds are judged against it. `accounts`: the signers and
    /// thresholds known (none: all unknown, which is said), for `thresholds`; nil: thresholds are not shown.
    public init(_ envelope: TransactionEnvelope, on network: StellarNetwork, signingAs identity: (name: String, key: PublicKey)? = nil,
                now: Date = Date(), accounts: [AccountSigners]? = nil) {
        self.network = network.name ?? "custom"
        networkPassphrase = network.passphrase
        hash = Hex.string(envelope.hash(on: network))
        envelopeType = envelope.kind.rawValue
        signatures = envelope.signatures.count
        let transaction: XDR.Transaction
        switch envelope.decoded {
        case .v0(let v0):
            transaction = Self.asV1(v0)
            feeBump = nil
        case .v1(let v1):
            transaction = v1
            feeBump = nil
        case .feeBump(let bump):
            guard case .v1(let inner) = bump.innerTx else { preconditionFailure("the decoder admits only v1 inner transactions") }
            transaction = inner.tx
            feeBump = FeeBump(feeSource: SummaryText.muxed(bump.feeSource), fee: bump.fee, feeXLM: SummaryText.amount(bump.fee),
                              innerSignatures: inner.signatures.count)
        }
        source = SummaryText.muxed(transaction.sourceAccount)
        fee = Int64(transaction.fee)
        feeXLM = SummaryText.amount(Int64(transaction.fee))
        sequence = transaction.seqNum
        conditions = SummaryText.conditions(transaction.cond)
        memo = SummaryText.memo(transaction.memo)
        if case .sorobanData(let data) = transaction.ext {
            soroban = Soroban(
                resourceFee: data.resourceFee, resourceFeeXLM: SummaryText.amount(data.resourceFee),
                instructions: data.resources.instructions, diskReadBytes: data.resources.diskReadBytes,
                writeBytes: data.resources.writeBytes, readOnlyEntries: data.resources.footprint.readOnly.count,
                readWriteEntries: data.resources.footprint.readWrite.count)
        } else {
            soroban = nil
        }
        var elisions: [Elision] = []
        operations = transaction.operations.enumerated().map { index, operation in
            var found: [Elision] = []
            defer { elisions += found.map { $0.at("operation \(index + 1)") } }
            return SummaryText.operation(operation, elided: &found)
        }
        self.elisions = elisions
        signer = identity.map { "\(SummaryText.quotedIfNeeded($0.name)) (\($0.key.accountID))" }
        var sources = [SummaryText.ed25519(of: transaction.sourceAccount)] + transaction.operations.compactMap { $0.sourceAccount.map(SummaryText.ed25519) }
        if case .feeBump(let bump) = envelope.decoded { sources.append(SummaryText.ed25519(of: bump.feeSource)) }
        let check = accounts.map { envelope.signatureCheck(on: network, accounts: $0, adding: identity?.key) }
        thresholds = check
        warnings = SummaryText.warnings(transaction, now: now)
            + (identity.map { identity in
                // One of a needed account's signers (the account JSON says so) has its part in the transaction,
                // even where its signature would be extra (`check.warnings` then says why); so has a key whose
                // signature a check takes (an extra signer of the preconditions).
                sources.contains(identity.key.rawRepresentation) || check?.signingKeyRoles.isEmpty == false
                    || check?.isNewSignatureUsed == true ? [] : [
                    "\(identity.key.accountID) is neither the source, the fee source, nor any operation's source: check that this is the transaction you meant it to sign"]
            } ?? [])
            + Elision.warnings(elisions)
            + (check?.warnings ?? [])
    }

    /// The summary as lines of text for a terminal: `SigningSummary.text` of it.
    public var lines: [String] {
        SigningSummary.text(title: title, warnings: warnings, lines: body).text
    }

    /// The first line: the network, and its passphrase quoted.
    var title: String {
        "Transaction on \(network == "custom" ? "a custom network" : network) (\(SummaryText.quoted(networkPassphrase)))"
    }

    /// The lines after the title and the warnings.
    var body: [String] {
        var lines: [String] = []
        func add(_ name: String, _ value: String) { lines.append("  " + padded(name, 12) + value) }
        if let signer { add("signer", signer) }
        add("hash", hash)
        add("envelope", envelopeType == "fee-bump" ? "fee bump of a v1 transaction" : "\(envelopeType) transaction")
        if let feeBump {
            add("fee source", feeBump.feeSource)
            add("total fee", "\(feeBump.fee) stroops (\(feeBump.feeXLM) XLM), paid by the fee source")
        }
        add("source", source)
        add("fee", "\(fee) stroops (\(feeXLM) XLM)" + (feeBump == nil ? "" : " (the inner transaction's)"))
        add("sequence", String(sequence))
        add("conditions", conditions.isEmpty ? "none" : conditions.joined(separator: "; "))
        add("memo", memo ?? "none")
        add("signatures", "\(signatures) already" + (feeBump.map { "; the inner transaction has \($0.innerSignatures)" } ?? ""))
        if let soroban {
            add("soroban", "resource fee \(soroban.resourceFee) stroops (\(soroban.resourceFeeXLM) XLM), \(soroban.instructions) instructions, "
                + "\(soroban.diskReadBytes) bytes read, \(soroban.writeBytes) written, footprint \(soroban.readOnlyEntries) read-only "
                + "and \(soroban.readWriteEntries) read-write entries")
        }
        add("operations", String(operations.count))
        for (index, operation) in operations.enumerated() {
            lines.append("  \(index + 1). \(operation.type)" + (operation.source.map { " (source \($0))" } ?? ""))
            for field in operation.fields {
                lines.append("       " + padded(field.name, 18) + field.value.description)
            }
        }
        return lines + (thresholds?.lines ?? [])
    }

    private func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(width - text.count, 1))
    }

    /// A v0 transaction as the v1 transaction the protocol treats it as.
    private static func asV1(_ v0: XDR.TransactionV0) -> XDR.Transaction {
        XDR.Transaction(
            sourceAccount: .ed25519(v0.sourceAccountEd25519), fee: v0.fee, seqNum: v0.seqNum,
            cond: v0.timeBounds.map { .timeBounds($0) } ?? .none, memo: v0.memo, operations: v0.operations, ext: .v0)
    }
}

extension XDR.Transaction {
    init(sourceAccount: XDR.MuxedAccount, fee: UInt32, seqNum: Int64, cond: XDR.Preconditions, memo: XDR.Memo,
         operations: [XDR.Operation], ext: XDR.TransactionExt) {
        self.sourceAccount = sourceAccount
        self.fee = fee
        self.seqNum = seqNum
        self.cond = cond
        self.memo = memo
        self.operations = operations
        self.ext = ext
    }
}
