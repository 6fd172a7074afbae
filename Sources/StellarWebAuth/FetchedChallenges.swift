import StellarKeys
import StellarTransactions

extension WebAuthService {
    /// Challenges fetched from this service (with the client domain's operation when one is given), and the
    /// signed challenge sent back for a token.
    public func challenges(clientDomain: WebAuthExpectation.ClientDomain? = nil) -> FetchedWebAuthChallenge {
        FetchedWebAuthChallenge(service: self, clientDomain: clientDomain)
    }
}

public struct FetchedWebAuthChallenge: WebAuthChallengeSource {
    let service: WebAuthService
    let clientDomain: WebAuthExpectation.ClientDomain?

    public func challenge(for account: String) throws -> WebAuthChallenge { try service.challenge(for: account, clientDomain: clientDomain) }

    public func answer(_ signed: [UInt8]) throws -> WebAuthToken { try service.token(for: signed) }
}

extension ContractWebAuthService {
    /// Challenges fetched from this service for a contract account, and the signed entries sent back for a token.
    public func challenges(clientDomain: WebAuthExpectation.ClientDomain? = nil) -> FetchedContractWebAuthChallenge {
        FetchedContractWebAuthChallenge(service: self, clientDomain: clientDomain)
    }
}

public struct FetchedContractWebAuthChallenge: ContractWebAuthChallengeSource {
    let service: ContractWebAuthService
    let clientDomain: WebAuthExpectation.ClientDomain?

    /// A `G…` account signs in with SEP-10: refused before anything is sent.
    public func check(account: String) throws { try Self.checkContract(account) }

    static func checkContract(_ account: String) throws {
        guard (try? StrKey(account))?.kind == .contract else { throw ContractWebAuthError.notAContract(account) }
    }

    public func challenge(for account: String) throws -> ContractWebAuthChallenge { try service.challenge(for: account, clientDomain: clientDomain) }

    public func answer(_ signed: [UInt8]) throws -> WebAuthToken { try service.token(for: signed) }
}

extension WebAuthService {
    /// Challenges from the service at `domainOrURL` (as `discover` reads it), with the client domain's operation
    /// when `clientDomain` names one (its key read as `clientDomain(_:)` reads it). Nothing is fetched until the
    /// first challenge is asked for: a sign-in made from what a person typed finds its key first, and fetches
    /// nothing for a key that cannot sign in. The answer is the service's token, with who issued it.
    public static func challenges(at domainOrURL: String, clientDomain: String? = nil, timeoutSeconds: Int = 15) -> DiscoveredWebAuthChallenges {
        DiscoveredWebAuthChallenges(target: domainOrURL, clientDomain: clientDomain, timeoutSeconds: timeoutSeconds)
    }
}

/// A token and the service that issued it: its home domain and its signing key.
public struct IssuedToken: Sendable {
    public let token: WebAuthToken
    public let homeDomain: String
    public let serverKey: PublicKey
}

/// Challenges from a service found when the first is asked for (`WebAuthService.challenges(at:clientDomain:)`).
/// A class: the service found for the challenge is the one the signed challenge goes back to.
public final class DiscoveredWebAuthChallenges: WebAuthChallengeSource {
    let target: String
    let clientDomain: String?
    let timeoutSeconds: Int
    private var service: WebAuthService?

    init(target: String, clientDomain: String?, timeoutSeconds: Int) {
        self.target = target
        self.clientDomain = clientDomain
        self.timeoutSeconds = timeoutSeconds
    }

    public func challenge(for account: String) throws -> WebAuthChallenge {
        let service = try WebAuthService.discover(target, timeoutSeconds: timeoutSeconds)
        let clientDomain = try clientDomain.map { try WebAuthService.clientDomain($0, timeoutSeconds: timeoutSeconds) }
        self.service = service
        return try service.challenge(for: account, clientDomain: clientDomain)
    }

    public func answer(_ signed: [UInt8]) throws -> IssuedToken {
        guard let service else { throw WebAuthClientError.noChallengeFetched }
        return IssuedToken(token: try service.token(for: signed), homeDomain: service.homeDomain, serverKey: service.serverKey)
    }
}

extension ContractWebAuthService {
    /// Challenges for a contract account from the service at `domainOrURL`, found when the first is asked for,
    /// as `WebAuthService.challenges(at:clientDomain:)` finds them.
    public static func challenges(at domainOrURL: String, clientDomain: String? = nil,
                                  timeoutSeconds: Int = 15) -> DiscoveredContractWebAuthChallenges {
        DiscoveredContractWebAuthChallenges(target: domainOrURL, clientDomain: clientDomain, timeoutSeconds: timeoutSeconds)
    }
}

/// Contract accounts' challenges from a service found when the first is asked for.
public final class DiscoveredContractWebAuthChallenges: ContractWebAuthChallengeSource {
    let target: String
    let clientDomain: String?
    let timeoutSeconds: Int
    private var service: ContractWebAuthService?

    init(target: String, clientDomain: String?, timeoutSeconds: Int) {
        self.target = target
        self.clientDomain = clientDomain
        self.timeoutSeconds = timeoutSeconds
    }

    /// A `G…` account signs in with SEP-10: refused before anything is fetched.
    public func check(account: String) throws { try FetchedContractWebAuthChallenge.checkContract(account) }

    public func challenge(for account: String) throws -> ContractWebAuthChallenge {
        let service = try ContractWebAuthService.discover(target, timeoutSeconds: timeoutSeconds)
        let clientDomain = try clientDomain.map { try WebAuthService.clientDomain($0, timeoutSeconds: timeoutSeconds) }
        self.service = service
        return try service.challenge(for: account, clientDomain: clientDomain)
    }

    public func answer(_ signed: [UInt8]) throws -> IssuedToken {
        guard let service else { throw WebAuthClientError.noChallengeFetched }
        return IssuedToken(token: try service.token(for: signed), homeDomain: service.homeDomain, serverKey: service.serverKey)
    }
}
