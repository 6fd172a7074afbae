/// Lower-case hexadecimal, for printing and reading payloads, keys and signatures.
public enum Hex {
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var ascii: [UInt8] = []
        for byte in bytes {
            ascii.append(digits[Int(byte >> 4)])
            ascii.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: ascii, as: UTF8.self)
    }

    /// Decodes hex digits (either case); nil for an odd length or a non-hex character.
    public static func bytes(_ text: String) -> [UInt8]? {
        let ascii = Array(text.utf8)
        guard ascii.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(ascii.count / 2)
        var index = 0
        while index < ascii.count {
            guard let high = value(of: ascii[index]), let low = value(of: ascii[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The value of one hex digit (either case), or nil.
    static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
