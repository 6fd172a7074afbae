import FoundationEssentials
import StellarKeys
import StellarKeystore
import StellarTransactions

/// Where a SEP-10 challenge comes from.
public enum WebAuthChallengeSource: Sendable {
    /// Fetched from the service for the key's account (with the client domain's operation when one is given); the
    /// signed challenge is sent back, and the token is the result.
    case fetched(WebAuthService, clientDomain: WebAuthExpectation.ClientDomain?)
    /// Given as base64 XDR (a caller with its own HTTP client), checked against what the caller expects, the
    /// client account being the key's; the signed challenge is the result, and nothing is sent.
    case given(String, serverKey: PublicKey, homeDomain: String, webAuthDomain: String, network: StellarNetwork,
               clientDomain: WebAuthExpectation.ClientDomain?)
}

/// Where a SEP-45 challenge (a contract account's) comes from.
public enum ContractWebAuthChallengeSource: Sendable {
    /// Fetched from the service for the account; the signed entries are sent back, and the token is the result.
    case fetched(ContractWebAuthService, clientDomain: WebAuthExpectation.ClientDomain?)
    /// Given as base64 XDR, checked against `expectation` (whose client account is the one signed in as); the
    /// signed entries are the result, and nothing is sent.
    case given(String, ContractWebAuthExpectation)
}

/// What a sign-in gives: the service's token, or for a given challenge the signed challenge to send back.
public enum SignInResult: Sendable {
    case token(WebAuthToken)
    case signed([UInt8])
}

extension SigningRunner {
    /// A SEP-10 sign-in as `key`'s account, in one call: the challenge from `source`, checked, reviewed, shown,
    /// approved (with `clientDomainIdentity`'s key too when it carries a client domain), and for a fetched one
    /// sent back for a token. A P-256 key has no account, and is refused before anything is fetched.
    public func signIn(with key: SigningKey, challenge source: WebAuthChallengeSource, clientDomainIdentity: IdentityName? = nil,
                       now: Date = Date()) throws -> SignInResult {
        let account = try key.ed25519Key().accountID
        switch source {
        case .fetched(let service, let clientDomain):
            let challenge = try service.challenge(for: account, clientDomain: clientDomain)
            let signed = try run(.signIn(challenge, clientDomainIdentity: clientDomainIdentity), with: key).signed
            return .token(try service.token(for: signed))
        case .given(let text, let serverKey, let homeDomain, let webAuthDomain, let network, let clientDomain):
            let expectation = WebAuthExpectation(serverKey: serverKey, homeDomain: homeDomain, webAuthDomain: webAuthDomain,
                                                 network: network, clientAccount: account, clientDomain: clientDomain)
            let challenge = try WebAuthChallenge(base64: text, expecting: expectation, now: UInt64(max(0, now.timeIntervalSince1970)))
            return .signed(try run(.signIn(challenge, clientDomainIdentity: clientDomainIdentity), with: key).signed)
        }
    }

    /// A SEP-45 sign-in as the contract `account` (`AuthorizationAccount(contract:verifier:contextRuleIDs:)`),
    /// `key` signing for it, in one call: the challenge from `source`, valid through `expirationLedger` when
    /// given (`ContractWebAuthChallenge.expiring(afterLedger:)` checks it), reviewed (its risks accepted in
    /// `allowing` or by a person's consent), shown, approved, and for a fetched one sent back for a token.
    public func signIn(as account: AuthorizationAccount, with key: SigningKey, challenge source: ContractWebAuthChallengeSource,
                       expirationLedger: UInt32? = nil, clientDomainIdentity: IdentityName? = nil,
                       allowing: AuthorizationRisks = []) throws -> SignInResult {
        func chosen(_ challenge: ContractWebAuthChallenge) throws -> ContractWebAuthChallenge {
            guard let expirationLedger else { return challenge }
            return try challenge.expiring(afterLedger: expirationLedger)
        }
        // A P-256 key signs no sign-in: refused before anything is fetched.
        let publicKey = try key.ed25519Key()
        switch source {
        case .fetched(let service, let clientDomain):
            let challenge = try chosen(try service.challenge(for: account.address ?? "", clientDomain: clientDomain))
            let signer = try AuthorizationSigner(key: publicKey, for: account)
            let signed = try run(.contractSignIn(challenge, as: signer, clientDomainIdentity: clientDomainIdentity, allowing: allowing),
                                 with: key).signed
            return .token(try service.token(for: signed))
        case .given(let text, let expectation):
            let signer = try AuthorizationSigner(key: publicKey, for: account)
            let challenge = try chosen(try ContractWebAuthChallenge(base64: text, expecting: expectation))
            return .signed(try run(.contractSignIn(challenge, as: signer, clientDomainIdentity: clientDomainIdentity, allowing: allowing),
                                   with: key).signed)
        }
    }
}
