import Foundation
import Testing
import TestFixtures
@testable import StellarWebAuth

/// Tests/Interop/fetch-server.py on 127.0.0.1, for the rules `WebAuthService.fetch` and `HTTP` keep over a real
/// connection. Closing its standard input ends it; it is waited for, so that no process outlives the test.
final class FetchServer {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/fetch-server.py").path

    let process = Process()
    let input = Pipe()
    let port: Int
    var origin: String { "http://127.0.0.1:\(port)" }

    struct NoPort: Error {}

    init() throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = [UInt8]()
        while let byte = output.fileHandleForReading.readData(ofLength: 1).first, byte != 0x0A { line.append(byte) }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw NoPort()
        }
        self.port = port
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The paths requested so far.
    func requested() throws -> [String] {
        let body = try HTTP().get(try WebAddress(origin + "/_log")).body
        return String(decoding: body, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// `fetch` from `path` on this server, as `WebAuthService` runs it.
    func fetch(_ path: String, http: HTTP = HTTP()) throws -> HTTP.Response {
        try WebAuthService.fetch(try WebAddress(origin + path)) { try http.get($0) }
    }
}

@Suite(.offThePool) struct FetchTests {
    /// https anywhere; plain http only to this machine (127.0.0.0/8, ::1, localhost), refused before any
    /// connection otherwise, a name that merely starts like a loopback address included.
    @Test func onlyHTTPSOrPlainHTTPToLoopback() throws {
        for allowed in ["https://anchor.example/auth", "http://127.0.0.1:8000/auth", "http://127.1.2.3/", "http://[::1]:8000/",
                        "http://localhost/auth"] {
            #expect(throws: Never.self, "\(allowed)") { try WebAddress(allowed) }
        }
        for plain in ["http://anchor.example/auth", "http://10.0.0.1/", "http://127.0.0.1.anchor.example/", "http://[::2]/"] {
            #expect(throws: WebAuthClientError.plainHTTP(plain)) { try WebAddress(plain) }
        }
        for bad in ["ftp://anchor.example/", "https://user@anchor.example/", "https:///auth", "https://anchor.example/a b"] {
            #expect(throws: WebAuthClientError.badAddress(bad)) { try WebAddress(bad) }
        }
    }

    @Test func aRedirectWithinTheOriginIsFollowed() throws {
        let server = try FetchServer()
        let absolute = try server.fetch("/redirect?to=\(server.origin)/ok")
        #expect(absolute.status == 200 && absolute.body == Array(#"{"ok":true}"#.utf8))
        let relative = try server.fetch("/redirect?to=/ok")
        #expect(relative.body == Array(#"{"ok":true}"#.utf8))
        #expect(try server.requested() == ["/redirect?to=\(server.origin)/ok", "/ok", "/redirect?to=/ok", "/ok"])
    }

    /// Another port of the same host is another server: the redirect is refused and the other server never asked.
    @Test func aRedirectToAnotherPortIsRefusedAndNeverRequested() throws {
        let server = try FetchServer(), other = try FetchServer()
        #expect(throws: WebAuthClientError.redirectElsewhere(from: "\(server.origin)/redirect?to=\(other.origin)/ok", to: "\(other.origin)/ok")) {
            try server.fetch("/redirect?to=\(other.origin)/ok")
        }
        #expect(try other.requested().isEmpty)
    }

    @Test func aRedirectToAnotherSchemeOrHostIsRefused() throws {
        let server = try FetchServer()
        let https = "https://127.0.0.1:\(server.port)/ok"
        #expect(throws: WebAuthClientError.redirectElsewhere(from: "\(server.origin)/redirect?to=\(https)", to: https)) {
            try server.fetch("/redirect?to=\(https)")
        }
        let localhost = "http://localhost:\(server.port)/ok"
        #expect(throws: WebAuthClientError.redirectElsewhere(from: "\(server.origin)/redirect?to=\(localhost)", to: localhost)) {
            try server.fetch("/redirect?to=\(localhost)")
        }
        // Plain http to anywhere else is not even an address to go to.
        #expect(throws: WebAuthClientError.plainHTTP("http://anchor.example/ok")) { try server.fetch("/redirect?to=http://anchor.example/ok") }
        #expect(try server.requested().count == 3)
    }

    @Test func redirectsEndAfterAFew() throws {
        let server = try FetchServer()
        #expect(throws: WebAuthClientError.tooManyRedirects(url: "\(server.origin)/loop")) { try server.fetch("/loop") }
        #expect(try server.requested() == Array(repeating: "/loop", count: 4))
    }

    @Test func aStatusOtherThan200IsTheServersError() throws {
        let server = try FetchServer()
        #expect(throws: WebAuthClientError.serverError(url: "\(server.origin)/status/500", status: 500, body: Array("no".utf8))) {
            try server.fetch("/status/500")
        }
        #expect(throws: WebAuthClientError.serverError(url: "\(server.origin)/status/204", status: 204, body: [])) {
            try server.fetch("/status/204")
        }
    }

    /// A body over the limit is an error, never a truncated answer: whether the server says its length or not.
    @Test func aLargeAnswerIsRefusedNotCut() throws {
        let server = try FetchServer()
        let http = HTTP(timeoutSeconds: 15, limit: 1024)
        #expect(try server.fetch("/big?bytes=1024", http: http).body.count == 1024)
        for path in ["/big?bytes=1025", "/stream?bytes=100000"] {
            #expect(throws: WebAuthClientError.responseTooLarge(url: server.origin + path, limit: 1024)) { try server.fetch(path, http: http) }
        }
    }

    @Test func aSlowServerTimesOut() throws {
        let server = try FetchServer()
        let started = ContinuousClock.now
        #expect(throws: WebAuthClientError.timedOut(url: "\(server.origin)/slow?seconds=10", seconds: 1)) {
            try server.fetch("/slow?seconds=10", http: HTTP(timeoutSeconds: 1))
        }
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
