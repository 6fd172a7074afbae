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
                // Met already, and this key one of its signers, yet its signature unused: met without it.
                let extra = isMet && isNewSignatureUsed == false && signingKeyRoles.contains { $0.account == account.account }
                lines.append(indent + "with \(newKey)'s signature: weight \(newWeight) of \(threshold): "
                             + Self.verdict(newMet, weight: newWeight, threshold: threshold) + (extra ? " without it, so it would be extra" : ""))
            }
        }
        for extra in extraSigners {
            let part = extra.part == .transaction ? "" : " (\(extra.part.rawValue) signatures)"
            lines.append("  extra signer \(extra.key)\(part): " + (extra.isSigned ? "signed" : "not signed; the preconditions require it"))
        }
        return lines
    }

    /// What a person must not miss: each signature the network would refuse the transaction for
    /// (`tx_bad_auth_extra`), by whose key and what it is to the account, and a signature about to be added that
    /// would be one, and why.
    public var warnings: [String] {
        var warnings: [String] = unused.map { signature in
            let name = (signature.part == .transaction ? "" : "\(signature.part.rawValue) ") + "signature \(signature.index) (hint \(signature.hint))"
            let why = signature.roles.isEmpty
                ? "is accepted by no account this transaction needs"
                : "is by " + Self.signers(signature.roles) + ", but not used: the threshold" + Self.of(signature.acceptedBy)
                    + " met before it was reached (by the signatures before it, or a pre-auth signer)"
            return name + " " + why + ", so the network would refuse the transaction (tx_bad_auth_extra)"
        }
        if let key = newSignatureBy, isNewSignatureUsed == false {
            warnings.append("\(key)'s signature would not be used: " + Self.whyExtra(key, roles: signingKeyRoles)
                            + ", so the network would refuse the transaction (tx_bad_auth_extra)")
        }
        return warnings
    }

    /// Why a new signature by `key` would not be used, given what the key is to the needed accounts (`roles`): no
    /// needed account takes it, or the thresholds of those it is a signer of are met without it (a check stops
    /// at its threshold, and takes each signer once).
    static func whyExtra(_ key: String, roles: [Role]) -> String {
        guard !roles.isEmpty else { return "no account this transaction needs takes it" }
        return "\(key) is " + roles.map(role).joined(separator: " and ") + (roles.count == 1 ? ", whose threshold is" : ", whose thresholds are")
            + " met without it"
    }

    /// `G…C, a signer of G…A`; `G…A, the master key of G…A and a signer of G…E`: each key once, with its roles.
    static func signers(_ roles: [Role]) -> String {
        var keys: [String] = []
        for role in roles where !keys.contains(role.key) { keys.append(role.key) }
        return keys.map { key in key + ", " + roles.filter { $0.key == key }.map(role).joined(separator: " and ") }.joined(separator: "; ")
    }

    /// ` of G…A was`, ` of G…A and G…E were`.
    static func of(_ accounts: [String]) -> String {
        (accounts.count == 1 ? "" : "s") + " of " + accounts.joined(separator: " and ") + (accounts.count == 1 ? " was" : " were")
    }

    private static func role(_ role: Role) -> String {
        (role.isMaster ? "the master key of " : "a signer of ") + role.account
    }

    private static func verdict(_ isMet: Bool, weight: Int, threshold: UInt8) -> String {
        if isMet { return "enough" }
        if weight >= Int(threshold) { return "not enough (even a threshold of 0 needs one of its signers)" }
        return "\(Int(threshold) - weight) more needed"
    }
}
