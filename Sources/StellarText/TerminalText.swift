/// Text from outside keystore (a file, an argument, the environment) made safe to put in a message.
///
/// A control character printed raw is an instruction to the terminal: an escape sequence can retitle the window,
/// clear the screen, or make an error look like success. Every C0 and C1 control character and DEL is shown as
/// `\xNN` instead (each byte of its UTF-8), and a value is cut to `limit` characters so that a planted field
/// cannot flood the screen. The cut is in the middle, marked "…": a server's or a library's error says what went
/// wrong at its end ("… after 3 ms: Couldn't connect to server"), and a path or an address is known by both ends.
public enum TerminalText {
    /// How much of one untrusted value a message shows.
    public static let valueLimit = 64

    public static func escaped(_ text: some StringProtocol, limit: Int? = valueLimit) -> String {
        let scalars = Array(text.unicodeScalars)
        guard let limit, scalars.count > limit else { return escaped(scalars[...]) }
        let head = limit / 2
        return escaped(scalars[..<head]) + "…" + escaped(scalars[(scalars.count - (limit - head))...])
    }

    private static func escaped(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var result = ""
        for scalar in scalars {
            if isControl(scalar) {
                for byte in String(scalar).utf8 { result += "\\x" + hexDigits(byte) }
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `text` would reach a terminal unchanged.
    public static func isPlain(_ text: some StringProtocol) -> Bool {
        !text.unicodeScalars.contains(where: isControl)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
