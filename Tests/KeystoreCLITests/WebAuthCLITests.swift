import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// The SEP-10 server of Tests/Interop/sep10-server.py, built from stellar-sdk's own code, on 127.0.0.1, run by
/// `StellarSDKPython` (made on first use if need be; an error, not a skip, when it cannot be had).
final class SEP10Server: InteropServer, @unchecked Sendable {
    init(clientDomainKey: String, tls: (certificate: String, key: String)? = nil) throws {
        try super.init(script: "sep10-server.py", arguments: ["--client-domain-key", clientDomainKey]
                       + (tls.map { ["--tls-cert", $0.certificate, "--tls-key", $0.key] } ?? []))
    }

    func setMode(_ mode: String) throws { _ = try get("/_control/mode?set=\(mode)") }

    /// The requests to /auth since the mode was set: ("GET", nil) or ("POST", accepted).
    func log() throws -> [[String: Any]] { try log(at: "/_control/log") }

    var posts: Int { get throws { try log().filter { $0["method"] as? String == "POST" }.count } }

    /// The server `WebAuthInteropCLITests` shares: its client domain's key is `clientDomainKey`.
    static func forTheInteropSuite() throws -> SEP10Server { try SEP10Server(clientDomainKey: WebAuthInteropCLITests.clientDomainKey) }
}

/// The claims of a JWT, read without checking its signature (a test reads what the server wrote).
func jwtClaims(_ token: String) throws -> [String: Any] {
    let parts = token.split(separator: ".")
    try #require(parts.count == 3)
    var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
    return try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: payload))) as! [String: Any]
}

/// `keystore web-auth` against a real SEP-10 server made of stellar-sdk's code, one for the suite.
@Suite(.offThePool, .serialized, .interopServer { try SEP10Server.forTheInteropSuite() })
final class WebAuthInteropCLITests {
    static let fixtures = try! WebAuthChallengeFixtures.load()
    let server: SEP10Server
    let home: KeystoreHome
    let golden = KeystoreHome.golden
    /// The client domain's key, imported as identity "client-domain".
    static let clientDomainKey = "GCFIOX77D2ZYIUKXPLGVV7XEAVCWK2G5PSE6BEEGHICVPPD26SPRPPVB"

    init() throws {
        server = try InteropServer.ofThisSuite()
        try server.setMode("valid")  // as a new server is: honest challenges, an empty log
        home = try KeystoreHome(inProcess: true)
        try home.addGolden()
    }

    /// The modes that break one rule of a challenge for a `G…` account with no client domain.
    static var hostileModes: [String] {
        fixtures.cases.filter { $0.rule != nil && $0.clientDomain == nil && $0.clientAccount.hasPrefix("G") }.map(\.name)
    }

