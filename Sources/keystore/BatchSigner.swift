#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import StellarKeystore

/// Signs a stream of newline-delimited JSON requests with one unlocked key.
///
/// A request is `{"id": …, "message": "text"}`, or `"base64"` or `"hex"` instead of `"message"`; `id` is optional
/// (a string, a number or null) and is echoed back. Each request gets one result line, in order:
/// `{"id": …, "signature": "…"}` or `{"error": "…", "id": …}`. Blank lines are skipped.
///
/// Results are written whenever keystore is about to wait for more input (and at least every 64 KiB), so a
/// pipeline that sends a request and waits for its answer always gets it; a bulk stream is not paying one
/// system call per line.
struct BatchSigner {
    let sign: (UnsafeRawBufferPointer) -> [UInt8]
    let format: SignatureFormat

    private static let flushSize = 64 * 1024
    /// No request comes near this; a longer line is answered with an error instead of being buffered.
    static let longestLine = 1 << 20

    /// Reads `fd` to its end, answering every request; throws at the end if any request failed, so that the
    /// exit code says so.
    func run(reading fd: Int32) throws {
        var total = 0, failed = 0
        var pending: [UInt8] = []
        var output: [UInt8] = []
        output.reserveCapacity(Self.flushSize + 4096)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var atEnd = false
        var discarding = false
        while !atEnd {
            Console.write(output, to: STDOUT_FILENO)
            output.removeAll(keepingCapacity: true)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                atEnd = true
                if pending.isEmpty { break }
                pending.append(0x0A)  // a last line without its newline is still a request
            } else {
                pending.append(contentsOf: chunk[0..<count])
            }
            var start = 0
            pending.withUnsafeBytes { buffer in
                while let end = buffer[start...].firstIndex(of: 0x0A) {
                    let line = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
                    start = end + 1
                    if discarding {  // the tail of an over-long line, already answered
                        discarding = false
                        continue
                    }
                    guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                    total += 1
                    if !answer(line, into: &output) { failed += 1 }
                    if output.count >= Self.flushSize {
                        Console.write(output, to: STDOUT_FILENO)
                        output.removeAll(keepingCapacity: true)
                    }
                }
            }
            pending.removeFirst(start)
            // A line that never ends must not grow memory without bound: answer it as too long now and drop
            // the rest of it as it arrives.
            if pending.count > Self.longestLine {
                if !discarding {
                    total += 1
                    failed += 1
                    output += Array(#"{"error":"request line longer than 1 MiB","id":null}"#.utf8) + [0x0A]
                }
                discarding = true
                pending.removeAll(keepingCapacity: true)
            }
        }
        Console.write(output, to: STDOUT_FILENO)
        if failed > 0 { throw SigningError.batchFailures(failed: failed, total: total) }
    }

    /// Appends the result line for one request; returns whether it was signed.
    private func answer(_ line: UnsafeRawBufferPointer, into output: inout [UInt8]) -> Bool {
        guard let request = BatchRequest(line: line) else {
            output += Array(#"{"error":"not a JSON object with message, base64 or hex","id":null}"#.utf8) + [0x0A]
            return false
        }
        func failure(_ reason: String) -> Bool {
            output += Array(#"{"error":"\#(reason)","id":"#.utf8) + request.id + Array("}\n".utf8)
            return false
        }
        let payload: [UInt8]
        switch request.payload {
        case nil:
            return failure("give exactly one of message, base64 or hex")
        case .message(let bytes):
            payload = bytes
        case .base64(let text):
            guard let bytes = Base64.decode(text) else { return failure("base64 is not valid base64") }
            payload = bytes
        case .hex(let text):
            guard let bytes = Hex.bytes(String(decoding: text, as: UTF8.self)) else { return failure("hex is not valid hex") }
            payload = bytes
        }
        let signature = payload.withUnsafeBytes(sign)
        output += Self.idOpening
        output += request.id
        output += Self.signatureOpening
        switch format {
        case .base64: Base64.encode(signature, into: &output)
        case .hex: output += Array(Hex.string(signature).utf8)
        }
        output += Self.closing
        return true
    }

    private static let idOpening = Array(#"{"id":"#.utf8)
    private static let signatureOpening = Array(#","signature":""#.utf8)
    private static let closing = Array("\"}\n".utf8)
}
