import StellarKeys
import StellarTransactions
import Testing
@testable import StellarWebAuth

/// What `ContractWebAuthService` decides before any challenge is read.
@Suite struct ContractWebAuthServiceTests {
    static func service(_ endpoint: String) throws -> ContractWebAuthService {
        ContractWebAuthService(homeDomain: "anchor.example", endpoint: try WebAddress(endpoint),
                               webAuthContract: "CAFAUCQKBIFAUCQKBIFAUCQKBIFAUCQKBIFAUCQKBIFAUCQKBIFAUTSM", serverKey: KeyPair.random().publicKey,
                               network: .testnet, http: HTTP(timeoutSeconds: 2))
    }

    /// SEP-45's own example has `web_auth_domain` "localhost:8080": a port named in the endpoint's URL is part of
    /// it (another port may be another server), and a default one left out is not added.
    @Test(arguments: [("https://auth.anchor.example/sep45", "auth.anchor.example"),
                      ("https://auth.anchor.example:8443/sep45", "auth.anchor.example:8443"),
                      ("http://127.0.0.1:8000/auth", "127.0.0.1:8000"),
                      ("http://[::1]:8000/auth", "[::1]:8000")])
    func theWebAuthDomainIsTheEndpointsHostWithItsPort(_ endpoint: String, _ domain: String) throws {
        let service = try Self.service(endpoint)
        #expect(service.webAuthDomain == domain)
        #expect(service.expectation(for: "C…").webAuthDomain == domain)
    }

    /// An account that is not a contract is refused before anything is sent: nothing listens on port 1, so a
    /// request would have failed as unreachable instead.
    @Test(arguments: ["GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3", "not an account", ""])
    func anAccountThatIsNotAContractIsRefusedBeforeAnyRequest(_ account: String) throws {
        let service = try Self.service("http://127.0.0.1:1/auth")
        #expect(throws: ContractWebAuthError.notAContract(account)) { try service.challenge(for: account) }
    }
}
