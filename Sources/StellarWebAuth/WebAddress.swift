import FoundationEssentials

/// An address keystore may send a request to: `https://`, or `http://` to a loopback host only (127.0.0.0/8,
/// `::1`, `localhost`), which is how tests run a server on this machine. Anything else is refused before a
/// connection is made.
public struct WebAddress: Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public let scheme: String
    /// The host, lower-cased, without brackets or port: what SEP-10 compares domains with.
    public let host: String
    public let port: Int?

    public init(_ text: String) throws {
        guard text.utf8.count <= 2048, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
              let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              let host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty, url.user == nil else {
            throw WebAuthClientError.badAddress(text)
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        switch scheme {
        case "https": break
        case "http": guard Self.isLoopback(bare) else { throw WebAuthClientError.plainHTTP(text) }
        default: throw WebAuthClientError.badAddress(text)
        }
        self.text = text
        self.scheme = scheme
        self.host = bare
        self.port = url.port
    }

    /// A domain as SEP-1 and SEP-10 name a service (`example.com`), or a URL whose host is that domain.
    public init(domainOrURL text: String) throws {
        if text.contains("://") {
            try self.init(text)
        } else {
            guard Self.isDomain(text) else { throw WebAuthClientError.badDomain(text) }
            try self.init("https://" + text)
        }
    }

    /// The port a connection goes to: the one written, else the scheme's (443 for https, 80 for http).
    package var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// Whether `other` is on the same origin (RFC 6454: scheme, host and port, a default port written or not):
    /// another port of the same host is another server, which may be another person's.
    package func isSameOrigin(as other: WebAddress) -> Bool {
        scheme == other.scheme && host == other.host && effectivePort == other.effectivePort
    }

    /// The origin (scheme, host, port) of this address.
    public var origin: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// `/.well-known/stellar.toml` at this address's origin (SEP-1).
    package var stellarTOML: WebAddress {
        get throws { try WebAddress(origin + "/.well-known/stellar.toml") }
    }

    /// This address with `parameters` added to its query.
    func adding(_ parameters: [(String, String)]) throws -> WebAddress {
        let query = parameters.map { "\(HTTP.escaped($0.0))=\(HTTP.escaped($0.1))" }.joined(separator: "&")
        return try WebAddress(text + (text.contains("?") ? "&" : "?") + query)
    }

    public var description: String { text }

    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Letters, digits, hyphens and dots; labels of 1 to 63; at most 253 in all.
    static func isDomain(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D }
        }
    }
}
