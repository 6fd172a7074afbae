import StellarKeys

extension AuthorizationAccount {
    /// The account a key signs for, named by its parts as a person gives them: a Stellar account (`G…`) that lists
    /// the key as a signer, or a contract account (`C…`); with a `verifier` or `contextRuleIDs`, an OpenZeppelin
    /// smart account whose External(verifier, key) signer the key is, for those rules. An address that is neither a
    /// `G…` account nor a contract is taken for a contract, and refused when a signer is made for it
    /// (`AuthorizationError.notAContract`); rules without their verifier, or the reverse, are refused
    /// (`SmartAccountError`).
    public init(address: String, verifier: String? = nil, contextRuleIDs: [UInt32]? = nil) throws {
        if verifier == nil, contextRuleIDs == nil, (try? StrKey(address))?.kind == .accountID {
            self = .multisigAccount(address)
        } else {
            try self.init(contract: address, verifier: verifier, contextRuleIDs: contextRuleIDs)
        }
    }

    /// A contract account (`C…`), as a contract account signs in (SEP-45): with a `verifier` or `contextRuleIDs`,
    /// an OpenZeppelin smart account; else one whose `__check_auth` reads the account convention. A `G…` address
    /// is not taken for another Stellar account here: it is refused when a signer is made for it.
    public init(contract address: String, verifier: String? = nil, contextRuleIDs: [UInt32]? = nil) throws {
        guard verifier != nil || contextRuleIDs != nil else {
            self = .contractAccount(address)
            return
        }
        self = .smartAccount(address, rules: try SmartAccountRules(verifier: verifier ?? "", contextRuleIDs: contextRuleIDs ?? []))
    }
}

extension AuthorizationAccount {
    /// The address signed for; nil for the key's own account.
    public var address: String? {
        switch self {
        case .ownAccount: nil
        case .multisigAccount(let address), .contractAccount(let address), .smartAccount(let address, _): address
        }
    }
}
