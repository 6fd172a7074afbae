import StellarKeys
import StellarText

/// What can go wrong between keystore and a SEP-10 or SEP-45 server, other than a challenge that breaks a rule
/// (`WebAuthError`, `ContractWebAuthError`).
public enum WebAuthClientError: KeystoreError, Equatable {
    case badAddress(String)
    case badDomain(String)
    /// `http://` to a host that is not on this machine.
    case plainHTTP(String)
    case httpUnavailable(String)
    case unreachable(url: String, reason: String)
    case timedOut(url: String, seconds: Int)
    case responseTooLarge(url: String, limit: Int)
    case redirectElsewhere(from: String, to: String)
    case tooManyRedirects(url: String)
    case serverError(url: String, status: Int, body: [UInt8])
    case unexpectedAnswer(url: String, reason: String)
    case badStellarTOML(reason: String)
    case missingInStellarTOML(String)
    case badSigningKey(String)
    /// The stellar.toml's `WEB_AUTH_CONTRACT_ID` is not a `C…` address.
    case badContractID(String)
    case badToken
    /// A signed challenge was to be sent back before any challenge was fetched (the order is challenge, then answer).
    case noChallengeFetched

    public var message: String {
        switch self {
        case .badAddress(let text): "'\(TerminalText.escaped(text))' is not an https:// URL."
        case .badDomain(let text): "'\(TerminalText.escaped(text))' is not a domain name or a URL."
        case .plainHTTP(let text):
            "'\(TerminalText.escaped(text))' is plain http:// to another machine; only https:// is used, but for this machine (loopback)."
        case .httpUnavailable(let reason): "HTTP is not available: \(TerminalText.escaped(reason))."
        case .unreachable(let url, let reason): "\(TerminalText.escaped(url)) could not be reached: \(TerminalText.escaped(reason))."
        case .timedOut(let url, let seconds): "\(TerminalText.escaped(url)) did not answer within \(seconds) s."
        case .responseTooLarge(let url, let limit): "\(TerminalText.escaped(url)) answered with more than \(limit / 1024) KiB; nothing was read."
        case .redirectElsewhere(let from, let to):
            "\(TerminalText.escaped(from)) redirects to \(TerminalText.escaped(to)), another scheme, host or port; it was not followed."
        case .tooManyRedirects(let url): "\(TerminalText.escaped(url)) redirects too many times."
        case .serverError(let url, let status, let body):
            "\(TerminalText.escaped(url)) answered HTTP \(status): " + Self.oneLine(body)
        case .unexpectedAnswer(let url, let reason): "\(TerminalText.escaped(url)) answered with something else than a sign-in challenge or token (\(reason))."
        case .badStellarTOML(let reason): "The stellar.toml cannot be read: \(TerminalText.escaped(reason))."
        case .missingInStellarTOML(let key): "The stellar.toml has no \(key)."
        case .badSigningKey(let key): "The stellar.toml's SIGNING_KEY '\(TerminalText.escaped(key))' is not a G… account."
        case .badContractID(let id): "The stellar.toml's WEB_AUTH_CONTRACT_ID '\(TerminalText.escaped(id))' is not a contract (C…) address."
        case .badToken: "The server's token is not a JWT."
        case .noChallengeFetched: "No challenge was fetched from this service, so there is nothing to send back; nothing was sent."
        }
    }

    /// A server's error body in one escaped line: its `"error"` text if it is SEP-10's JSON, else the body itself,
    /// at most 200 characters.
    static func oneLine(_ body: [UInt8]) -> String {
        if let object = try? StrictJSON.parse(body, integersOnly: false), let error = object["error"]?.string {
            return TerminalText.escaped(error, limit: 200)
        }
        return body.isEmpty ? "(no body)" : TerminalText.escaped(String(decoding: body, as: UTF8.self), limit: 200)
    }
}
