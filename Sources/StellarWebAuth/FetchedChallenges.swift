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
    public func check(account: String) throws {
        guard (try? StrKey(account))?.kind == .contract else { throw ContractWebAuthError.notAContract(account) }
    }

    public func challenge(for account: String) throws -> ContractWebAuthChallenge { try service.challenge(for: account, clientDomain: clientDomain) }

    public func answer(_ signed: [UInt8]) throws -> WebAuthToken { try service.token(for: signed) }
}
