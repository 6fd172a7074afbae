import StellarKeys

/// What a client knows before it asks a SEP-10 server for a challenge: who the server is (its stellar.toml
/// `SIGNING_KEY` and network), for which service (the home domain) and where (the web-auth endpoint's host),
/// and who signs in. A challenge is checked against this, never against anything the challenge says of itself.
public struct WebAuthExpectation: Sendable, Equatable {
    /// The client-domain attribution the client asked for: the domain and its stellar.toml `SIGNING_KEY`.
    public struct ClientDomain: Sendable, Equatable {
        public var domain: String
        public var key: PublicKey
        public init(domain: String, key: PublicKey) {
            self.domain = domain
            self.key = key
        }
    }

    public var serverKey: PublicKey
    public var homeDomain: String
    public var webAuthDomain: String
    public var network: StellarNetwork
    /// The account signing in: `G…`, or `M…` for a muxed account.
    public var clientAccount: String
    public var clientDomain: ClientDomain?

    public init(serverKey: PublicKey, homeDomain: String, webAuthDomain: String, network: StellarNetwork,
                clientAccount: String, clientDomain: ClientDomain? = nil) {
        self.serverKey = serverKey
        self.homeDomain = homeDomain
        self.webAuthDomain = webAuthDomain
        self.network = network
        self.clientAccount = clientAccount
        self.clientDomain = clientDomain
    }
}

/// A SEP-10 challenge that passed every check the SEP lists for a client, and nothing more can be signed
/// through it: a `Signer` signs `hash`, and `signed(adding:)` splices the signatures into the server's own
/// bytes.
///
/// A challenge is a real transaction. A hostile server can send one with a sequence number that makes it
/// valid, or with a payment from the client's account, so every rule below runs before a key is touched:
///
/// 1. a v1 envelope (`ENVELOPE_TYPE_TX`), for the expected network; a `network_passphrase` the server sent
///    with it names that same network;
/// 2. the source account is the server's key, and the sequence number is 0;
/// 3. time bounds exist, with an end, and now lies inside them, within `clockGrace` seconds either side;
/// 4. no memo, or an ID memo for a `G…` account (an `M…` account carries its ID itself);
/// 5. the first operation is `manage_data` from the client account, named `"<home domain> auth"`, with a
///    64-byte value (48 random bytes in base64);
/// 6. every other operation is `manage_data` from the server's key, except `client_domain`, which comes from
///    the client domain's key, and only when one was asked for; then it must be there, with that domain;
/// 7. a `web_auth_domain` operation holds the endpoint's host;
/// 8. the envelope carries exactly one signature, the server's, and it is valid.
///
/// SEP-45 (the draft for contract accounts) would be a second verifier beside this one, over a list of
/// Soroban authorization entries instead of a transaction, taking the same `WebAuthExpectation` and producing
/// what `Signer.signAuthorization(preimage:on:)` already signs.
public struct WebAuthChallenge: Sendable {
    /// How far the local clock may be from the server's, either way, when the time bounds are checked.
    public static let clockGrace: UInt64 = 10
    /// The name suffix of the first operation (`"<home domain> auth"`), and the other names the SEP gives.
    static let authSuffix = " auth"
    static let webAuthDomainKey = "web_auth_domain"
    static let clientDomainKey = "client_domain"

    public let envelope: TransactionEnvelope
    public let expectation: WebAuthExpectation
    /// The transaction hash on the expected network: what the client's key signs.
    public let hash: [UInt8]
    public let validFrom: UInt64
    public let validUntil: UInt64
    /// The ID memo the server put in, if any (for a shared account).
    public let memoID: UInt64?

