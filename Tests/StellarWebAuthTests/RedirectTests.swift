@testable import StellarWebAuth
import Testing

/// A redirect is followed only within the origin the person named: same scheme, host and port (RFC 6454), a
/// scheme's default port written or not. Another port of the same host is another server.
@Suite struct RedirectTests {
    /// Runs `fetch` from `start` against a server that redirects once to `location`, then answers 200; returns
    /// the addresses requested.
    func follow(from start: String, to location: String) throws -> [String] {
        var requested: [String] = []
        _ = try WebAuthService.fetch(try WebAddress(start)) { url in
            requested.append(url.text)
            return requested.count == 1 ? HTTP.Response(status: 302, body: [], location: location) : HTTP.Response(status: 200, body: [])
        }
        return requested
    }

    @Test(arguments: [
        ("http://127.0.0.1:8000/auth", "http://127.0.0.1:8001/auth"),
        ("https://anchor.example/auth", "https://anchor.example:8443/auth"),
        ("https://anchor.example:8443/auth", "https://anchor.example/auth"),
        ("https://anchor.example/auth", "https://anchor.example:80/auth"),
        ("http://localhost:8000/auth", "http://127.0.0.1:8000/auth"),
        ("http://127.0.0.1:443/auth", "https://127.0.0.1:443/auth"),
    ])
    func aRedirectToAnotherOriginIsNotFollowed(_ start: String, _ location: String) throws {
        #expect(throws: WebAuthClientError.redirectElsewhere(from: start, to: location)) { try follow(from: start, to: location) }
    }

    @Test(arguments: [
        ("https://anchor.example/auth", "https://anchor.example:443/v2/auth"),
        ("https://anchor.example:443/auth", "https://ANCHOR.example/v2/auth"),
        ("http://127.0.0.1/auth", "http://127.0.0.1:80/v2/auth"),
        ("http://127.0.0.1:8000/auth", "http://127.0.0.1:8000/v2/auth"),
    ])
    func aRedirectWithinTheOriginIsFollowed(_ start: String, _ location: String) throws {
        #expect(try follow(from: start, to: location) == [start, location])
    }

    @Test func theEffectivePortIsTheSchemesWhenNoneIsWritten() throws {
        #expect(try WebAddress("https://anchor.example").effectivePort == 443)
        #expect(try WebAddress("http://127.0.0.1/x").effectivePort == 80)
        #expect(try WebAddress("https://anchor.example:8443").effectivePort == 8443)
    }
}
