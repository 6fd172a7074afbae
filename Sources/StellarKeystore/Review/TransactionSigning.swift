import StellarKeys
import StellarTransactions

/// A transaction to sign as a person gives one: `text`, an envelope (base64 XDR) or a SEP-7 request
/// (`web+stellar:tx?…`); the network they named; the files of the accounts it needs (Horizon's JSON, which its
/// summary checks the signatures against); whether to trim. Nothing is decoded, read or fetched when it is made:
/// one call (`SigningRunner.run(_:as:in:keys:)`) does all of it, reviews, shows, approves.
///
/// The rules it carries, so that every caller has the same: an envelope needs a network named
/// (`TransactionError.noNetwork`); a SEP-7 request's origin is checked by `origins` before anything else, and it
/// may name its own network, which must then be the one named or, none named, agreed to by a person
/// (`SigningRequest.transaction(_:network:accounts:trimming:)`); `forCallback` (the signed envelope is to be
/// sent to the request's callback) is refused for an envelope, which has none, and the callback's address is
/// checked before anything is signed. Trimming and "already signed" are the signed envelope's
/// (`SignedTransaction.removed`, `wasAlreadySigned`), told in `Signed.notes`.
public struct TransactionSigning: Sendable {
    let text: [UInt8]
    let network: NetworkChoice
    /// Each account's file, by where it came from (a path) and its bytes.
    let accountFiles: [(source: String, bytes: [UInt8])]
    let trimming: Bool
    let origins: any TransactionRequestOrigins
    let forCallback: Bool

    public init(_ text: [UInt8], network: NetworkChoice, accountFiles: [(source: String, bytes: [UInt8])] = [], trimming: Bool = false,
                origins: any TransactionRequestOrigins = UnlookedUpOrigins(), forCallback: Bool = false) {
        self.text = text
        self.network = network
        self.accountFiles = accountFiles
        self.trimming = trimming
        self.origins = origins
        self.forCallback = forCallback
    }

    /// What was signed, and what the caller tells of it.
    public struct Signed: Sendable {
        public let approval: Approval<SignedTransaction>
        /// The network it was signed for: the one named, or a SEP-7 request's that a person agreed to.
        public let network: StellarNetwork
        /// The SEP-7 request it came in, its origin checked; nil for an envelope.
        public let request: TransactionRequest.Checked?

        /// What a person should know besides the envelope: that it was already signed, what trimming took out.
        public var notes: [String] { approval.notes }
    }

    /// The request a review takes: the accounts read, then the text told apart (a SEP-7 request's origin
    /// checked, its callback's address too when it is to be sent there; an envelope's network resolved).
    func request() throws -> (SigningRequest<SignedTransaction>, TransactionRequest.Checked?) {
        let accounts = try AccountSigners.read(accountFiles)
        if TransactionRequest.isURI(text) {
            let checked = try origins.checked(try TransactionRequest(uri: text), forCallback: forCallback)
            return (try .transaction(checked, network: try network.networkIfNamed(), accounts: accounts, trimming: trimming), checked)
        }
        if forCallback { throw TransactionRequestError.noCallback }
        let network = try network.network()
        return (.transaction(try TransactionEnvelope(base64: text), network: network, accounts: accounts, trimming: trimming), nil)
    }
}

extension TransactionSigning: SigningTask {
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> Signed {
        let (request, checked) = try request()
        let approval = try runner.run(request, with: try keystore.signingKey(as: identity, keys: keys))
        // The review resolved a request's network (`SigningRequest.transaction(_:network:)`); an envelope's is the one named.
        let network = approval.summary.network ?? request.network ?? checked?.request.network
        guard let network else { throw TransactionError.noNetwork }
        return Signed(approval: approval, network: network, request: checked)
    }
}

/// Many transaction envelopes signed with one key (`SigningRequest.transactions(network:)`), for the network a
/// caller named, resolved when it runs (none named is `TransactionError.noNetwork`).
public struct TransactionBatchSigning: SigningTask, Sendable {
    let network: NetworkChoice

    public init(network: NetworkChoice) {
        self.network = network
    }

    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> Approval<SigningBatch> {
        let request = SigningRequest<SigningBatch>.transactions(network: try network.network())
        return try runner.run(request, with: try keystore.signingKey(as: identity, keys: keys))
    }
}

/// A transaction envelope to show without any key, as a person gives one: its text (base64 XDR), the network
/// named, the accounts' files. One call (`summary()`) resolves the network, decodes the envelope, reads the
/// accounts and makes the summary a signing would show, the signatures present checked against the accounts.
public struct TransactionShowing: Sendable {
    let text: [UInt8]
    let network: NetworkChoice
    let accountFiles: [(source: String, bytes: [UInt8])]

    public init(_ text: [UInt8], network: NetworkChoice, accountFiles: [(source: String, bytes: [UInt8])] = []) {
        self.text = text
        self.network = network
        self.accountFiles = accountFiles
    }

    /// The summary, and the network it is for.
    public func summary() throws -> (summary: SigningSummary, network: StellarNetwork) {
        let network = try network.network()
        let envelope = try TransactionEnvelope(base64: text)
        return (.transaction(envelope, on: network, signingAs: nil, accounts: try AccountSigners.read(accountFiles)), network)
    }
}