    @Test func aSignInGetsATokenTheServerAccepted() throws {
        let result = try home.run(["web-auth", server.url, "--name", golden.name, "--pin-stdin"], stdin: golden.pin + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let token = result.stdout.trimmingCharacters(in: .newlines)
        #expect(try jwtClaims(token)["sub"] as? String == golden.address)
        let log = try server.log()
        #expect(log.count == 2 && log[0]["home_domain"] as? String == "127.0.0.1" && log[0]["account"] as? String == golden.address)
        #expect(log.last?["accepted"] as? Bool == true)
        #expect(result.stderr.hasPrefix("Sign in to \"127.0.0.1\" as \(golden.address) (\(golden.name))\n  server      G"))
    }

    /// One vault read: the review reads the vault's header for the account the challenge is fetched for, and
    /// approving it opens no file again (on 174a545 the vault was read 3 times by one sign-in).
    @Test func aSignInReadsTheVaultOnce() throws {
        let trace = home.path + "/strace.txt"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let result = try home.run(["web-auth", server.url, "--name", golden.name, "--pin-stdin", "--quiet"], stdin: golden.pin + "\n",
                                  prefix: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=openat", "-o", trace])
        #expect(result.status == 0, "\(result.stderr)")
        let opens = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("/\(golden.name).vault\"") }
        #expect(opens.count == 1, "\(opens)")
    }

    @Test func jsonAddsTheClaimsMarkedUnverified() throws {
        let result = try home.run(["web-auth", server.url, "--name", golden.name, "--pin-stdin", "--json", "--quiet"], stdin: golden.pin + "\n")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let claims = try #require(object["claims"] as? [String: Any])
        #expect(claims["sub"] as? String == golden.address && claims["iss"] as? String == server.url + "/auth")
        #expect(claims["exp"] is Int && claims["iat"] is Int)
        #expect(object["claimsVerified"] as? Bool == false && object["account"] as? String == golden.address)
        #expect(try jwtClaims(object["token"] as! String)["sub"] as? String == golden.address)
    }

    /// No PIN can be had here (no terminal, no PIN option): a command that got as far as the PIN would fail
    /// with another code. Exit 12, no POST, and the vault as it was show the refusal came first.
    @Test(arguments: hostileModes)
    func aHostileChallengeIsRefusedBeforeThePINAndNothingIsPosted(_ mode: String) throws {
        try server.setMode(mode)
        let before = home.snapshot()
        let result = try home.run(["web-auth", server.url, "--name", golden.name])
        #expect(result.status == 12, "\(mode): \(result.stderr)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("keystore: The sign-in challenge was refused, nothing was signed: "),
                "\(mode): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try server.posts == 0, "\(mode)")
        #expect(home.snapshot() == before)
    }

    @Test func theClientDomainSignsToo() throws {
        let seed = Self.fixtures.clientDomainSeed
        let signup = try home.run(["signup", "--import", "--name", "client-domain", "--pin-stdin", "--kdf", "interactive"], stdin: seed + "\n135792\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let domain = "http://localhost:\(server.port)"
        let result = try home.run(["web-auth", server.url, "--name", golden.name, "--client-domain", domain,
                                   "--client-domain-name", "client-domain", "--pin-stdin"], stdin: golden.pin + "\n135792\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try jwtClaims(result.stdout.trimmingCharacters(in: .newlines))["client_domain"] as? String == "localhost")
        #expect(try server.log().first?["client_domain"] as? String == "localhost")
        #expect(result.stderr.contains("client      \"localhost\" (\(Self.clientDomainKey))"))

        // Another identity for the client domain is refused before any PIN.
        let wrong = try home.run(["web-auth", server.url, "--name", golden.name, "--client-domain", domain,
                                  "--client-domain-name", golden.name])
        #expect(wrong.status == 2 && wrong.stderr.contains("client domain's signing key is \(Self.clientDomainKey)"), "\(wrong.stderr)")
    }

    @Test func aServerErrorIsOneEscapedLine() throws {
        try server.setMode("error")
        let result = try home.run(["web-auth", server.url, "--name", golden.name])
        #expect(result.status == 13 && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("answered HTTP 400: Too many challenges \\x1b[31mtry later") && !result.stderr.contains("\u{1B}"))
    }

    @Test func aRedirectToAnotherHostIsNotFollowed() throws {
        try server.setMode("redirect-elsewhere")
        let result = try home.run(["web-auth", server.url, "--name", golden.name])
        #expect(result.status == 13 && result.stderr.contains("another scheme, host or port; it was not followed"), "\(result.stderr)")
        #expect(try server.log().count == 1)
    }

    /// Another port of the same host is another server (which any local user may run): a redirect there is not
    /// followed, and that server is never asked anything.
    @Test func aRedirectToAnotherPortOfTheSameHostIsNotFollowed() throws {
        let other = try SEP10Server(clientDomainKey: Self.clientDomainKey)
        try server.setMode("redirect-to-port-\(other.port)")
        let result = try home.run(["web-auth", server.url, "--name", golden.name])
        #expect(result.status == 13 && result.stderr.contains("redirects to http://127.0.0.1:\(other.port)/auth?"), "\(result.stderr)")
        #expect(result.stderr.contains("another scheme, host or port; it was not followed"), "\(result.stderr)")
        #expect(try server.log().count == 1)
        #expect(try other.log().isEmpty, "the other port was asked for a challenge")
    }

    @Test func anAnswerOverTheCapIsRefused() throws {
        try server.setMode("huge")
        let result = try home.run(["web-auth", server.url, "--name", golden.name])
        #expect(result.status == 13 && result.stderr.contains("answered with more than 256 KiB"), "\(result.stderr)")
    }

    /// An HTTPS server whose certificate does not verify (self-signed, made here by openssl) is not talked to.
    @Test func aCertificateThatDoesNotVerifyIsAnError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try KeystoreProcess(program: "openssl").run(
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"])
        try #require(made.status == 0, "\(made.stderr)")
        let tls = try SEP10Server(clientDomainKey: Self.clientDomainKey, tls: (directory + "/cert.pem", directory + "/key.pem"))
        let result = try home.run(["web-auth", "https://127.0.0.1:\(tls.port)", "--name", golden.name])
        #expect(result.status == 13 && result.stderrLines.count == 1 && result.stderr.contains("certificate"), "\(result.stderr)")
    }

    /// `--challenge`: a script with its own HTTP client fetches, keystore checks and signs, the script posts.
    @Test func aChallengeGivenOfflineSignsWhatTheServerAccepts() throws {
        let answer = try JSONSerialization.jsonObject(with: try server.get("/auth?account=\(golden.address)&home_domain=127.0.0.1")) as! [String: Any]
        let toml = String(decoding: try server.get("/.well-known/stellar.toml"), as: UTF8.self)
        let serverKey = try #require(toml.split(separator: "\n").first { $0.hasPrefix("SIGNING_KEY") }?.split(separator: "\"")[1])
        let result = try home.run(["web-auth", "--challenge", answer["transaction"] as! String, "--server-key", String(serverKey),
                                   "--home-domain", "127.0.0.1", "--web-auth-domain", "127.0.0.1", "--network", "testnet",
                                   "--name", golden.name, "--pin-stdin"], stdin: golden.pin + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let body = try JSONSerialization.data(withJSONObject: ["transaction": result.stdout.trimmingCharacters(in: .newlines)])
        let posted = try server.post("/auth", json: body)
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
    }
}

/// What needs no server: offline checks, and addresses refused before any connection.
@Suite(.offThePool) struct WebAuthCLITests {
    static let fixtures = try! WebAuthChallengeFixtures.load()

    /// The rules checked before the time bounds hold whatever the clock says; the honest fixture's bounds lie in
    /// 2027, so today it is refused by them.
    @Test(arguments: ["sequence", "source", "no-time-bounds", "fee-bump", "valid"])
    func aChallengeGivenOfflineIsCheckedBeforeThePIN(_ name: String) throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == name })
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["web-auth", "--challenge", "--server-key", fixture.serverKey, "--home-domain", fixture.homeDomain,
                                   "--web-auth-domain", fixture.webAuthDomain, "--network", "testnet", "--name", KeystoreHome.golden.name,
                                   "--json"], stdin: fixture.challenge)
        #expect(result.status == 12, "\(name): \(result.stdout)")
        #expect(result.stdout.contains("\"kind\":\"challenge-refused\""))
    }

