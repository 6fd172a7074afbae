import FoundationEssentials
import StellarKeys
import StellarTransactions
import StellarText

/// A service that signs people in with SEP-10, as its stellar.toml describes it: where to ask (the
/// `WEB_AUTH_ENDPOINT`), who signs the challenges (`SIGNING_KEY`) and on which network (`NETWORK_PASSPHRASE`).
///
/// The flow is `discover`, `challenge(for:clientDomain:)` (fetched and verified: nothing is returned that did
/// not pass every check of `WebAuthChallenge`), `WebAuthChallenge.signed(by:clientDomainSigner:)` with the
/// `Signer`s the caller opens once it has shown the challenge's summary, and `token(for:)`. An app with its own
/// HTTP client uses `WebAuthChallenge` and `signed(by:clientDomainSigner:)` alone.
public struct WebAuthService: Sendable {
    /// The service's domain: the one given, or a URL's host (without its port). Sent as `home_domain`.
    public let homeDomain: String
    public let endpoint: WebAddress
    /// The endpoint's host, without its port: what the challenge's `web_auth_domain` must hold.
    public var webAuthDomain: String { endpoint.host }
    public let serverKey: PublicKey
    public let network: StellarNetwork
    let http: HTTP

    /// Reads the stellar.toml of `domainOrURL` (a domain, or an `https://` URL, or `http://` on loopback).
    public static func discover(_ domainOrURL: String, timeoutSeconds: Int = 15) throws -> WebAuthService {
        let address = try WebAddress(domainOrURL: domainOrURL)
        let http = HTTP(timeoutSeconds: timeoutSeconds)
        let toml = try Self.stellarTOML(at: address, http: http)
        guard let endpoint = toml.strings["WEB_AUTH_ENDPOINT"] else { throw WebAuthClientError.missingInStellarTOML("WEB_AUTH_ENDPOINT") }
        guard let key = toml.strings["SIGNING_KEY"] else { throw WebAuthClientError.missingInStellarTOML("SIGNING_KEY") }
        guard let passphrase = toml.strings["NETWORK_PASSPHRASE"] else { throw WebAuthClientError.missingInStellarTOML("NETWORK_PASSPHRASE") }
        let serverKey: PublicKey
        do { serverKey = try PublicKey(accountID: key) } catch { throw WebAuthClientError.badSigningKey(key) }
        return WebAuthService(homeDomain: address.host, endpoint: try WebAddress(endpoint), serverKey: serverKey,
                              network: try StellarNetwork(passphrase: passphrase), http: http)
    }

    /// A client domain's `SIGNING_KEY`, from its stellar.toml: the key its `client_domain` operation must come
    /// from. `domainOrURL` as for `discover`; the domain is the host.
    public static func clientDomain(_ domainOrURL: String, timeoutSeconds: Int = 15) throws -> WebAuthExpectation.ClientDomain {
        let address = try WebAddress(domainOrURL: domainOrURL)
        let toml = try stellarTOML(at: address, http: HTTP(timeoutSeconds: timeoutSeconds))
        guard let key = toml.strings["SIGNING_KEY"] else { throw WebAuthClientError.missingInStellarTOML("SIGNING_KEY") }
        do { return .init(domain: address.host, key: try PublicKey(accountID: key)) } catch { throw WebAuthClientError.badSigningKey(key) }
    }

    static func stellarTOML(at address: WebAddress, http: HTTP) throws -> StellarTOML {
        let response = try Self.fetch(try address.stellarTOML) { try http.get($0) }
        return try StellarTOML(response.body)
    }

    /// What the client expects of a challenge for `account`.
    public func expectation(for account: String, clientDomain: WebAuthExpectation.ClientDomain? = nil) -> WebAuthExpectation {
        WebAuthExpectation(serverKey: serverKey, homeDomain: homeDomain, webAuthDomain: webAuthDomain, network: network,
                           clientAccount: account, clientDomain: clientDomain)
    }

    /// GETs a challenge for `account` and verifies it at the current time.
    public func challenge(for account: String, clientDomain: WebAuthExpectation.ClientDomain? = nil) throws -> WebAuthChallenge {
        let (transaction, passphrase) = try Self.challenge("transaction", for: account, homeDomain: homeDomain, clientDomain: clientDomain,
                                                           from: endpoint, http: http)
        return try WebAuthChallenge(base64: transaction, serverNetworkPassphrase: passphrase,
                                    expecting: expectation(for: account, clientDomain: clientDomain),
                                    now: UInt64(max(0, Date().timeIntervalSince1970)))
    }

    /// POSTs the signed challenge, `{"transaction": "<base64>"}`, and returns the server's token.
    public func token(for signed: [UInt8]) throws -> WebAuthToken {
        try Self.token("transaction", for: signed, from: endpoint, http: http)
    }

