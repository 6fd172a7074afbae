import StellarKeys

/// age's ASCII armor (age.md, "ASCII armor"): strict PEM (RFC 7468 §3) with the label "AGE ENCRYPTED FILE",
/// padded base64 in lines of 64 columns, the last one shorter unless the data fills it. Read as strictly as age's
/// own reader (armor/armor.go): whitespace only before and after the block (at most 1 KiB of it), LF or CRLF line
/// ends, canonical base64, nothing else, so that an armored file has one spelling.
enum AgeArmor {
    static let header = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let footer = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    static let maximumWhitespace = 1024

    /// Whether `file` is to be read as armor: it is not a binary age file, and PEM's "-----" appears near its start
    /// (where a BEGIN line would be, after at most 1 KiB of whitespace), so that a damaged armor line is reported as
    /// armor and not as "not an age file".
    static func isArmored(_ file: [UInt8]) -> Bool {
        guard !file.starts(with: AgeHeader.versionPrefix) else { return false }
        let start = file.prefix(maximumWhitespace + header.count + 1)
        return start.indices.contains { start[$0...].starts(with: Array("-----".utf8)) }
    }

    static func armored(_ file: [UInt8]) -> [UInt8] {
        var out = header + [UInt8(ascii: "\n")]
        var text: [UInt8] = []
        Base64.encode(file, into: &text)
        var start = 0
        while start < text.count {
            let end = min(start + AgeHeader.columnsPerLine, text.count)
            out += text[start..<end] + [UInt8(ascii: "\n")]
            start = end
        }
        return out + footer + [UInt8(ascii: "\n")]
    }

    static func dearmored(_ text: [UInt8]) throws(AgeError) -> [UInt8] {
        let leading = text.prefix(while: isWhitespace).count
        guard leading <= maximumWhitespace else { throw .malformedArmor("over 1 KiB of whitespace before it") }
        var lines = text[leading...].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
        func nextLine() throws(AgeError) -> ArraySlice<UInt8> {
            guard let line = lines.popFirst() else { throw .malformedArmor("it ends before its END line") }
            return line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        guard try nextLine().elementsEqual(header) else {
            throw .malformedArmor("its first line is not \"-----BEGIN AGE ENCRYPTED FILE-----\"")
        }
        var bytes: [UInt8] = []
        while true {
            let line = try nextLine()
            if line.elementsEqual(footer) { break }
            guard !line.isEmpty else { throw .malformedArmor("it has an empty line") }
            guard line.count <= AgeHeader.columnsPerLine else { throw .malformedArmor("a line is over 64 columns") }
            guard let decoded = Base64.decode(Array(line)) else { throw .malformedArmor("a line is not canonical base64") }
            bytes += decoded
            if decoded.count < AgeHeader.bytesPerLine {
                guard try nextLine().elementsEqual(footer) else {
                    throw .malformedArmor("a short line is not followed by \"-----END AGE ENCRYPTED FILE-----\"")
                }
                break
            }
        }
        // What follows the END line's LF (or the END line with no LF) may only be whitespace.
        let trailing = lines.reduce(0) { $0 + $1.count } + max(0, lines.count - 1)
        guard lines.allSatisfy({ $0.allSatisfy(isWhitespace) }) else { throw .malformedArmor("data follows its END line") }
        guard trailing < maximumWhitespace else { throw .malformedArmor("over 1 KiB of whitespace after it") }
        return bytes
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}
