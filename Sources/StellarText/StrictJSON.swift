/// A strict reading of JSON from outside the process: the files keystore writes (vaults, sessions, the wrong-PIN
/// counter, the calibration), batch requests, the agent's protocol, a SEP-10 server's answers. The one JSON
/// reader for all of them: nothing read from outside goes through another decoder.
///
/// JSON leaves two things to the reader: which of two equal keys wins, and whether `2.0` is an integer. Python's
/// `json` takes the last key, Swift's decoder the first, so a file with `publicKey` twice would be two different
/// vaults to two readers of docs/FORMAT.md. keystore accepts neither: a key may appear once per object, and where
/// the format says integer a number is written as plain digits.
package enum StrictJSON {
    package struct Violation: Error, Equatable, CustomStringConvertible {
        package let reason: String
        /// For a key that appears twice in one object: the key, and whether that object is the top-level one.
        package let repeatedKey: (name: String, atTop: Bool)?
        /// The line (from 1) the reader had reached when it stopped, for a reader that points a person at the
        /// place (a policy file); nil when not known.
        package var line: Int?
        package init(_ reason: String, repeatedKey: (name: String, atTop: Bool)? = nil) {
            self.reason = reason
            self.repeatedKey = repeatedKey
        }
        package var description: String { reason }

        /// The reason says it all (a repeated key is named in it).
        package static func == (a: Violation, b: Violation) -> Bool { a.reason == b.reason }
    }

    /// The JSON type of a value, for messages such as "'version' is a string, not an integer".
    package enum Kind: String, Sendable {
        case object = "an object", array = "an array", string = "a string", integer = "an integer"
        case number = "a fraction or exponent number", boolean = "true or false", null = "null"
    }

    /// No file of ours nests deeper than 3; a deep nest must not exhaust the stack.
    static let deepestNesting = 32

    /// A value as read. A number keeps its text, so that each field converts it to its own type and range
    /// (`Value.integer(as:)`, `Value.double`).
    package indirect enum Value: Sendable, Equatable {
        case object([String: Value]), array([Value]), string(String), integer(String), number(String), boolean(Bool), null

        package var kind: Kind {
            switch self {
            case .object: .object
            case .array: .array
            case .string: .string
            case .integer: .integer
            case .number: .number
            case .boolean: .boolean
            case .null: .null
            }
        }

        package var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }

        package var object: [String: Value]? {
            if case .object(let members) = self { return members }
            return nil
        }

        /// The number, integer or not, as the nearest `Double`.
        package var double: Double? {
            switch self {
            case .integer(let text), .number(let text): Double(text)
            default: nil
            }
        }

        /// The integer, if it is one and fits `type`.
        package func integer<Integer: FixedWidthInteger>(as type: Integer.Type) -> Integer? {
            if case .integer(let digits) = self { return Integer(digits) }
            return nil
        }
    }

    /// Checks `bytes` and returns the kind of each member of the top-level object. With `integersOnly`, every
    /// number must be an integer.
    @discardableResult
    package static func check(_ bytes: [UInt8], integersOnly: Bool) throws -> [String: Kind] {
        try parse(bytes, integersOnly: integersOnly).mapValues(\.kind)
    }

    /// Checks `bytes` and returns the top-level object's members: a reader of our own files needs no other
    /// decoder (Foundation's costs a signing command more than the rest of its reading).
    package static func parse(_ bytes: [UInt8], integersOnly: Bool) throws -> [String: Value] {
        try parse(bytes, integersOnly: integersOnly, reportingRepeatedKey: false).members
    }

    /// As `parse`, except that a key given twice is reported rather than refused: the first value is kept, and the
    /// first such key returned, for a reader that must answer a request it will not act on (a batch line's id).
    package static func parseReportingRepeatedKey(_ bytes: [UInt8], integersOnly: Bool) throws
        -> (members: [String: Value], repeatedKey: (name: String, atTop: Bool)?) {
        try parse(bytes, integersOnly: integersOnly, reportingRepeatedKey: true)
    }

    private static func parse(_ bytes: [UInt8], integersOnly: Bool, reportingRepeatedKey: Bool) throws
        -> (members: [String: Value], repeatedKey: (name: String, atTop: Bool)?) {
        var reader = Reader(bytes: bytes, integersOnly: integersOnly, reportsRepeatedKeys: reportingRepeatedKey)
        reader.skipSpace()
        guard let first = reader.peek else { throw Violation("it is not valid JSON") }
        guard first == UInt8(ascii: "{") else { throw Violation("it is not a JSON object") }
        let object: Value
        do {
            object = try reader.value(key: nil, depth: 0)
        } catch var violation as Violation {
            violation.line = 1 + bytes[..<min(reader.index, bytes.count)].count { $0 == 0x0A }
            throw violation
        }
        reader.skipSpace()
        guard reader.index == bytes.count else { throw Violation("it has bytes after its JSON object") }
        return (object.object ?? [:], reader.repeatedKey)
    }

    private struct Reader {
        let bytes: [UInt8]
        let integersOnly: Bool
        let reportsRepeatedKeys: Bool
        var index = 0
        /// The first key given twice, when reported rather than refused.
        var repeatedKey: (name: String, atTop: Bool)?

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ literal: String) throws {
            for byte in literal.utf8 {
                guard peek == byte else { throw Violation("it is not valid JSON") }
                index += 1
            }
        }

        /// Reads one value.
        mutating func value(key: String?, depth: Int) throws -> Value {
            guard depth <= deepestNesting else { throw Violation("it nests too deeply") }
            skipSpace()
            switch peek {
            case UInt8(ascii: "{"):
                index += 1
                var members: [String: Value] = [:]
                skipSpace()
                if peek == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard peek == UInt8(ascii: "\"") else { throw Violation("it is not valid JSON") }
                    let name = try string()
                    let repeated = members[name] != nil
                    if repeated {
                        guard reportsRepeatedKeys else {
                            throw Violation("the key '\(TerminalText.escaped(name))' appears twice", repeatedKey: (name, depth == 0))
                        }
                        if repeatedKey == nil { repeatedKey = (name, depth == 0) }
                    }
                    skipSpace()
                    try expect(":")
                    let member = try value(key: name, depth: depth + 1)
                    if !repeated { members[name] = member }
                    skipSpace()
                    if peek == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect("}")
                    return .object(members)
                }
            case UInt8(ascii: "["):
                index += 1
                var elements: [Value] = []
                skipSpace()
                if peek == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements)
                }
                while true {
                    elements.append(try value(key: key, depth: depth + 1))
                    skipSpace()
                    if peek == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect("]")
                    return .array(elements)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .boolean(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .boolean(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default:
                let start = index
                let kind = try number()
                if kind == .number && integersOnly {
                    throw Violation("'\(TerminalText.escaped(key ?? "a value"))' is not an integer written as digits")
                }
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                return kind == .number ? .number(text) : .integer(text)
            }
        }

        mutating func digits() -> Int {
            let start = index
            while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }

        mutating func number() throws -> Kind {
            if peek == UInt8(ascii: "-") { index += 1 }
            if peek == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() > 0 else { throw Violation("it is not valid JSON") }
            }
            var kind = Kind.integer
            if peek == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw Violation("it is not valid JSON") }
                kind = .number
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw Violation("it is not valid JSON") }
                kind = .number
            }
            return kind
        }

        /// A string, decoded, so that `"a"` and `"\u0061"` are seen as the same key.
        mutating func string() throws -> String {
            index += 1  // the opening quote
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() throws {
                guard !raw.isEmpty else { return }
                guard let text = String(validating: raw, as: UTF8.self) else { throw Violation("it is not valid UTF-8") }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
            }
            while true {
                guard let byte = peek else { throw Violation("it is not valid JSON") }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    try flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flush()
                    guard let escape = peek else { throw Violation("it is not valid JSON") }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escape))
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var unit = try hex4()
                        if (0xD800..<0xDC00).contains(unit), peek == UInt8(ascii: "\\") {
                            index += 1
                            try expect("u")
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw Violation("it is not valid JSON") }
                            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(unit) else { throw Violation("it is not valid JSON") }
                        scalars.append(scalar)
                    default:
                        throw Violation("it is not valid JSON")
                    }
                default:
                    guard byte >= 0x20 else { throw Violation("it is not valid JSON") }
                    raw.append(byte)
                }
            }
        }

        static func hexDigit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        mutating func hex4() throws -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = peek, let digit = Self.hexDigit(byte) else { throw Violation("it is not valid JSON") }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
