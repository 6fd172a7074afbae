import StellarKeys
import StellarTransactions

extension SigningRequest where Signed == [UInt8] {
    /// A SEP-45 challenge that passed every check (`ContractWebAuthChallenge`): the contract account's entry signed
    /// by the key as `signer` (a signer the account reads with the account convention, or a smart account's), and,
    /// when it carries a client domain, that domain's entry by `clientDomainIdentity`, whose key must be the
    /// domain's (its own `G…` account); each valid through the challenge's chosen ledger (`expirationLedger`,
    /// `clientDomainExpirationLedger`: given, the server's, or the server's own signature's). What comes back is the
    /// `SorobanAuthorizationEntries` XDR to send to the server. A challenge of V1 entries, which bind no address,
    /// needs `.notAddressBound` in `allowing` or the consent the review asks for. Like a SEP-10 sign-in, never
    /// signed through a signing agent, whose protocol could show it only as a hash.
    public static func contractSignIn(_ challenge: ContractWebAuthChallenge, as signer: AuthorizationSigner,
                                      clientDomainIdentity: IdentityName? = nil, allowing: AuthorizationRisks = []) -> Self {
        Self(content: .contractSignIn(challenge, signer, clientDomainIdentity: clientDomainIdentity, allowing: allowing)) { key, clientDomain, _ in
            try challenge.signed(by: try ed25519(key), as: signer, clientDomainSigner: clientDomain)
        }
    }
}

extension SigningRequest.Content {
    /// A sign-in, SEP-10's or SEP-45's: its key is found without the agent (`Keystore.signInKey`).
    var isSignIn: Bool {
        switch self {
        case .signIn, .contractSignIn: true
        default: false
        }
    }
}

extension SigningReview {
    /// The review's checks of a SEP-45 sign-in, all on public keys, before any PIN: not through an agent; `signer`
    /// signs for the challenge's account with this identity's key, and its rules (a smart account's) are one per
    /// authorization context; the client domain's identity is given exactly when the challenge carries a client
    /// domain, holds that domain's key, and is ready for its PIN. The identity to open for the client domain, and
    /// the consent its V1 entries need (`ContractWebAuthChallenge.notAddressBound`) when `allowing` does not accept them.
    static func checkContractSignIn(_ challenge: ContractWebAuthChallenge, as signer: AuthorizationSigner,
                                    clientDomainIdentity: IdentityName?, allowing: AuthorizationRisks,
                                    key: SigningKey) throws -> (clientDomain: IdentityName?, consent: SigningConsent?) {
        if case .agent = key.holder { throw ReviewError.signInThroughAgent }
        guard let publicKey = key.publicKey else { throw ReviewError.onlySmartAccounts }
        try challenge.check(signer, key: publicKey)
        let entry = try AuthorizationEntry(xdr: challenge.entries[challenge.clientEntry])
        if let rules = signer.rules, rules.contextRuleIDs.count != entry.contextCount {
            throw AuthorizationError.contextRulesMismatch(entry: challenge.clientEntry + 1, contexts: entry.contextCount,
                                                          given: rules.contextRuleIDs.count)
        }
        let consent = allowing.contains(.notAddressBound)
            ? nil : SigningConsent(needed: challenge.notAddressBound.isEmpty ? [] : .notAddressBound, notStrict: [],
                                   notAddressBound: challenge.notAddressBound)
        return (try checkClientDomain(challenge.expectation.clientDomain, identity: clientDomainIdentity, key: key), consent)
    }
}

extension ContractWebAuthChallenge {
    /// `signer` must sign for this challenge's account, with `key`.
    func check(_ signer: AuthorizationSigner, key: PublicKey) throws {
        guard signer.address == expectation.clientAccount else {
            throw ContractSignInError.notTheAccount(signer: signer.address, account: expectation.clientAccount)
        }
        guard signer.key == key else { throw ContractSignInError.notThisKey(signer: signer.signingKey.description, key: key.accountID) }
    }

    /// The account's entry signed by `key` as `signer`, and the client domain's by `clientDomainSigner` for its own
    /// account, each through `AuthorizationEntry.signed` at the challenge's chosen expiration, put back among
    /// the server's entries (`signed(client:clientDomain:)`, which checks each is the entry reviewed).
    package func signed(by key: any Signing, as signer: AuthorizationSigner, clientDomainSigner: (any Signing)?) throws -> [UInt8] {
        try check(signer, key: key.publicKey)
        let network = expectation.network
        // The review found the consent a V1 entry needs, or refused.
        let client = try AuthorizationEntry(xdr: entries[clientEntry])
            .signed(for: signer, on: network, expirationLedger: expirationLedger, allowing: .notAddressBound) { try key.signAuthorization($0, on: network) }
        var domain: AuthorizationEntry?
        switch (expectation.clientDomain, clientDomainSigner, clientDomainEntry, clientDomainExpirationLedger) {
        case (nil, nil, _, _): break
        case (let wanted?, let domainKey?, let index?, let expiration?):
            guard domainKey.publicKey == wanted.key else {
                throw WebAuthSigningError.notTheClientDomainKey(signer: domainKey.address, key: wanted.key.accountID)
            }
            domain = try AuthorizationEntry(xdr: entries[index]).signed(for: .account(domainKey.publicKey), on: network,
                                                                        expirationLedger: expiration, allowing: .notAddressBound) {
                try domainKey.signAuthorization($0, on: network)
            }
        default: throw WebAuthSigningError.clientDomainSignerMismatch
        }
        return try signed(client: client.bytes, clientDomain: domain?.bytes)
    }
}

/// A SEP-45 sign-in offered to the wrong signer.
public enum ContractSignInError: KeystoreError, Equatable {
    /// The signer signs for another address than the challenge's account.
    case notTheAccount(signer: String, account: String)
    /// The signer's key is not the identity's.
    case notThisKey(signer: String, key: String)

    public var message: String {
        switch self {
        case .notTheAccount(let signer, let account):
            "The challenge is for \(account), and the signer signs for \(signer); nothing was signed."
        case .notThisKey(let signer, let key):
            "The signer's key is \(signer), and this identity's key is \(key); nothing was signed."
        }
    }
}

extension SigningReview {
    /// A sign-in's client domain (SEP-10 or SEP-45): its identity is given exactly when the challenge carries a
    /// client domain, holds that domain's key, and is ready for its PIN. The identity to open for it, if any.
    static func checkClientDomain(_ domain: WebAuthExpectation.ClientDomain?, identity: IdentityName?,
                                  key: SigningKey) throws -> IdentityName? {
        switch (domain, identity) {
        case (nil, nil): return nil
        case (let domain?, let name?):
            guard let keystore = key.keystore else { throw WebAuthSigningError.clientDomainSignerMismatch }
            let stored = try keystore.vaults.key(named: name)
            let publicKey = try stored.accountKey()
            guard publicKey == domain.key else {
                throw WebAuthSigningError.notTheClientDomainKey(signer: publicKey.accountID, key: domain.key.accountID)
            }
            // Its PIN too is asked only if it can be used.
            if name != key.name { try stored.checkReadyForPIN(in: keystore) }
            return name
        case (nil, _?), (_?, nil): throw WebAuthSigningError.clientDomainSignerMismatch
        }
    }
}
