import StellarKeys

/// age's base64: RFC 4648 §4 without `=` padding, and only the canonical spelling of each byte string (RFC 4648
/// §3.5), so that a header has one encoding and its MAC covers exactly what was parsed (age.md, "Conventions").
enum AgeBase64 {
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        Base64.encode(bytes, into: &out)
        while out.last == UInt8(ascii: "=") { out.removeLast() }
        return out
    }

    /// The bytes of `text`, or nil when it is not canonical unpadded base64 (padding, a newline, a stray bit).
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1, !text.contains(UInt8(ascii: "=")) else { return nil }
        var padded = Array(text)
        padded += [UInt8](repeating: UInt8(ascii: "="), count: (4 - padded.count % 4) % 4)
        return Base64.decode(padded)
    }
}
