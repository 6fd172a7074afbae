import StellarKeys
import StellarTransactions
import StellarText

/// A service that signs contract accounts (`C…`) in with SEP-45 (draft 0.1.1), as its stellar.toml describes it:
/// where to ask (`WEB_AUTH_FOR_CONTRACTS_ENDPOINT`), which contract's `web_auth_verify` the challenge authorizes
/// (`WEB_AUTH_CONTRACT_ID`), who signs the challenges (`SIGNING_KEY`) and on which network (`NETWORK_PASSPHRASE`,
/// SEP-1's: a signature is for one network, and is checked against the one the service names).
///
/// The flow is SEP-10's (`WebAuthService`): `discover`, `challenge(for:clientDomain:)` (fetched and verified:
/// nothing is returned that did not pass every check of `ContractWebAuthChallenge`), the review that signs the
/// account's entry, and `token(for:)`. The same HTTP rules hold: https only (http to loopback), a size cap, a time
/// limit, and redirects followed only within the same origin.
public struct ContractWebAuthService: Sendable {
    /// The service's domain: the one given, or a URL's host (without its port). Sent as `home_domain`.
    public let homeDomain: String
    public let endpoint: WebAddress
    public let webAuthContract: String
    public let serverKey: PublicKey
    public let network: StellarNetwork
    let http: HTTP

    /// The endpoint's host, with `:port` when its URL names one: what the challenge's `web_auth_domain` must hold.
    /// SEP-45's own example is `localhost:8080`; another port of a host may be another server, so it is part of it.
    public var webAuthDomain: String {
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        return endpoint.port.map { "\(host):\($0)" } ?? endpoint.host
    }

    /// Reads the stellar.toml of `domainOrURL` (a domain, or an `https://` URL, or `http://` on loopback).
    public static func discover(_ domainOrURL: String, timeoutSeconds: Int = 15) throws -> ContractWebAuthService {
        let address = try WebAddress(domainOrURL: domainOrURL)
        let http = HTTP(timeoutSeconds: timeoutSeconds)
        let toml = try WebAuthService.stellarTOML(at: address, http: http)
        func value(_ key: String) throws -> String {
            guard let value = toml.strings[key] else { throw WebAuthClientError.missingInStellarTOML(key) }
            return value
        }
        let endpoint = try value("WEB_AUTH_FOR_CONTRACTS_ENDPOINT")
        let contract = try value("WEB_AUTH_CONTRACT_ID")
        let key = try value("SIGNING_KEY")
        let passphrase = try value("NETWORK_PASSPHRASE")
        guard (try? StrKey(contract))?.kind == .contract else { throw WebAuthClientError.badContractID(contract) }
        let serverKey: PublicKey
        do { serverKey = try PublicKey(accountID: key) } catch { throw WebAuthClientError.badSigningKey(key) }
        return ContractWebAuthService(homeDomain: address.host, endpoint: try WebAddress(endpoint), webAuthContract: contract,
                                      serverKey: serverKey, network: try StellarNetwork(passphrase: passphrase), http: http)
    }

    /// What the client expects of a challenge for the contract account `account`.
    public func expectation(for account: String, clientDomain: WebAuthExpectation.ClientDomain? = nil) -> ContractWebAuthExpectation {
        ContractWebAuthExpectation(serverKey: serverKey, webAuthContract: webAuthContract, homeDomain: homeDomain,
                                   webAuthDomain: webAuthDomain, network: network, clientAccount: account, clientDomain: clientDomain)
    }

    /// GETs a challenge for the contract account `account` and verifies it.
    public func challenge(for account: String, clientDomain: WebAuthExpectation.ClientDomain? = nil) throws -> ContractWebAuthChallenge {
        // The account is checked before anything is sent: a G… account signs in with SEP-10.
        guard (try? StrKey(account))?.kind == .contract else { throw ContractWebAuthError.notAContract(account) }
        let (entries, passphrase) = try WebAuthService.challenge("authorization_entries", for: account, homeDomain: homeDomain,
                                                                 clientDomain: clientDomain, from: endpoint, http: http)
        return try ContractWebAuthChallenge(base64: entries, serverNetworkPassphrase: passphrase,
                                            expecting: expectation(for: account, clientDomain: clientDomain))
    }

    /// POSTs the signed entries, `{"authorization_entries": "<base64>"}`, and returns the server's token.
    public func token(for signed: [UInt8]) throws -> WebAuthToken {
        try WebAuthService.token("authorization_entries", for: signed, from: endpoint, http: http)
    }
}
