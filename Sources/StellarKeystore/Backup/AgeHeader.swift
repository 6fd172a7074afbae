import StellarKeys

/// One recipient stanza of an age header: its type (the first argument), the other arguments, and its body.
package struct AgeStanza: Equatable, Sendable {
    package var type: String
    package var arguments: [String]
    package var body: [UInt8]

    package init(type: String, arguments: [String], body: [UInt8]) {
        self.type = type
        self.arguments = arguments
        self.body = body
    }
}

/// The textual header of an age file (age.md, "Header"): the version line, the stanzas, the MAC line.
///
/// Parsing is strict, as the spec's ABNF is: canonical unpadded base64, body lines of at most 64 columns ending
/// with a short one, arguments of visible ASCII, a MAC line of exactly 43 characters. So a header has one spelling,
/// and the MAC, computed over the bytes as read, covers everything the parse saw.
struct AgeHeader {
    static let versionLine = Array("age-encryption.org/v1\n".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    static let columnsPerLine = 64
    static let bytesPerLine = columnsPerLine / 4 * 3
    /// Longer lines than this are refused before they are read further: an X25519 or scrypt argument line is
    /// under 100 bytes, a post-quantum one under 1,600.
    static let maximumLineLength = 4096
    /// More stanzas than this are refused: a file encrypted to that many people is not a backup.
    static let maximumStanzas = 1024

    var stanzas: [AgeStanza]
    var mac: [UInt8]
    /// The bytes the MAC covers: the header up to and including "---".
    var authenticatedBytes: ArraySlice<UInt8>
    /// Where the payload (its nonce first) begins.
    var payloadOffset: Int

    /// The header at the start of `file`.
    static func parse(_ file: [UInt8]) throws(AgeError) -> AgeHeader {
        var reader = LineReader(bytes: file)
        guard file.starts(with: versionPrefix) else { throw .notAgeFile }
        guard let version = reader.nextLine() else { throw .malformedHeader("the version line does not end") }
        guard version.elementsEqual(versionLine.dropLast()) else {
            throw .unsupportedVersion(String(decoding: version.dropFirst(versionPrefix.count), as: UTF8.self))
        }
        var stanzas: [AgeStanza] = []
        while true {
            let lineStart = reader.offset
            guard let line = reader.nextLine() else { throw .malformedHeader("it ends before its MAC line") }
            if line.starts(with: Array("---".utf8)) {
                guard !stanzas.isEmpty else { throw .malformedHeader("it has no recipient stanza") }
                let macText = line.dropFirst(4)
                guard line.count == 4 + 43, line[line.startIndex + 3] == UInt8(ascii: " "),
                      let mac = AgeBase64.decode(macText), mac.count == 32
                else { throw .malformedHeader("the MAC line is not \"--- \" and 43 base64 characters") }
                return AgeHeader(
                    stanzas: stanzas, mac: mac, authenticatedBytes: file[..<(lineStart + 3)], payloadOffset: reader.offset)
            }
            guard stanzas.count < maximumStanzas else { throw .malformedHeader("it has over \(maximumStanzas) stanzas") }
            stanzas.append(try stanza(opening: line, reader: &reader))
        }
    }

    private static func stanza(opening line: ArraySlice<UInt8>, reader: inout LineReader) throws(AgeError) -> AgeStanza {
        guard line.starts(with: Array("-> ".utf8)) else {
            throw .malformedHeader("a line where a stanza or the MAC should begin starts otherwise")
        }
        let arguments = line.dropFirst(3).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (33...126).contains($0) } }) else {
            throw .malformedHeader("a stanza's arguments are not words of visible ASCII separated by single spaces")
        }
        var body: [UInt8] = []
        while true {
            guard let bodyLine = reader.nextLine() else { throw .malformedHeader("it ends inside a stanza") }
            guard bodyLine.count <= columnsPerLine, let bytes = AgeBase64.decode(bodyLine) else {
                throw .malformedHeader(
                    bodyLine.starts(with: Array("-> ".utf8)) || bodyLine.starts(with: Array("---".utf8))
                        ? "a stanza's body does not end with a line shorter than 64 columns"
                        : "a stanza's body line is not canonical base64 of at most 64 columns")
            }
            body += bytes
            if bytes.count < bytesPerLine { break }
        }
        let words = arguments.map { String(decoding: $0, as: UTF8.self) }
        return AgeStanza(type: words[0], arguments: Array(words.dropFirst()), body: body)
    }

    /// The header's bytes up to and including "---": what the MAC covers, to which " MAC\n" is appended.
    static func encoded(_ stanzas: [AgeStanza]) -> [UInt8] {
        var out = versionLine
        for stanza in stanzas { encode(stanza, into: &out) }
        out += Array("---".utf8)
        return out
    }

    /// One stanza as a header (and the age plugin protocol, which frames its messages so) spells it. The body's
    /// base64 is zeroed once copied: a plugin's body may be a file key or a PIN.
    static func encode(_ stanza: AgeStanza, into out: inout [UInt8]) {
        out += Array("->".utf8)
        for word in [stanza.type] + stanza.arguments { out += [UInt8(ascii: " ")] + Array(word.utf8) }
        out.append(UInt8(ascii: "\n"))
        var text = AgeBase64.encode(stanza.body)
        defer { Sodium.zero(&text) }
        // Lines of 64 columns, then one shorter (empty when the text fills its last line).
        var start = 0
        while true {
            let end = min(start + columnsPerLine, text.count)
            out += text[start..<end]
            out.append(UInt8(ascii: "\n"))
            if end - start < columnsPerLine { break }
            start = end
        }
    }

    /// The length of the whole stanza at the start of `bytes` (its opening line, its body lines, the last one shorter
    /// than 64 columns), or nil while it has not all arrived; whether it is well formed is `stanza(exactly:)`'s to say.
    /// Nil too for a line over `maximumLineLength` without its end, which the caller bounds.
    static func stanzaLength(in bytes: ArraySlice<UInt8>) -> Int? {
        var offset = bytes.startIndex
        var isOpening = true
        while let newline = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - offset
            offset = newline + 1
            if !isOpening && length < columnsPerLine { return offset - bytes.startIndex }
            isOpening = false
        }
        return nil
    }

    /// The stanza that is exactly `bytes`, read by the header's rules.
    static func stanza(exactly bytes: [UInt8]) throws(AgeError) -> AgeStanza {
        var reader = LineReader(bytes: bytes)
        guard let line = reader.nextLine() else { throw .malformedHeader("a stanza's first line does not end") }
        let stanza = try stanza(opening: line, reader: &reader)
        guard reader.offset == bytes.count else { throw .malformedHeader("a stanza's body does not end with a line shorter than 64 columns") }
        return stanza
    }

    /// Lines ending in LF, each at most `maximumLineLength` long; nil at the end of the bytes, or when a line has
    /// no LF within the limit (a header line always ends in one).
    private struct LineReader {
        let bytes: [UInt8]
        var offset = 0

        mutating func nextLine() -> ArraySlice<UInt8>? {
            let end = min(bytes.count, offset + AgeHeader.maximumLineLength + 1)
            guard let newline = bytes[offset..<end].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            defer { offset = newline + 1 }
            return bytes[offset..<newline]
        }
    }
}
