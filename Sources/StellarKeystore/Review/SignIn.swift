import FoundationEssentials
import StellarKeys
import StellarTransactions

/// A SEP-10 sign-in as a person asks for one: where its challenge comes from (fetched from a service, as
/// StellarWebAuth's `WebAuthService.challenges(at:clientDomain:)` finds it, or given: `SignIn.given`), and the
/// identity whose key signs for the client domain when the challenge carries one. Nothing is parsed or fetched
/// when it is made: one call (`SigningRunner.run(_:as:in:keys:)`) finds the key that signs in (never an agent's,
/// `Keystore.signInKey(as:keys:)`), gets the challenge for its account and checks it, reviews, shows, approves,
/// and answers (a service's token, or the signed challenge).
public struct SignIn<Source: WebAuthChallengeSource> {
    let source: () throws -> Source
    let clientDomainIdentity: String?

    /// A sign-in whose challenges come from `source`; `clientDomainIdentity`, an identity's name.
    public init(from source: Source, clientDomainIdentity: String? = nil) {
        self.source = { source }
        self.clientDomainIdentity = clientDomainIdentity
    }

    init(making source: @escaping () throws -> Source, clientDomainIdentity: String?) {
        self.source = source
        self.clientDomainIdentity = clientDomainIdentity
    }
}

extension SignIn where Source == GivenWebAuthChallenge {
    /// A challenge given as base64 XDR, with what it must be (the server's key, a `G…` address; its home domain and
    /// web-auth domain; the network; the client domain and its key, when it carries one), checked at `now`
    /// (seconds since 1970; nil: when the sign-in runs); the answer is the signed challenge, and nothing is sent.
    public static func given(_ base64: String, serverKey: String, homeDomain: String, webAuthDomain: String, network: NetworkChoice,
                             clientDomain: (domain: String, key: String)? = nil, clientDomainIdentity: String? = nil, now: UInt64? = nil) -> Self {
        Self(making: {
            let network = try network.network()
            let serverKey = try PublicKey(accountID: serverKey)
            let clientDomain = try clientDomain.map { WebAuthExpectation.ClientDomain(domain: $0.domain, key: try PublicKey(accountID: $0.key)) }
            return GivenWebAuthChallenge(base64, serverKey: serverKey, homeDomain: homeDomain, webAuthDomain: webAuthDomain, network: network,
                                         clientDomain: clientDomain, now: now ?? UInt64(max(0, Date().timeIntervalSince1970)))
        }, clientDomainIdentity: clientDomainIdentity)
    }
}

/// What a sign-in answered, and the address that signed in (the key's account, or the contract account's signer).
public struct SignedIn<Answer> {
    public let answer: Answer
    public let signer: String
}

extension SignIn: SigningTask {
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> SignedIn<Source.Answer> {
        let source = try source()
        let key = try keystore.signInKey(as: identity, keys: keys)
        let answer = try runner.signIn(with: key, from: source, clientDomainIdentity: try clientDomainIdentity.map { try IdentityName($0) })
        return SignedIn(answer: answer, signer: key.address)
    }
}

/// A SEP-45 sign-in as a contract account, as a person asks for one: the account from its parts (its `C…`
/// address; with a verifier and context rule ids, an OpenZeppelin smart account's External signer:
/// `AuthorizationAccount(contract:verifier:contextRuleIDs:)`), the key signing for it; where its challenge comes
/// from (fetched: StellarWebAuth's `ContractWebAuthService.challenges(at:clientDomain:)`, or `ContractSignIn.given`);
/// the last ledger its signatures are valid at (nil: the server's choice, else the server's own signature's);
/// the client domain's identity; the risks accepted up front (`allowing`; a V1 entry's, else a person's consent).
/// One call, as for `SignIn`.
public struct ContractSignIn<Source: ContractWebAuthChallengeSource> {
    let source: () throws -> Source
    let account: String
    let verifier: String?
    let contextRuleIDs: [UInt32]?
    let expirationLedger: UInt32?
    let clientDomainIdentity: String?
    let allowing: AuthorizationRisks

    public init(as account: String, verifier: String? = nil, contextRuleIDs: [UInt32]? = nil, from source: Source,
                expirationLedger: UInt32? = nil, clientDomainIdentity: String? = nil, allowing: AuthorizationRisks = []) {
        self.init(as: account, verifier: verifier, contextRuleIDs: contextRuleIDs, making: { source }, expirationLedger: expirationLedger,
                  clientDomainIdentity: clientDomainIdentity, allowing: allowing)
    }

    init(as account: String, verifier: String?, contextRuleIDs: [UInt32]?, making source: @escaping () throws -> Source,
         expirationLedger: UInt32?, clientDomainIdentity: String?, allowing: AuthorizationRisks) {
        self.source = source
        self.account = account
        self.verifier = verifier
        self.contextRuleIDs = contextRuleIDs
        self.expirationLedger = expirationLedger
        self.clientDomainIdentity = clientDomainIdentity
        self.allowing = allowing
    }
}

extension ContractSignIn where Source == GivenContractWebAuthChallenge {
    /// Authorization entries given as base64 XDR, with what they must be (the server's key, a `G…` address; the
    /// web-auth contract; the home domain and web-auth domain; the network; the client domain and its key, when
    /// they carry one); the answer is the signed entries, and nothing is sent.
    public static func given(_ base64: String, as account: String, verifier: String? = nil, contextRuleIDs: [UInt32]? = nil,
                             serverKey: String, webAuthContract: String, homeDomain: String, webAuthDomain: String, network: NetworkChoice,
                             clientDomain: (domain: String, key: String)? = nil, expirationLedger: UInt32? = nil,
                             clientDomainIdentity: String? = nil, allowing: AuthorizationRisks = []) -> Self {
        Self(as: account, verifier: verifier, contextRuleIDs: contextRuleIDs, making: {
            let network = try network.network()
            let serverKey = try PublicKey(accountID: serverKey)
            let clientDomain = try clientDomain.map { WebAuthExpectation.ClientDomain(domain: $0.domain, key: try PublicKey(accountID: $0.key)) }
            return GivenContractWebAuthChallenge(base64, expecting: ContractWebAuthExpectation(
                serverKey: serverKey, webAuthContract: webAuthContract, homeDomain: homeDomain, webAuthDomain: webAuthDomain,
                network: network, clientAccount: account, clientDomain: clientDomain))
        }, expirationLedger: expirationLedger, clientDomainIdentity: clientDomainIdentity, allowing: allowing)
    }
}

extension ContractSignIn: SigningTask {
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> SignedIn<Source.Answer> {
        let source = try source()
        let key = try keystore.signInKey(as: identity, keys: keys)
        let answer = try runner.signIn(as: try AuthorizationAccount(contract: account, verifier: verifier, contextRuleIDs: contextRuleIDs),
                                       with: key, from: source, expirationLedger: expirationLedger,
                                       clientDomainIdentity: try clientDomainIdentity.map { try IdentityName($0) }, allowing: allowing)
        return SignedIn(answer: answer, signer: key.address)
    }
}