    /// SEP-10's and SEP-45's GET: a challenge for `account` (with the client domain's, when one is asked for),
    /// which the answer carries as `field`, base64, with the `network_passphrase` the server names, if any.
    static func challenge(_ field: String, for account: String, homeDomain: String, clientDomain: WebAuthExpectation.ClientDomain?,
                          from endpoint: WebAddress, http: HTTP) throws -> (challenge: String, networkPassphrase: String?) {
        var parameters = [("account", account), ("home_domain", homeDomain)]
        if let clientDomain { parameters.append(("client_domain", clientDomain.domain)) }
        let url = try endpoint.adding(parameters)
        let response = try fetch(url) { try http.get($0) }
        let answer = try json(response.body, from: url)
        guard let challenge = answer[field]?.string else { throw WebAuthClientError.unexpectedAnswer(url: url.text, reason: "no \"\(field)\"") }
        switch answer["network_passphrase"] {
        case nil, .null?: return (challenge, nil)
        case .string(let text)?: return (challenge, text)
        default: throw WebAuthClientError.unexpectedAnswer(url: url.text, reason: "\"network_passphrase\" is not a string")
        }
    }

    /// SEP-10's and SEP-45's POST: the signed challenge as `{field: "<base64>"}`, for the server's token.
    static func token(_ field: String, for signed: [UInt8], from endpoint: WebAddress, http: HTTP) throws -> WebAuthToken {
        let body = Array("{\"\(field)\":\"\(Base64.string(signed))\"}".utf8)
        let response = try fetch(endpoint) { try http.post($0, json: body) }
        let answer = try json(response.body, from: endpoint)
        guard let token = answer["token"]?.string else { throw WebAuthClientError.unexpectedAnswer(url: endpoint.text, reason: "no \"token\"") }
        return try WebAuthToken(token)
    }

    /// At most a few redirects, each within the same origin (scheme, host and port): a redirect elsewhere is
    /// refused, since the service is what the user trusted, and another port of its host may be anyone's. A
    /// status other than 200 is the server's error.
    static func fetch(_ start: WebAddress, _ request: (WebAddress) throws -> HTTP.Response) throws -> HTTP.Response {
        var url = start
        for _ in 0..<4 {
            let response = try request(url)
            if (300..<400).contains(response.status), let location = response.location {
                let next = try WebAddress(location)
                guard next.isSameOrigin(as: url) else {
                    throw WebAuthClientError.redirectElsewhere(from: url.text, to: location)
                }
                url = next
                continue
            }
            guard response.status == 200 else {
                throw WebAuthClientError.serverError(url: url.text, status: response.status, body: response.body)
            }
            return response
        }
        throw WebAuthClientError.tooManyRedirects(url: start.text)
    }

    static func json(_ body: [UInt8], from url: WebAddress) throws -> [String: StrictJSON.Value] {
        do {
            return try StrictJSON.parse(body, integersOnly: false)
        } catch {
            throw WebAuthClientError.unexpectedAnswer(url: url.text, reason: "not a JSON object")
        }
    }
}

/// The server's answer: a JWT, and what it says of itself. A client cannot check the server's signature on
/// it (the key is the server's secret or known only to the server's other endpoints), so the claims are shown
/// as the server wrote them, marked unverified.
public struct WebAuthToken: Sendable {
    public let jwt: String
    /// The claims SEP-10 names (`iss`, `sub`, `iat`, `exp`, `client_domain`) that the token holds, unverified.
    public let claims: [String: JSONTree]

    public static let claimNames = ["iss", "sub", "iat", "exp", "client_domain"]

    init(_ jwt: String) throws {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard jwt.utf8.count <= 16 << 10, parts.count == 3,
              let payload = Base64.decode(Self.padded(String(parts[1]))),
              let object = try? StrictJSON.parse(payload, integersOnly: false) else {
            throw WebAuthClientError.badToken
        }
        self.jwt = jwt
        var claims: [String: JSONTree] = [:]
        for name in Self.claimNames { if let value = object[name] { claims[name] = Self.tree(value) } }
        self.claims = claims
    }

    static func tree(_ value: StrictJSON.Value) -> JSONTree {
        switch value {
        case .string(let text): .string(text)
        case .integer(let digits): Int64(digits).map(JSONTree.number) ?? .string(digits)
        case .boolean(let flag): .bool(flag)
        case .array(let items): .array(items.map(tree))
        case .object(let members): .object(members.mapValues(tree))
        // A fraction or exponent: StrictJSON keeps no value for it, and no SEP-10 claim is one.
        case .number, .null: .null
        }
    }

    /// base64url without padding, as JWTs are written, into base64.
    static func padded(_ text: String) -> String {
        let standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        return standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
    }
}
