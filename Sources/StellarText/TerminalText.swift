/// Text from outside keystore (a file, an argument, the environment) made safe to put in a message.
///
/// A character printed raw can be an instruction to the terminal or hide what is around it: an escape sequence
/// can retitle the window, clear the screen, or make an error look like success, and a bidi override (U+202E)
/// shows the text after it backwards. Each character is shown the one way messages and summaries share
/// (`append(_:to:)`): a control as `\xNN`, one a terminal would not show as itself as `\u{XXXX}`. A value is cut
/// to `limit` characters so that a planted field cannot flood the screen. The cut is in the middle, marked "…": a
/// server's or a library's error says what went wrong at its end ("… after 3 ms: Couldn't connect to server"),
/// and a path or an address is known by both ends.
package enum TerminalText {
    /// How much of one untrusted value a message shows.
    package static let valueLimit = 64

    package static func escaped(_ text: some StringProtocol, limit: Int? = valueLimit) -> String {
        let scalars = Array(text.unicodeScalars)
        guard let limit, scalars.count > limit else { return escaped(scalars[...]) }
        let head = limit / 2
        return escaped(scalars[..<head]) + "…" + escaped(scalars[(scalars.count - (limit - head))...])
    }

    private static func escaped(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var result = ""
        for scalar in scalars { append(scalar, to: &result) }
        return result
    }

    /// One character from outside as a message or a summary shows it: itself when a terminal shows it as itself;
    /// a control character (C0, DEL, C1) as `\xNN`, each byte of its UTF-8; and as `\u{XXXX}` one a terminal
    /// would show as nothing, as a change to its neighbours, or as a space that is not the space: format
    /// characters (bidi controls, zero-width and word joiners, the soft hyphen, tags), separators other than the
    /// space, combining marks and variation selectors, private-use, unassigned and other invisible
    /// (default-ignorable) code points.
    package static func append(_ scalar: Unicode.Scalar, to result: inout String) {
        if scalar.value >= 0x20 && scalar.value < 0x7F {
            result.unicodeScalars.append(scalar)
        } else if isControl(scalar) {
            for byte in String(scalar).utf8 { result += "\\x" + hexDigits(byte) }
        } else if isHidden(scalar) {
            result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }

    /// Whether `text` would reach a terminal unchanged.
    package static func isPlain(_ text: some StringProtocol) -> Bool {
        !text.unicodeScalars.contains { isControl($0) || isHidden($0) }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value > 0x7F else { return false }
        let properties = scalar.properties
        if properties.isDefaultIgnorableCodePoint || properties.isVariationSelector { return true }
        switch properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .privateUse, .unassigned, .surrogate,
             .nonspacingMark, .spacingMark, .enclosingMark, .control:
            return true
        default:
            return false
        }
    }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
