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
/// `{"id": …, "signature": "…"}` or `{"id": …, "error": "…"}`. Blank lines are skipped. Each result is written
/// with its own write(2), so a pipeline reads it as soon as it is made.
struct BatchSigner {
    let sign: ([UInt8]) -> [UInt8]
    let format: SignatureFormat

    private struct Request: Decodable {
        var id: RequestID?
        var message: String?
        var base64: String?
        var hex: String?
    }

    /// The caller's id, echoed back as the same kind of JSON value.
    private enum RequestID: Decodable {
        case string(String), integer(Int64), number(Double), null

        init(from decoder: Decoder) throws {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() { self = .null }
            else if let text = try? value.decode(String.self) { self = .string(text) }
            else if let integer = try? value.decode(Int64.self) { self = .integer(integer) }
            else { self = .number(try value.decode(Double.self)) }
        }

        var json: String {
            switch self {
            case .string(let text): BatchSigner.jsonString(text)
            case .integer(let integer): String(integer)
            case .number(let number): number.isFinite ? "\(number)" : "null"
            case .null: "null"
            }
        }
    }

    /// Reads `fd` to its end; returns how many requests there were and how many failed.
    func run(reading fd: Int32) -> (total: Int, failed: Int) {
        var total = 0, failed = 0
        let decoder = JSONDecoder()
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var atEnd = false
        while !atEnd {
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
            while let end = pending[start...].firstIndex(of: 0x0A) {
                let line = pending[start..<end]
                start = end + 1
                guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                total += 1
                let result = answer(Data(line), decoder: decoder)
                if result.failed { failed += 1 }
                Console.write(Array(result.line.utf8), to: STDOUT_FILENO)
            }
            pending.removeFirst(start)
        }
        return (total, failed)
    }

    private func answer(_ line: Data, decoder: JSONDecoder) -> (line: String, failed: Bool) {
        guard let request = try? decoder.decode(Request.self, from: line) else {
            return (#"{"error":"not a JSON object with message, base64 or hex","id":null}"# + "\n", true)
        }
        let id = request.id?.json ?? "null"
        func failure(_ reason: String) -> (String, Bool) { (#"{"error":"\#(reason)","id":\#(id)}"# + "\n", true) }
        let payloads = [request.message != nil, request.base64 != nil, request.hex != nil].filter { $0 }.count
        guard payloads == 1 else { return failure("give exactly one of message, base64 or hex") }
        let payload: [UInt8]
        if let message = request.message {
            payload = Array(message.utf8)
        } else if let base64 = request.base64 {
            guard let data = Data(base64Encoded: base64) else { return failure("base64 is not valid base64") }
            payload = Array(data)
        } else {
            guard let bytes = Hex.bytes(request.hex!) else { return failure("hex is not valid hex") }
            payload = bytes
        }
        return (#"{"id":\#(id),"signature":"\#(format.encode(sign(payload)))"}"# + "\n", false)
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += "\\u00" + Hex.string([UInt8(scalar.value)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
