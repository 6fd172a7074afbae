import StellarKeys
import StellarText
import StellarTransactions

extension TransactionRequest {
    /// Who made the request (SEP-7, "Request Signing"): with neither `origin_domain` nor `signature`, `.unnamed`
    /// and nothing fetched; one without the other is refused before anything is fetched; with both, the
    /// domain's stellar.toml is fetched as a sign-in fetches one (`WebAddress`'s rules, same-origin redirects,
    /// time and size limits), never cached (SEP-7 asks that keys be fetched each time), and the signature
    /// checked against its `URI_REQUEST_SIGNING_KEY`. Nothing of the request is to be trusted before this.
    /// An origin that is a port on this machine (`originIsOnThisMachine`: its stellar.toml over plain http, from
    /// whatever program holds the port) is refused before anything is fetched, unless `allowingThisMachine`
    /// (a requester under test here); the summary then says what it is.
    public func verifiedOrigin(timeoutSeconds: Int = 15, allowingThisMachine: Bool = false) throws -> Checked {
        guard let domain = originDomain, signature != nil else { return try checked(originKey: nil) }
        if originIsOnThisMachine && !allowingThisMachine { throw TransactionRequestError.originOnThisMachine(domain) }
        let toml = try WebAuthService.stellarTOML(at: try WebAddress(originDomain: domain), http: HTTP(timeoutSeconds: timeoutSeconds))
        guard let text = toml.strings["URI_REQUEST_SIGNING_KEY"], let key = try? PublicKey(accountID: text) else {
            throw TransactionRequestError.noSigningKey(domain)
        }
        return try checked(originKey: key)
    }
}

extension TransactionRequest.Checked {
    /// Where `submit` would send the signed envelope: the request's `url:` callback, if it is an address
    /// requests may go to (https, or http on loopback). Known before anything is signed.
    public func callbackAddress() throws -> WebAddress {
        guard let callback = request.callback else { throw TransactionRequestError.noCallback }
        return try WebAddress(callback)
    }

    /// SEP-7's `url:` callback: `signed` POSTed there as a form (`application/x-www-form-urlencoded`) whose
    /// one field `xdr` is the signed envelope in base64, URL-encoded. A redirect is not followed (a POST is not
    /// sent on to another address), and an answer other than 2xx is the server's error; the answer is returned.
    public func submit(_ signed: SignedTransaction, timeoutSeconds: Int = 15) throws -> CallbackAnswer {
        let url = try callbackAddress()
        let form = Array(("xdr=" + HTTP.escaped(signed.base64)).utf8)
        let response = try HTTP(timeoutSeconds: timeoutSeconds).post(url, form: form)
        guard (200..<300).contains(response.status) else {
            throw WebAuthClientError.serverError(url: url.text, status: response.status, body: response.body)
        }
        return CallbackAnswer(url: url.text, status: response.status, body: response.body)
    }
}

/// What a SEP-7 callback answered a signed envelope with: a 2xx status and its body, which SEP-7 leaves free.
public struct CallbackAnswer: Sendable {
    public let url: String
    public let status: Int
    public let body: [UInt8]

    /// The body in one escaped line, at most 200 characters (its `"error"`, `"message"` or whole text).
    public var bodyLine: String { WebAuthClientError.oneLine(body) }
}

extension WebAddress {
    /// The origin of a SEP-7 request: `https://DOMAIN`; or `http://HOST:PORT` for a loopback host with a port,
    /// a service on this machine, which is how a test serves one.
    init(originDomain domain: String) throws {
        let parts = domain.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, Self.isLoopback(String(parts[0])) {
            try self.init("http://" + domain)
        } else {
            guard Self.isDomain(domain) else { throw WebAuthClientError.badDomain(domain) }
            try self.init("https://" + domain)
        }
    }
}

/// Origins looked up over HTTP, each time (`TransactionRequest.verifiedOrigin(timeoutSeconds:allowingThisMachine:)`),
/// and callbacks that `TransactionRequest.Checked.submit` can send to.
public struct FetchedOrigins: TransactionRequestOrigins {
    let timeoutSeconds: Int
    let allowingThisMachine: Bool

    /// `allowingThisMachine`: an origin that is a port on this machine is fetched too (a requester under test here).
    public init(timeoutSeconds: Int = 15, allowingThisMachine: Bool = false) {
        self.timeoutSeconds = timeoutSeconds
        self.allowingThisMachine = allowingThisMachine
    }

    /// The callback's address is checked as `submit` would send to it (`callbackAddress()`).
    public func checked(_ request: TransactionRequest, forCallback: Bool) throws -> TransactionRequest.Checked {
        let checked = try request.verifiedOrigin(timeoutSeconds: timeoutSeconds, allowingThisMachine: allowingThisMachine)
        if forCallback { _ = try checked.callbackAddress() }
        return checked
    }
}