    /// Checks `base64` (the challenge's `transaction`) against `expectation` at `now` (seconds since 1970).
    /// `serverNetworkPassphrase` is the `network_passphrase` of the server's answer, if it sent one.
    public init(base64: String, serverNetworkPassphrase: String? = nil, expecting expectation: WebAuthExpectation,
                now: UInt64) throws {
        let envelope: TransactionEnvelope
        do {
            envelope = try TransactionEnvelope(base64: base64)
        } catch let error as TransactionError {
            throw WebAuthError.unreadable(error)
        }
        try self.init(envelope: envelope, serverNetworkPassphrase: serverNetworkPassphrase, expecting: expectation, now: now)
    }

    public init(envelope: TransactionEnvelope, serverNetworkPassphrase: String? = nil, expecting expected: WebAuthExpectation,
                now: UInt64) throws {
        // 1. The envelope and the network.
        guard case .v1(let transaction) = envelope.decoded else { throw WebAuthError.notATransaction(envelope.kind) }
        if let passphrase = serverNetworkPassphrase, passphrase != expected.network.passphrase {
            throw WebAuthError.otherNetwork(serverSays: passphrase, expected: expected.network)
        }
        // 2. Source and sequence.
        guard SummaryText.ed25519(of: transaction.sourceAccount) == expected.serverKey.rawRepresentation,
              case .ed25519 = transaction.sourceAccount else {
            throw WebAuthError.sourceIsNotTheServer(SummaryText.muxed(transaction.sourceAccount))
        }
        guard transaction.seqNum == 0 else { throw WebAuthError.sequenceNotZero(transaction.seqNum) }
        guard case .v0 = transaction.ext else { throw WebAuthError.sorobanResources }
        // 3. Time bounds, and nothing else a transaction may be conditioned on.
        let bounds: XDR.TimeBounds
        switch transaction.cond {
        case .none: throw WebAuthError.noTimeBounds
        case .timeBounds(let time): bounds = time
        case .v2(let v2):
            guard v2.ledgerBounds == nil, v2.minSeqNum == nil, v2.minSeqAge == 0, v2.minSeqLedgerGap == 0,
                  v2.extraSigners.isEmpty else { throw WebAuthError.otherPreconditions }
            guard let time = v2.timeBounds else { throw WebAuthError.noTimeBounds }
            bounds = time
        }
        guard bounds.maxTime != 0 else { throw WebAuthError.noTimeBounds }
        guard now.addingReportingOverflow(Self.clockGrace).partialValue >= bounds.minTime,
              now <= bounds.maxTime.addingReportingOverflow(Self.clockGrace).partialValue else {
            throw WebAuthError.outsideTimeBounds(from: bounds.minTime, until: bounds.maxTime, now: now)
        }
        // 4. The memo.
        let client = try StrKey(expected.clientAccount)
        guard client.ed25519PublicKey != nil, client.kind == .accountID || client.kind == .muxedAccount else {
            throw WebAuthError.clientNotAnAccount
        }
        var memoID: UInt64?
        switch transaction.memo {
        case .none: break
        case .id(let id):
            guard client.kind == .accountID else { throw WebAuthError.memoWithMuxedAccount }
            memoID = id
        default: throw WebAuthError.memoNotAnID
        }
        // 5. The first operation.
        guard let first = transaction.operations.first else { throw WebAuthError.noOperations }
        guard case .manageDataOp(let auth) = first.body else { throw WebAuthError.operationNotManageData(index: 0) }
        guard let source = first.sourceAccount, Self.matches(source, client) else {
            throw WebAuthError.firstOperationNotFromClient(first.sourceAccount.map(SummaryText.muxed))
        }
        guard auth.dataName.value == Array((expected.homeDomain + Self.authSuffix).utf8) else {
            throw WebAuthError.otherHomeDomain(SummaryText.quoted(auth.dataName.value))
        }
        guard let nonce = auth.dataValue?.value, nonce.count == 64, Base64.decode(nonce)?.count == 48 else {
            throw WebAuthError.nonceNotValid
        }
        // 6 and 7. The other operations.
        var sawClientDomain = false
        for (index, operation) in transaction.operations.enumerated().dropFirst() {
            guard case .manageDataOp(let data) = operation.body else { throw WebAuthError.operationNotManageData(index: index) }
            let source = operation.sourceAccount.map(SummaryText.ed25519(of:))
            if data.dataName.value == Array(Self.clientDomainKey.utf8) {
                guard let wanted = expected.clientDomain else { throw WebAuthError.unexpectedClientDomain }
                guard source == wanted.key.rawRepresentation else {
                    throw WebAuthError.clientDomainNotFromItsKey(operation.sourceAccount.map(SummaryText.muxed))
                }
                guard data.dataValue?.value == Array(wanted.domain.utf8) else {
                    throw WebAuthError.otherClientDomain(SummaryText.quoted(data.dataValue?.value ?? []))
                }
                sawClientDomain = true
                continue
            }
            guard source == expected.serverKey.rawRepresentation else {
                throw WebAuthError.operationNotFromServer(index: index, operation.sourceAccount.map(SummaryText.muxed))
            }
            if data.dataName.value == Array(Self.webAuthDomainKey.utf8),
               data.dataValue?.value != Array(expected.webAuthDomain.utf8) {
                throw WebAuthError.otherWebAuthDomain(SummaryText.quoted(data.dataValue?.value ?? []))
            }
        }
        if expected.clientDomain != nil && !sawClientDomain { throw WebAuthError.missingClientDomain }
        // 8. The server's signature, and only it.
        let hash = envelope.hash(on: expected.network)
        guard envelope.signatures.count == 1 else { throw WebAuthError.signatureCount(envelope.signatures.count) }
        guard envelope.isSigned(by: expected.serverKey, hash: hash) else { throw WebAuthError.notSignedByServer }
        self.envelope = envelope
        self.expectation = expected
        self.hash = hash
        self.validFrom = bounds.minTime
        self.validUntil = bounds.maxTime
        self.memoID = memoID
    }

