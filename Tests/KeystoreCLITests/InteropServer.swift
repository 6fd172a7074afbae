import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test server of Tests/Interop (SEP-10, SEP-45, SEP-7), made of stellar-sdk's own code and run by
/// `StellarSDKPython` (made on first use if need be; an error, not a skip, when it cannot be had) on 127.0.0.1. It
/// prints its port as its first line and ends when its standard input closes; it is waited for, so that no process
/// outlives the test or suite that started it.
///
/// A serialized suite shares one (`.interopServer { … }`, `InteropServer.ofThisSuite()`), and each test puts it back
/// as a new one is (its mode, its log): starting Python and importing stellar-sdk costs more than most of these
/// tests. Unchecked Sendable: the suite's tests, one at a time, are its only users.
class InteropServer: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }

    init(script name: String, arguments: [String]) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/\(name)").path
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: try StellarSDKPython.path())
        process.arguments = [script] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = [UInt8]()
        while let byte = output.fileHandleForReading.readData(ofLength: 1).first, byte != 0x0A { line.append(byte) }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw CocoaError(.fileReadCorruptFile)
        }
        self.port = port
    }

    deinit { stop() }

    /// Closes its standard input and waits for it to end; once is enough, more does no harm.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    func get(_ path: String) throws -> Data { try Data(contentsOf: URL(string: url + path)!) }

    func post(_ path: String, json: Data) throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = "POST"
        request.httpBody = json
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Int, Data) = (0, Data())
        URLSession.shared.dataTask(with: request) { data, response, _ in
            result = ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data())
            done.signal()
        }.resume()
        done.wait()
        return result
    }

    /// The server's JSON log of the requests it answered, at `path`.
    func log(at path: String) throws -> [[String: Any]] { try JSONSerialization.jsonObject(with: try get(path)) as! [[String: Any]] }
}

extension InteropServer {
    /// The suite's server, inside a suite that has the `.interopServer` trait.
    @TaskLocal static var current: InteropServer?

    /// The suite's server, of the kind its trait started, or a failed test that says the trait is missing.
    static func ofThisSuite<Server: InteropServer>(sourceLocation: SourceLocation = #_sourceLocation) throws -> Server {
        try #require(current as? Server, "the suite needs the .interopServer trait with a \(Server.self)", sourceLocation: sourceLocation)
    }
}

/// Gives a suite one interop server for the time it runs (`InteropServer.current`), started before its first test
/// and stopped (its standard input closed, the process waited for) after its last.
struct InteropServerTrait: SuiteTrait, TestScoping {
    let start: @Sendable () throws -> InteropServer

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let server = try start()
        defer { server.stop() }
        try await InteropServer.$current.withValue(server) { try await function() }
    }
}

extension Trait where Self == InteropServerTrait {
    /// One server for the whole suite, made by `start`; the suite must be `.serialized`.
    static func interopServer(_ start: @escaping @Sendable () throws -> InteropServer) -> Self { InteropServerTrait(start: start) }
}
