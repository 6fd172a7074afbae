#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a transaction envelope asks for, in words a person can check before signing it: the network and hash,
/// the source, fee, sequence number, preconditions, memo and signatures, and every operation with its key fields.
/// Text from the envelope (memos, data names, asset codes, strings) is escaped: a signer must never sign bytes it
/// cannot read, nor show a summary that the envelope's own bytes could rewrite on the terminal.
///
/// It does not show: Soroban argument values (only their number), the authorisation trees below their count, the
/// footprint's ledger keys (only their number), or anything a ledger would need to be consulted for (balances,
/// whether accounts exist, what a contract function does).
public struct TransactionSummary: Sendable, Encodable {
    public struct Operation: Sendable, Encodable {
        /// The XDR operation type, e.g. `PAYMENT`.
        public let type: String
        /// The operation's own source account, when it has one.
        public let source: String?
        /// The operation's key fields, by name, in the order shown.
        public let fields: [Field]
    }

    public struct Field: Sendable, Encodable {
        public let name: String
        public let value: String
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

    public init(_ envelope: TransactionEnvelope, on network: StellarNetwork) {
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
        operations = transaction.operations.map(SummaryText.operation)
    }

    /// The summary as lines of text for a terminal.
    public var lines: [String] {
        var lines = ["Transaction on \(network == "custom" ? "a custom network" : network) (\"\(SummaryText.text(networkPassphrase))\")"]
        func add(_ name: String, _ value: String) { lines.append("  " + padded(name, 12) + value) }
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
            lines.append("  \(index + 1). \(operation.type.lowercased())" + (operation.source.map { " (source \($0))" } ?? ""))
            for field in operation.fields {
                lines.append("       " + padded(field.name, 18) + field.value)
            }
        }
        return lines
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
