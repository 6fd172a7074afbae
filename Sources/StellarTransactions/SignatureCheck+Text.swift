extension SignatureCheck {
    /// For each needed account: what it is needed for and the threshold; the weight signed and by whom, and what
    /// is missing; with a key about to sign, what its signature brings. Then the extra signers. Lines of a
    /// summary's body (`TransactionSummary`), the same wherever they are shown.
    public var lines: [String] {
        var lines: [String] = []
        let indent = String(repeating: " ", count: 16)
        for account in accounts {
            let part = account.part == .transaction ? "" : " (\(account.part.rawValue) signatures)"
            let head = "  authority   \(account.account) as " + account.needs.map(\.what).joined(separator: ", ") + part + ": "
            guard let threshold = account.threshold, let weight = account.weight, let isMet = account.isMet else {
                lines.append(head + "unknown, no account JSON for it (its threshold, and which signatures are extra, cannot be told)")
                continue
            }
            lines.append(head + "\(account.level.rawValue) threshold \(threshold)")
            let by = account.signedBy.isEmpty ? "no valid signature of its signers"
                : "signed by " + account.signedBy.map { signer in
                    "\(signer.key) (" + (signer.isMaster ? "master key, " : signer.type == "ed25519" ? "" : signer.type + ", ")
                        + "weight \(signer.weight))"
                }.joined(separator: ", ")
            lines.append(indent + by + "; weight \(weight) of \(threshold): " + Self.verdict(isMet, weight: weight, threshold: threshold))
            if let newKey = newSignatureBy, account.part != .inner, let newWeight = account.weightWithNewSignature,
               let newMet = account.isMetWithNewSignature {
                lines.append(indent + "with \(newKey)'s signature: weight \(newWeight) of \(threshold): "
                             + Self.verdict(newMet, weight: newWeight, threshold: threshold))
            }
        }
        for extra in extraSigners {
            let part = extra.part == .transaction ? "" : " (\(extra.part.rawValue) signatures)"
            lines.append("  extra signer \(extra.key)\(part): " + (extra.isSigned ? "signed" : "not signed; the preconditions require it"))
        }
        return lines
    }

    /// What a person must not miss: each signature the network would refuse the transaction for
    /// (`tx_bad_auth_extra`), and a signature about to be added that would be one.
    public var warnings: [String] {
        var warnings: [String] = unused.map { signature in
            let name = (signature.part == .transaction ? "" : "\(signature.part.rawValue) ") + "signature \(signature.index) (hint \(signature.hint))"
            let why = signature.acceptedBy.isEmpty
                ? "is accepted by no account this transaction needs"
                : "is " + signature.acceptedBy.joined(separator: " and ") + "'s, but not used: the threshold was met before it was reached (by the signatures before it, or a pre-auth signer)"
            return name + " " + why + ", so the network would refuse the transaction (tx_bad_auth_extra)"
        }
        if let key = newSignatureBy, isNewSignatureUsed == false {
            warnings.append("\(key)'s signature would not be used (no account this transaction needs takes it), so the network would refuse the transaction (tx_bad_auth_extra)")
        }
        return warnings
    }

    private static func verdict(_ isMet: Bool, weight: Int, threshold: UInt8) -> String {
        if isMet { return "enough" }
        if weight >= Int(threshold) { return "not enough (even a threshold of 0 needs one of its signers)" }
        return "\(Int(threshold) - weight) more needed"
    }
}
