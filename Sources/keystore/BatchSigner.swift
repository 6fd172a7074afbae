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
        let decoder = JSONDecoder()
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
                    if !answer(line, decoder: decoder, into: &output) { failed += 1 }
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
    private func answer(_ line: UnsafeRawBufferPointer, decoder: JSONDecoder, into output: inout [UInt8]) -> Bool {
        guard let request = FlatRequest(line) ?? FlatRequest(decoding: line, with: decoder) else {
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

/// A request reduced to what signing needs: its id as JSON text to echo, and its one payload.
private struct FlatRequest {
    enum Payload {
        case message([UInt8]), base64([UInt8]), hex([UInt8])
    }

    enum Key {
        case id, message, base64, hex, other

        init(_ bytes: Slice<UnsafeRawBufferPointer>) {
            self = if bytes.elementsEqual("id".utf8) { .id }
                else if bytes.elementsEqual("message".utf8) { .message }
                else if bytes.elementsEqual("base64".utf8) { .base64 }
                else if bytes.elementsEqual("hex".utf8) { .hex }
                else { .other }
        }
    }

    /// What ends a number or literal value.
    private static let valueEnds: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0D]

    var id: [UInt8] = Array("null".utf8)
    /// nil when there is no payload field, or more than one.
    var payload: Payload?

    /// The fast path: one flat object of ASCII strings without escapes, numbers and null, which is what
    /// scripts send. Anything else returns nil and goes to `init(decoding:with:)`, which handles all of JSON.
    init?(_ line: UnsafeRawBufferPointer) {
        var index = 0
        func skipSpace() { while index < line.count, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D { index += 1 } }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < line.count, line[index] == byte else { return false }
            index += 1
            return true
        }
        /// A string's contents (between the quotes), if it has no escapes and only printable ASCII.
        func string() -> Range<Int>? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < line.count, line[index] != UInt8(ascii: "\"") {
                guard line[index] >= 0x20, line[index] < 0x7F, line[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < line.count else { return nil }
            index += 1
            return start..<(index - 1)
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        var seen: [Key] = []
        var payloads = 0
        if expect(UInt8(ascii: "}")) { payload = nil; return }
        repeat {
            guard let keyRange = string(), expect(UInt8(ascii: ":")) else { return nil }
            let key = Key(line[keyRange])
            if key != .other {
                guard !seen.contains(key) else { return nil }  // a repeated key: leave it to the full parser
                seen.append(key)
            }
            skipSpace()
            guard index < line.count else { return nil }
            if line[index] == UInt8(ascii: "\"") {
                let valueStart = index
                guard let value = string() else { return nil }
                let bytes = Array(line[value])
                switch key {
                case .id: id = Array(line[valueStart..<index])
                case .message: payload = .message(bytes); payloads += 1
                case .base64: payload = .base64(bytes); payloads += 1
                case .hex: payload = .hex(bytes); payloads += 1
                case .other: break
                }
            } else {
                let valueStart = index
                while index < line.count, !Self.valueEnds.contains(line[index]) { index += 1 }
                let literal = Array(line[valueStart..<index])
                // Only plain integers and null: other numbers and literals are checked by the full parser.
                let digits = literal.first == UInt8(ascii: "-") ? literal.dropFirst() : literal[...]
                let isInteger = (1...18).contains(digits.count)
                    && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                    && (digits.count == 1 || digits.first != UInt8(ascii: "0"))
                guard key == .id, isInteger || literal == Array("null".utf8) else { return nil }
                id = literal
            }
        } while expect(UInt8(ascii: ","))
        guard expect(UInt8(ascii: "}")) else { return nil }
        skipSpace()
        guard index == line.count else { return nil }
        if payloads != 1 { payload = nil }
    }

    /// The full path: any JSON, through JSONDecoder.
    init?(decoding line: UnsafeRawBufferPointer, with decoder: JSONDecoder) {
        struct Request: Decodable {
            var id: RequestID?
            var message: String?
            var base64: String?
            var hex: String?
        }
        guard let request = try? decoder.decode(Request.self, from: Data(line)) else { return nil }
        id = Array((request.id?.json ?? "null").utf8)
        let payloads = [request.message, request.base64, request.hex].compactMap { $0 }
        guard payloads.count == 1 else { return }
        if let message = request.message { payload = .message(Array(message.utf8)) }
        if let base64 = request.base64 { payload = .base64(Array(base64.utf8)) }
        if let hex = request.hex { payload = .hex(Array(hex.utf8)) }
    }
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
        case .string(let text): Self.jsonString(text)
        case .integer(let integer): String(integer)
        case .number(let number): number.isFinite ? "\(number)" : "null"
        case .null: "null"
        }
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

/// Standard base64 (RFC 4648 §4, padded), without going through `String` and `Data` for every line.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let n = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
            output += rest == 2 ? [alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")] : [UInt8(ascii: "="), UInt8(ascii: "=")]
        }
    }

    /// Strict decoding: length a multiple of 4, padding only at the end, no other characters.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            let last = index + 4 == text.count
            let padding = last ? (text[index + 3] == UInt8(ascii: "=") ? (text[index + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var n: UInt32 = 0
            for offset in 0..<(4 - padding) {
                let value = values[Int(text[index + offset])]
                guard value != 0xFF else { return nil }
                n |= UInt32(value) << (18 - 6 * offset)
            }
            bytes.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { bytes.append(UInt8(n >> 8 & 0xFF)) }
            if padding < 1 { bytes.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return bytes
    }
}
