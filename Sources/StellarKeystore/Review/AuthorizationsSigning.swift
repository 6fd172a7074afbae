import StellarKeys
import StellarTransactions

/// Soroban authorization entries to sign as a person gives them: `text`, a simulated envelope (base64 XDR); the
/// network named; the last ledger the signatures are valid at; the account signed for, by its parts (nil: the
/// key's own; a `G…` account the key is a signer of; a `C…` contract account; with `verifier` and
/// `contextRuleIDs`, an OpenZeppelin smart account: `AuthorizationAccount(address:verifier:contextRuleIDs:)`); the
/// risks accepted up front (`allowing`); a P-256 key's signature form. Nothing is decoded when it is made: one call
/// (`SigningRunner.run(_:as:in:keys:)`) resolves the network, decodes the envelope, builds the account, and runs
/// `SigningRequest.authorizations(in:network:expirationLedger:for:allowing:p256Form:)`.
public struct AuthorizationEntriesSigning: Sendable {
    let text: [UInt8]
    let network: NetworkChoice
    let expirationLedger: UInt32
    let account: String?
    let verifier: String?
    let contextRuleIDs: [UInt32]?
    let allowing: AuthorizationRisks
    let p256Form: P256SignatureForm

    public init(_ text: [UInt8], network: NetworkChoice, expirationLedger: UInt32, for account: String? = nil, verifier: String? = nil,
                contextRuleIDs: [UInt32]? = nil, allowing: AuthorizationRisks = [], p256Form: P256SignatureForm = .webAuthn) {
        self.text = text
        self.network = network
        self.expirationLedger = expirationLedger
        self.account = account
        self.verifier = verifier
        self.contextRuleIDs = contextRuleIDs
        self.allowing = allowing
        self.p256Form = p256Form
    }

    /// The entries signed, and the network they were signed for.
    public struct Signed: Sendable {
        public let approval: Approval<SignedAuthorizations>
        public let network: StellarNetwork
    }
}

extension AuthorizationEntriesSigning: SigningTask {
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> Signed {
        let network = try network.network()
        let envelope = try TransactionEnvelope(base64: text)
        let account = try account.map { try AuthorizationAccount(address: $0, verifier: verifier, contextRuleIDs: contextRuleIDs) } ?? .ownAccount
        let request = SigningRequest<SignedAuthorizations>.authorizations(in: envelope, network: network, expirationLedger: expirationLedger,
                                                                          for: account, allowing: allowing, p256Form: p256Form)
        return Signed(approval: try runner.run(request, with: try keystore.signingKey(as: identity, keys: keys)), network: network)
    }
}

/// A bare Soroban authorization preimage (`HashIDPreimage`, base64 XDR) to sign as a person gives it: the network
/// named, a smart account's context rule ids, the risks accepted up front, a P-256 key's signature form. One call
/// resolves the network, decodes the preimage and runs `SigningRequest.authorization(_:network:contextRuleIDs:allowing:p256Form:)`.
public struct AuthorizationPreimageSigning: Sendable {
    let text: [UInt8]
    let network: NetworkChoice
    let contextRuleIDs: [UInt32]?
    let allowing: AuthorizationRisks
    let p256Form: P256SignatureForm

    public init(_ text: [UInt8], network: NetworkChoice, contextRuleIDs: [UInt32]? = nil, allowing: AuthorizationRisks = [],
                p256Form: P256SignatureForm = .webAuthn) {
        self.text = text
        self.network = network
        self.contextRuleIDs = contextRuleIDs
        self.allowing = allowing
        self.p256Form = p256Form
    }
}

extension AuthorizationPreimageSigning: SigningTask {
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> Approval<[UInt8]> {
        let network = try network.network()
        let request = SigningRequest<[UInt8]>.authorization(try AuthorizationPreimage(base64: text), network: network,
                                                            contextRuleIDs: contextRuleIDs, allowing: allowing, p256Form: p256Form)
        return try runner.run(request, with: try keystore.signingKey(as: identity, keys: keys))
    }
}
