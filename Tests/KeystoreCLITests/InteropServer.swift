import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test server of Tests/Interop (SEP-10, SEP-45, SEP-7), made of stellar-sdk's own code and run by
/// `StellarSDKPython` (made on first use if need be; an error, not a skip, when it cannot be had) on 127.0.0.1. It
/// prints its port as its first line and ends when its standard input closes; it is waited for, so that no process
/// outlives the test.
class InteropServer {
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

    deinit {
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
