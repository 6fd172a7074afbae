import FoundationEssentials
import StellarKeys
import StellarTransactions
import StellarText

/// One request line of a batch of payloads, messages or transactions to sign, reduced to what signing
/// needs: its id as JSON text to echo back, and its one payload.
///
/// A request is a JSON object with exactly one of `message` (text), `base64`, `hex` or `envelope` (a base64
/// transaction envelope), and optionally `id` (a string, a number or null). Other fields are ignored. A request
/// in which any key appears twice in one object is refused (`repeatedKey`): Swift's decoder would read the first
/// value and Python or jq the last, so a policy filter in front of the signer would see another request than the
/// one signed.
public struct BatchRequest: Sendable, Equatable {
    public enum Payload: Sendable, Equatable {
        case message([UInt8]), base64([UInt8]), hex([UInt8]), envelope([UInt8])
    }

    enum Key {
        case id, message, base64, hex, envelope, other

        init(_ bytes: Slice<UnsafeRawBufferPointer>) {
            self = if bytes.elementsEqual("id".utf8) { .id }
                else if bytes.elementsEqual("message".utf8) { .message }
                else if bytes.elementsEqual("base64".utf8) { .base64 }
                else if bytes.elementsEqual("hex".utf8) { .hex }
                else if bytes.elementsEqual("envelope".utf8) { .envelope }
                else { .other }
        }
    }

    /// What ends a number or literal value.
    private static let valueEnds: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0D]

    /// The id as JSON text, ready to echo: `null` when there was none.
    public private(set) var id: [UInt8] = Array("null".utf8)
    /// nil when there is no payload field, or more than one, or a repeated key.
    public private(set) var payload: Payload?
    /// A key that appears twice (escaped for a message), in which case nothing is to be signed; the id is then
    /// echoed unless it is the repeated key.
    public private(set) var repeatedKey: String?

    private static let decoder = JSONDecoder()

    /// Parses one line (without its newline); nil if it is not a JSON object of the right shape.
    public init?(line: UnsafeRawBufferPointer) {
        guard let request = Self(flat: line) ?? Self(decoding: line) else { return nil }
        self = request
    }

    /// The fast path: one flat object of ASCII strings without escapes, numbers and null, which is what
    /// scripts send. Anything else returns nil and goes to `init(decoding:)`, which handles all of JSON.
    package init?(flat line: UnsafeRawBufferPointer) {
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
        var seen: [Range<Int>] = []
        var payloads = 0
        if !expect(UInt8(ascii: "}")) {
            repeat {
                guard let keyRange = string(), expect(UInt8(ascii: ":")) else { return nil }
                // A repeated key, ours or not: left to the full parser, which refuses it.
                guard !seen.contains(where: { line[$0].elementsEqual(line[keyRange]) }) else { return nil }
                seen.append(keyRange)
                let key = Key(line[keyRange])
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
                    case .envelope: payload = .envelope(bytes); payloads += 1
                    case .other: break
                    }
                } else {
                    let valueStart = index
                    while index < line.count, !Self.valueEnds.contains(line[index]) { index += 1 }
                    let literal = Array(line[valueStart..<index])
                    // Only plain integers and null: other numbers and literals are checked by the full parser,
                    // and so is -0, which it echoes as 0.
                    let digits = literal.first == UInt8(ascii: "-") ? literal.dropFirst() : literal[...]
                    let isInteger = (1...18).contains(digits.count)
                        && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                        && (digits.count == 1 || digits.first != UInt8(ascii: "0"))
                        && !literal.elementsEqual("-0".utf8)
                    guard key == .id, isInteger || literal.elementsEqual("null".utf8) else { return nil }
                    id = literal
                }
            } while expect(UInt8(ascii: ","))
            guard expect(UInt8(ascii: "}")) else { return nil }
        }
        skipSpace()
        guard index == line.count else { return nil }
        if payloads != 1 { payload = nil }
    }

    /// The full path: any JSON, through JSONDecoder.
    package init?(decoding line: UnsafeRawBufferPointer) {
        struct Request: Decodable {
            var id: RequestID?
            var message: String?
            var base64: String?
            var hex: String?
            var envelope: String?
        }
        var repeated: (name: String, atTop: Bool)?
        do {
            try StrictJSON.check(Array(line), integersOnly: false)
        } catch let violation as StrictJSON.Violation {
            repeated = violation.repeatedKey
        } catch {}
        guard let request = try? Self.decoder.decode(Request.self, from: Data(line)) else { return nil }
        if let repeated {
            repeatedKey = TerminalText.escaped(repeated.name)
            if !(repeated.atTop && repeated.name == "id") { id = Array((request.id?.json ?? "null").utf8) }
            return
        }
        id = Array((request.id?.json ?? "null").utf8)
        let payloads = [request.message, request.base64, request.hex, request.envelope].compactMap { $0 }
        guard payloads.count == 1 else { return }
        if let message = request.message { payload = .message(Array(message.utf8)) }
        if let base64 = request.base64 { payload = .base64(Array(base64.utf8)) }
        if let hex = request.hex { payload = .hex(Array(hex.utf8)) }
        if let envelope = request.envelope { payload = .envelope(Array(envelope.utf8)) }
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
        case .string(let text): BatchRequest.jsonString(text)
        case .integer(let integer): String(integer)
        case .number(let number): number.isFinite ? "\(number)" : "null"
        case .null: "null"
        }
    }
}

extension BatchRequest {
    /// `text` as a JSON string literal.
    public static func jsonString(_ text: String) -> String { AgentJSON.quoted(text) }
}
