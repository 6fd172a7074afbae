/// Standard base64 (RFC 4648 §4, padded), without going through `String` and `Data` for every line.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values = decodingTable(alphabet)

    public static func string(_ bytes: [UInt8]) -> String {
        var ascii: [UInt8] = []
        encode(bytes, into: &ascii)
        return String(decoding: ascii, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }

    /// `text` without the white space (space, tab, CR, LF) that base64 copied from a terminal or a file carries,
    /// and that `decode` refuses like any other character outside the alphabet.
    package static func removingWhiteSpace(_ text: some Sequence<UInt8>) -> [UInt8] {
        text.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
    }

    public static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
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

    /// Strict decoding: length a multiple of 4, padding only at the end, no other characters, and the bits that
    /// padding leaves over zero (RFC 4648 §3.5), so that each byte string has exactly one accepted spelling.
    public static func decode(_ text: [UInt8]) -> [UInt8]? {
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
            let unusedBits: UInt32 = padding == 2 ? 0xFFFF : padding == 1 ? 0xFF : 0
            guard n & unusedBits == 0 else { return nil }
            bytes.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { bytes.append(UInt8(n >> 8 & 0xFF)) }
            if padding < 1 { bytes.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return bytes
    }
}