    /// The envelope with `signatures` (each a key and its signature of `hash`) appended after the server's, in
    /// the server's own bytes: what is POSTed back.
    public func signed(adding signatures: [(key: PublicKey, signature: [UInt8])]) throws -> [UInt8] {
        try envelope.adding(signatures)
    }

    /// Whether an operation's source is the client account exactly: the same key, and the same muxed ID or none.
    static func matches(_ account: XDR.MuxedAccount, _ client: StrKey) -> Bool {
        switch (account, client.kind) {
        case (.ed25519(let raw), .accountID): raw.value == client.payload
        case (.med25519(let muxed), .muxedAccount): muxed.ed25519.value == client.ed25519PublicKey?.rawRepresentation && muxed.id == client.muxedID
        default: false
        }
    }
}

/// Why a SEP-10 challenge was refused. Each is one rule of `WebAuthChallenge`; none is ever signed past.
public enum WebAuthError: KeystoreError, Equatable {
    case unreadable(TransactionError)
    case notATransaction(TransactionEnvelope.Kind)
    case otherNetwork(serverSays: String, expected: StellarNetwork)
    case sourceIsNotTheServer(String)
    case sequenceNotZero(Int64)
    case sorobanResources
    case otherPreconditions
    case noTimeBounds
    case outsideTimeBounds(from: UInt64, until: UInt64, now: UInt64)
    case clientNotAnAccount
    case memoNotAnID
    case memoWithMuxedAccount
    case noOperations
    case operationNotManageData(index: Int)
    case firstOperationNotFromClient(String?)
    case otherHomeDomain(String)
    case nonceNotValid
    case operationNotFromServer(index: Int, String?)
    case unexpectedClientDomain
    case clientDomainNotFromItsKey(String?)
    case otherClientDomain(String)
    case missingClientDomain
    case otherWebAuthDomain(String)
    case signatureCount(Int)
    case notSignedByServer

