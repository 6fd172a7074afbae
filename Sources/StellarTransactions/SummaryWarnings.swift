import FoundationEssentials
import StellarKeys

/// What a person must not miss in a transaction (`TransactionSummary.warnings`): time bounds already past or not
/// yet reached, changes that hand an account to other keys, and an account merged away.
extension SummaryText {
    /// The key behind an account, muxed or not.
    static func ed25519(of account: XDR.MuxedAccount) -> [UInt8] {
        switch account {
        case .ed25519(let raw): raw.value
        case .med25519(let muxed): muxed.ed25519.value
        }
    }

    /// The lines `TransactionSummary.warnings` holds, but the one about the signer.
    static func warnings(_ transaction: XDR.Transaction, now: Date) -> [String] {
        var warnings: [String] = []
        let timeBounds: XDR.TimeBounds? = switch transaction.cond {
        case .timeBounds(let bounds): bounds
        case .v2(let v2): v2.timeBounds
        case .none: nil
        }
        let seconds = UInt64(max(0, now.timeIntervalSince1970))
        if let timeBounds, timeBounds.maxTime != 0, timeBounds.maxTime < seconds {
            warnings.append("EXPIRED: its time bounds ended at \(time(timeBounds.maxTime)), before now by this machine's clock; the network will refuse it")
        }
        if let timeBounds, timeBounds.minTime > seconds {
            warnings.append("NOT YET VALID: its time bounds start at \(time(timeBounds.minTime)), after now by this machine's clock")
        }
        for (index, operation) in transaction.operations.enumerated() {
            let number = "operation \(index + 1)"
            let account = operation.sourceAccount.map(muxed) ?? muxed(transaction.sourceAccount)
            switch operation.body {
            case .setOptionsOp(let op):
                if op.masterWeight == 0 {
                    warnings.append("\(number) sets the master key's weight of \(account) to 0: its own key can no longer sign for it")
                }
                if op.lowThreshold != nil || op.medThreshold != nil || op.highThreshold != nil {
                    let set = [("low", op.lowThreshold), ("medium", op.medThreshold), ("high", op.highThreshold)]
                        .compactMap { name, value in value.map { "\(name) \($0)" } }.joined(separator: ", ")
                    warnings.append("\(number) changes the signature thresholds of \(account): \(set)")
                }
                if let signer = op.signer, signer.weight > 0 {
                    warnings.append("\(number) adds \(signerKey(signer.key)) as a signer of \(account), with weight \(signer.weight): it can then sign for it")
                }
            case .invokeHostFunctionOp(let op):
                for (entry, authorization) in op.auth.enumerated() {
                    if case .sourceAccount = authorization.credentials { continue }
                    if !ContractCallText.isStrict(authorization, for: op.hostFunction) {
                        warnings.append("\(number)'s authorization \(entry + 1) is not strict: its root is not this call, so its signature could serve another transaction that contains it")
                    }
                }
            case .destination(let destination):
                warnings.append("\(number) merges \(account) away: the account is deleted and all its XLM goes to \(muxed(destination))")
            default:
                break
            }
        }
        return warnings
    }
}
