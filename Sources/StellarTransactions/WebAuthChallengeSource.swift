import StellarKeys

/// Where a SEP-10 sign-in's challenge comes from, and what its signed form becomes: fetched from a service and
/// sent back for a token (StellarWebAuth's `WebAuthService.challenges(clientDomain:)`), or given by a caller with
/// its own HTTP client (`GivenWebAuthChallenge`), whose signed challenge is the answer.
public protocol WebAuthChallengeSource {
    associatedtype Answer
    /// The challenge for `account` (the signing key's), checked in full.
    func challenge(for account: String) throws -> WebAuthChallenge
    /// What the signed challenge becomes.
    func answer(_ signed: [UInt8]) throws -> Answer
}

/// The same for a contract account's sign-in (SEP-45).
public protocol ContractWebAuthChallengeSource {
    associatedtype Answer
    /// Refuses an account this source cannot sign in, before anything else is made or sent.
    func check(account: String) throws
    /// The challenge for the contract `account`, checked in full.
    func challenge(for account: String) throws -> ContractWebAuthChallenge
    /// What the signed entries become.
    func answer(_ signed: [UInt8]) throws -> Answer
}

/// A SEP-10 challenge given as base64 XDR, checked against what the caller expects (the client account is the
/// signing key's) at `now` (seconds since 1970); the answer is the signed challenge, and nothing is sent.
public struct GivenWebAuthChallenge: WebAuthChallengeSource {
    let base64: String
    let serverKey: PublicKey
    let homeDomain, webAuthDomain: String
    let network: StellarNetwork
    let clientDomain: WebAuthExpectation.ClientDomain?
    let now: UInt64

    public init(_ base64: String, serverKey: PublicKey, homeDomain: String, webAuthDomain: String, network: StellarNetwork,
                clientDomain: WebAuthExpectation.ClientDomain?, now: UInt64) {
        self.base64 = base64
        self.serverKey = serverKey
        self.homeDomain = homeDomain
        self.webAuthDomain = webAuthDomain
        self.network = network
        self.clientDomain = clientDomain
        self.now = now
    }

    public func challenge(for account: String) throws -> WebAuthChallenge {
        try WebAuthChallenge(base64: base64, expecting: WebAuthExpectation(serverKey: serverKey, homeDomain: homeDomain, webAuthDomain: webAuthDomain,
                                                                           network: network, clientAccount: account, clientDomain: clientDomain),
                             now: now)
    }

    public func answer(_ signed: [UInt8]) -> [UInt8] { signed }
}

/// A SEP-45 challenge given as base64 XDR, checked against `expectation`; the answer is the signed entries.
public struct GivenContractWebAuthChallenge: ContractWebAuthChallengeSource {
    let base64: String
    let expectation: ContractWebAuthExpectation

    public init(_ base64: String, expecting expectation: ContractWebAuthExpectation) {
        self.base64 = base64
        self.expectation = expectation
    }

    /// Any account: the signer made for it refuses one that is not a contract.
    public func check(account: String) {}

    public func challenge(for account: String) throws -> ContractWebAuthChallenge {
        try ContractWebAuthChallenge(base64: base64, expecting: expectation)
    }

    public func answer(_ signed: [UInt8]) -> [UInt8] { signed }
}