    /// A stable name for each rule, for machine-readable reports and for tests that check which rule refused.
    public var rule: String {
        switch self {
        case .unreadable: "unreadable"
        case .notATransaction: "not-v1-envelope"
        case .otherNetwork: "network"
        case .sourceIsNotTheServer: "source"
        case .sequenceNotZero: "sequence"
        case .sorobanResources: "soroban-resources"
        case .otherPreconditions: "preconditions"
        case .noTimeBounds: "no-time-bounds"
        case .outsideTimeBounds: "time-bounds"
        case .clientNotAnAccount: "client-account"
        case .memoNotAnID: "memo"
        case .memoWithMuxedAccount: "memo-muxed"
        case .noOperations: "no-operations"
        case .operationNotManageData: "operation-type"
        case .firstOperationNotFromClient: "first-operation-source"
        case .otherHomeDomain: "home-domain"
        case .nonceNotValid: "nonce"
        case .operationNotFromServer: "operation-source"
        case .unexpectedClientDomain: "unexpected-client-domain"
        case .clientDomainNotFromItsKey: "client-domain-source"
        case .otherClientDomain: "client-domain"
        case .missingClientDomain: "missing-client-domain"
        case .otherWebAuthDomain: "web-auth-domain"
        case .signatureCount: "signature-count"
        case .notSignedByServer: "server-signature"
        }
    }

    public var message: String {
        "The sign-in challenge was refused, nothing was signed: " + reason + "."
    }

    private var reason: String {
        switch self {
        case .unreadable(let error): "it is not a transaction envelope (\(error.message))"
        case .notATransaction(let kind): "it is a \(kind.rawValue) envelope, not a v1 transaction"
        case .otherNetwork(let passphrase, let expected):
            "the server says it is on \(SummaryText.quoted(passphrase)), not \(expected.shown) as its stellar.toml says"
        case .sourceIsNotTheServer(let source): "its source account is \(source), not the server's signing key"
        case .sequenceNotZero(let sequence): "its sequence number is \(sequence), not 0: it could be executed on the network"
        case .sorobanResources: "it carries Soroban resources"
        case .otherPreconditions: "it has preconditions other than time bounds"
        case .noTimeBounds: "it has no time bounds, or no end to them"
        case .outsideTimeBounds(let from, let until, let now):
            "it is valid from \(SummaryText.time(from)) until \(SummaryText.time(until)), and it is now \(SummaryText.time(now)) (\(WebAuthChallenge.clockGrace) s of grace)"
        case .clientNotAnAccount: "the account signing in is not a G… or M… address"
        case .memoNotAnID: "its memo is not an ID memo"
        case .memoWithMuxedAccount: "it has an ID memo for a muxed (M…) account"
        case .noOperations: "it has no operations"
        case .operationNotManageData(let index): "operation \(index + 1) is not manage_data"
        case .firstOperationNotFromClient(let source):
            "its first operation's source is \(source ?? "not set"), not the account signing in"
        case .otherHomeDomain(let name): "its first operation is named \(name), not \"<home domain> auth\" for the home domain asked for"
        case .nonceNotValid: "its first operation's value is not 64 bytes of base64 (48 random bytes)"
        case .operationNotFromServer(let index, let source):
            "operation \(index + 1)'s source is \(source ?? "not set"), not the server's signing key"
        case .unexpectedClientDomain: "it has a client_domain operation, and no client domain was asked for"
        case .clientDomainNotFromItsKey(let source):
            "its client_domain operation's source is \(source ?? "not set"), not the client domain's signing key"
        case .otherClientDomain(let value): "its client_domain operation holds \(value), not the client domain asked for"
        case .missingClientDomain: "it has no client_domain operation, and a client domain was asked for"
        case .otherWebAuthDomain(let value): "its web_auth_domain operation holds \(value), not the host of the web-auth endpoint"
        case .signatureCount(let count): "it carries \(count) signatures, not exactly the server's one"
        case .notSignedByServer: "it is not signed by the server's signing key"
        }
    }
}
