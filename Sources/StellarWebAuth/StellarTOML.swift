import StellarKeys
import StellarText

/// The top-level keys of a stellar.toml (SEP-1), read strictly: keystore needs only `WEB_AUTH_ENDPOINT`,
/// `SIGNING_KEY` and `NETWORK_PASSPHRASE`, which TOML puts before the first table. The reader parses every
/// key-value pair of the root table (strings with their escapes, multi-line strings, arrays, inline tables and
/// bare values, which it skips without interpreting), then the rest of the file for its syntax and its `[table]`
/// headers. A key given twice, a key that is both a value and a table (`SIGNING_KEY.x = 1` and `SIGNING_KEY = "G…"`,
/// in either order, or a `[SIGNING_KEY]` header after it), an unclosed string or bracket, or text after a value is
/// an error, as in TOML, rather than a guess: another reader could take the other of two definitions.
///
/// Not a TOML library: the machine's (TOMLKit) brings all of Foundation and its ICU data into the binary (see
/// docs/LIBRARY.md), for three strings that hold no secret.
package struct StellarTOML: Sendable {
    package let strings: [String: String]
    /// The most read: a stellar.toml is a few kilobytes.
    package static let limit = 256 << 10

    package init(_ bytes: [UInt8]) throws {
        var parser = Parser(bytes: bytes)
        strings = try parser.rootStrings()
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0
        var line = 1

        func fail(_ reason: String) -> WebAuthClientError { .badStellarTOML(reason: "line \(line): \(reason)") }
        var current: UInt8? { index < bytes.count ? bytes[index] : nil }
        func peek(_ text: String) -> Bool { bytes[index...].starts(with: Array(text.utf8)) }

        mutating func advance() {
            if bytes[index] == 0x0A { line += 1 }
            index += 1
        }

        mutating func skipBlank(newlines: Bool) {
            while let byte = current {
                if byte == 0x20 || byte == 0x09 || byte == 0x0D || (newlines && byte == 0x0A) {
                    advance()
                } else if byte == UInt8(ascii: "#") {
                    while let b = current, b != 0x0A { advance() }
                } else {
                    return
                }
            }
        }

        mutating func rootStrings() throws -> [String: String] {
            var strings: [String: String] = [:]
            var root = RootKeys()
            if peek("\u{FEFF}") { index += 3 }
            while true {
                skipBlank(newlines: true)
                guard let byte = current else { return strings }
                if byte == UInt8(ascii: "[") {
                    try tables(after: root)
                    return strings
                }
                let key = try self.key()
                if let conflict = root.define(key) { throw fail(conflict) }
                if let string = try pairValue(of: key), key.count == 1 { strings[key[0]] = string }
            }
        }

        /// `= value` and the end of its line, after `key`: the text of a string value.
        mutating func pairValue(of key: [String]) throws -> String? {
            skipBlank(newlines: false)
            guard current == UInt8(ascii: "=") else { throw fail("expected '=' after \(Self.dotted(key))") }
            advance()
            skipBlank(newlines: false)
            let string = try value()
            try endOfLine(after: "\(Self.dotted(key))'s value")
            return string
        }

        /// The tables after the root's pairs: each header, checked against what the root defined, and the pairs
        /// under it, checked for their syntax only (nothing in them is read).
        mutating func tables(after root: RootKeys) throws {
            while true {
                skipBlank(newlines: true)
                guard let byte = current else { return }
                guard byte == UInt8(ascii: "[") else {
                    _ = try pairValue(of: try key())
                    continue
                }
                advance()
                let isArray = current == UInt8(ascii: "[")
                if isArray { advance() }
                let header = try key()
                for _ in 0..<(isArray ? 2 : 1) {
                    guard current == UInt8(ascii: "]") else { throw fail("a table header is not closed") }
                    advance()
                }
                if let conflict = root.conflict(withHeader: header) { throw fail(conflict) }
                try endOfLine(after: "a table header")
            }
        }

        /// Only blanks and a comment may follow on the line.
        mutating func endOfLine(after what: String) throws {
            skipBlank(newlines: false)
            guard current == nil || current == 0x0A else { throw fail("unexpected text after \(what)") }
        }

        static func dotted(_ key: [String]) -> String { key.joined(separator: ".") }

        /// What the root table defines, by key path. TOML 1.0 defines a key once, as a value (inline tables and
        /// arrays included) or as a table: dotted keys make a table of each part before the last, which more
        /// dotted keys may extend but no value may replace, and no `[header]` define again.
        struct RootKeys {
            var values: Set<[String]> = []
            var tables: Set<[String]> = []

            /// Records `key` as a value; the reason it cannot be, if any.
            mutating func define(_ key: [String]) -> String? {
                for end in 1..<key.count {
                    let table = Array(key[..<end])
                    if values.contains(table) { return "\(Parser.dotted(table)) is a value, not a table" }
                    tables.insert(table)
                }
                if tables.contains(key) { return "\(Parser.dotted(key)) is a table, not a value" }
                guard values.insert(key).inserted else { return "\(Parser.dotted(key)) is given twice" }
                return nil
            }

            /// Why a `[header]` or `[[header]]` may not follow the root, if it may not: it names a value, or a table
            /// below one, or a table that dotted keys already defined.
            func conflict(withHeader header: [String]) -> String? {
                for end in 1...header.count where values.contains(Array(header[..<end])) {
                    return "\(Parser.dotted(Array(header[..<end]))) is a value, not a table"
                }
                if tables.contains(header) { return "the table \(Parser.dotted(header)) is defined twice" }
                return nil
            }
        }

        /// A bare, quoted or dotted key, as its parts (`a."b.c"` is `["a", "b.c"]`).
        mutating func key() throws -> [String] {
            var parts: [String] = []
            repeat {
                skipBlank(newlines: false)
                if current == UInt8(ascii: "\"") || current == UInt8(ascii: "'") {
                    parts.append(try string() ?? "")
                } else {
                    let start = index
                    while let b = current, TOMLSyntax.isBareKeyByte(b) { advance() }
                    guard index > start else { throw fail("expected a key") }
                    parts.append(String(decoding: bytes[start..<index], as: UTF8.self))
                }
                skipBlank(newlines: false)
                guard current == UInt8(ascii: ".") else { break }
                advance()
            } while true
            return parts
        }

        /// A value: the text of a string, nil for anything else (skipped, checked only for its brackets).
        mutating func value() throws -> String? {
            switch current {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): return try string()
            case UInt8(ascii: "["): try skipCollection(close: UInt8(ascii: "]"))
            case UInt8(ascii: "{"): try skipCollection(close: UInt8(ascii: "}"))
            case nil: throw fail("a key has no value")
            default:
                let start = index
                func skipBare() {
                    while let b = current, !(b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A || b == UInt8(ascii: "#")
                                             || b == UInt8(ascii: ",") || b == UInt8(ascii: "]") || b == UInt8(ascii: "}")) { advance() }
                }
                skipBare()
                guard index > start else { throw fail("a key has no value") }
                // A date and a time may be parted by a space (TOML 1.0: `1979-05-27 07:32:00Z`).
                if index - start == 10, bytes[start + 4] == UInt8(ascii: "-"), bytes[start + 7] == UInt8(ascii: "-"),
                   current == 0x20, index + 1 < bytes.count, (0x30...0x39).contains(bytes[index + 1]) {
                    advance()
                    skipBare()
                }
            }
            return nil
        }

        mutating func skipCollection(close: UInt8) throws {
            advance()
            while true {
                skipBlank(newlines: true)
                guard let byte = current else { throw fail("an array or inline table is not closed") }
                if byte == close { advance(); return }
                if byte == UInt8(ascii: ",") { advance(); continue }
                if close == UInt8(ascii: "}") {
                    _ = try key()
                    skipBlank(newlines: false)
                    guard current == UInt8(ascii: "=") else { throw fail("expected '=' in an inline table") }
                    advance()
                    skipBlank(newlines: false)
                }
                _ = try value()
            }
        }

        /// A basic or literal string, single- or multi-line, with TOML's escapes.
        mutating func string() throws -> String? {
            let quote = bytes[index]
            let triple = peek(quote == UInt8(ascii: "\"") ? "\"\"\"" : "'''")
            index += triple ? 3 : 1
            if triple && current == 0x0A { advance() }
            var out: [UInt8] = []
            while true {
                guard let byte = current else { throw fail("a string is not closed") }
                if byte == quote && (!triple || peek(quote == UInt8(ascii: "\"") ? "\"\"\"" : "'''")) {
                    index += triple ? 3 : 1
                    // Up to two more quotes right before the closing three belong to the string.
                    while triple, current == quote, out.count < Int.max { out.append(quote); index += 1 }
                    break
                }
                if byte == 0x0A && !triple { throw fail("a string is not closed on its line") }
                if byte == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") {
                    advance()
                    guard let escape = current else { throw fail("a string is not closed") }
                    switch escape {
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "u"), UInt8(ascii: "U"):
                        let count = escape == UInt8(ascii: "u") ? 4 : 8
                        guard index + count < bytes.count,
                              let value = UInt32(String(decoding: bytes[(index + 1)...(index + count)], as: UTF8.self), radix: 16),
                              let scalar = Unicode.Scalar(value) else { throw fail("a \\u escape is not a code point") }
                        out += Array(String(Character(scalar)).utf8)
                        index += count
                    case 0x0A where triple, 0x20 where triple, 0x09 where triple, 0x0D where triple:
                        // A line-ending backslash: the newline and the white space after it are dropped.
                        while let b = current, b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A { advance() }
                        continue
                    default: throw fail("unknown escape in a string")
                    }
                    advance()
                    continue
                }
                out.append(byte)
                advance()
            }
            guard let text = String(validating: out, as: UTF8.self) else { throw fail("a string is not UTF-8") }
            return text
        }
    }
}
