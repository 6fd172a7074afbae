import StellarKeys
import StellarTransactions

extension SigningRunner {
    /// A SEP-10 sign-in as `key`'s account, in one call: the challenge from `source` (fetched, or given), checked,
    /// reviewed, shown, approved (with `clientDomainIdentity`'s key too when it carries a client domain), and its
    /// answer: a fetched one's token, a given one's signed challenge. A P-256 key has no account, and is refused
    /// before anything is fetched.
    public func signIn<Source: WebAuthChallengeSource>(with key: SigningKey, from source: Source,
                                                       clientDomainIdentity: IdentityName? = nil) throws -> Source.Answer {
        let challenge = try source.challenge(for: try key.ed25519Key().accountID)
        return try source.answer(try run(.signIn(challenge, clientDomainIdentity: clientDomainIdentity), with: key).signed)
    }

    /// A SEP-45 sign-in as the contract `account` (`AuthorizationAccount(contract:verifier:contextRuleIDs:)`),
    /// `key` signing for it, in one call: the challenge from `source`, valid through `expirationLedger` when given
    /// (`ContractWebAuthChallenge.expiring(afterLedger:)` checks it), reviewed (its risks accepted in `allowing`
    /// or by a person's consent), shown, approved, and its answer.
    public func signIn<Source: ContractWebAuthChallengeSource>(as account: AuthorizationAccount, with key: SigningKey, from source: Source,
                                                               expirationLedger: UInt32? = nil, clientDomainIdentity: IdentityName? = nil,
                                                               allowing: AuthorizationRisks = []) throws -> Source.Answer {
        // A P-256 key signs no sign-in, and an account the source cannot sign in is refused: before anything is sent.
        let publicKey = try key.ed25519Key()
        let address = account.address ?? ""
        try source.check(account: address)
        let signer = try AuthorizationSigner(key: publicKey, for: account)
        var challenge = try source.challenge(for: address)
        if let expirationLedger { challenge = try challenge.expiring(afterLedger: expirationLedger) }
        let request = SigningRequest<[UInt8]>.contractSignIn(challenge, as: signer, clientDomainIdentity: clientDomainIdentity, allowing: allowing)
        return try source.answer(try run(request, with: key).signed)
    }
}