    @Test(arguments: [("http://example.com", "plain http:// to another machine"), ("ftp://127.0.0.1", "is not an https:// URL"),
                      ("exa mple.com", "is not a domain name or a URL"), ("https://user@127.0.0.1", "is not an https:// URL")])
    func anAddressThatIsNotHTTPSIsRefusedBeforeAnyConnection(_ target: String, _ said: String) throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["web-auth", target, "--name", KeystoreHome.golden.name])
        #expect(result.status == 2 && result.stderr.contains(said), "\(result.stderr)")
    }

    @Test func aServerThatIsNotThereIsExit13() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["web-auth", "http://127.0.0.1:\(closedLoopbackPort())", "--name", KeystoreHome.golden.name])
        #expect(result.status == 13 && result.stderr.contains("could not be reached"), "\(result.stderr)")
    }
}

/// libcurl is loaded by `web-auth` alone: the dynamic loader's own trace (glibc's LD_DEBUG) shows it.
@Suite(.offThePool) struct WebAuthLoadingCLITests {
    @Test func onlyWebAuthLoadsLibcurl() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        var traced = home.keystore
        traced.environment["LD_DEBUG"] = "libs"
        for arguments in [["--version"], ["list"], ["address", "--name", KeystoreHome.golden.name]] {
            let result = try traced.run(arguments)
            #expect(result.status == 0 && result.stderr.contains("calling init") && !result.stderr.contains("libcurl"), "\(arguments)")
        }
        let webAuth = try traced.run(["web-auth", "http://127.0.0.1:1", "--name", KeystoreHome.golden.name])
        #expect(webAuth.status == 13 && webAuth.stderr.contains("libcurl.so.4"))
    }
}

/// A loopback port nothing listens on: bound, read back, then closed.
func closedLoopbackPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: UInt32(0x7F00_0001).bigEndian),
                              sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(fd, $0, length); _ = getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}
