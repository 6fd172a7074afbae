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
package struct BatchRequest: Sendable, Equatable {
    package enum Payload: Sendable, Equatable {
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
    package private(set) var id: [UInt8] = Array("null".utf8)
    /// nil when there is no payload field, or more than one, or a repeated key.
    package private(set) var payload: Payload?
    /// A key that appears twice (escaped for a message), in which case nothing is to be signed; the id is then
    /// echoed unless it is the repeated key.
    package private(set) var repeatedKey: String?

    /// Parses one line (without its newline); nil if it is not a JSON object of the right shape.
    package init?(line: UnsafeRawBufferPointer) {
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

    /// The full path: any JSON, read once by `StrictJSON`. A key given twice anywhere is reported, not resolved.
    package init?(decoding line: UnsafeRawBufferPointer) {
        guard let parsed = try? StrictJSON.parseReportingRepeatedKey(Array(line), integersOnly: false) else { return nil }
        let (members, repeated) = parsed
        /// A payload field: nil if it is there and not text; .some(nil) if absent or null.
        func text(_ key: String) -> String?? {
            switch members[key] {
            case nil, .null?: .some(nil)
            case .string(let text)?: .some(text)
            default: nil
            }
        }
        guard let requestID = Self.echoed(members["id"]), let message = text("message"), let base64 = text("base64"),
              let hex = text("hex"), let envelope = text("envelope") else { return nil }
        if let repeated {
            repeatedKey = TerminalText.escaped(repeated.name)
            if !(repeated.atTop && repeated.name == "id") { id = requestID }
            return
        }
        id = requestID
        let payloads = [message, base64, hex, envelope].compactMap { $0 }
        guard payloads.count == 1 else { return }
        if let message { payload = .message(Array(message.utf8)) }
        if let base64 { payload = .base64(Array(base64.utf8)) }
        if let hex { payload = .hex(Array(hex.utf8)) }
        if let envelope { payload = .envelope(Array(envelope.utf8)) }
    }

    /// The caller's id, echoed back as the same kind of JSON value (an integer in its shortest form, so that
    /// `-0` is `0`); nil if it is no id (an object, an array, true or false).
    static func echoed(_ id: StrictJSON.Value?) -> [UInt8]? {
        let json: String? = switch id {
        case nil, .null?: "null"
        case .string(let text)?: jsonString(text)
        case .integer(let digits)?: Int64(digits).map { String($0) } ?? Double(digits).map(number)
        case .number(let text)?: Double(text).map(number)
        default: nil
        }
        return json.map { Array($0.utf8) }
    }

    private static func number(_ value: Double) -> String { value.isFinite ? "\(value)" : "null" }
}

extension BatchRequest {
    /// `text` as a JSON string literal.
    package static func jsonString(_ text: String) -> String { AgentJSON.quoted(text) }
}
