/// RFC 4648 §6 base32 without padding, strict as SEP-23 requires: upper-case alphabet only, no `=`, a length that
/// some byte count actually encodes to, and zero bits in the unused tail of the last symbol.
package enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private static let values = decodingTable(alphabet)

    package static func encodedCount(byteCount: Int) -> Int { (byteCount * 8 + 4) / 5 }

    /// The byte count that `symbolCount` symbols carry, or nil for the lengths no byte count produces
    /// (congruent to 1, 3 or 6 mod 8).
    package static func decodedCount(symbolCount: Int) -> Int? {
        switch symbolCount % 8 {
        case 1, 3, 6: return nil
        default: return symbolCount * 5 / 8
        }
    }

    package static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == encodedCount(byteCount: input.count))
        var buffer: UInt32 = 0
        var bits = 0
        var index = 0
        for byte in input {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output[index] = alphabet[Int((buffer >> UInt32(bits)) & 31)]
                index += 1
            }
        }
        if bits > 0 {
            output[index] = alphabet[Int((buffer << UInt32(5 - bits)) & 31)]
        }
        buffer = 0
    }

    /// Throws for the first symbol outside the alphabet.
    package static func checkSymbols(_ input: UnsafeRawBufferPointer) throws {
        for (position, symbol) in input.enumerated() where values[Int(symbol)] == 0xFF {
            if symbol >= UInt8(ascii: "a") && symbol <= UInt8(ascii: "z") { throw StrKeyError.lowercase }
            if symbol == UInt8(ascii: "=") { throw StrKeyError.padding }
            throw StrKeyError.invalidCharacter(position: position + 1)
        }
    }

    /// Decodes `input` into `output`, which must hold `decodedCount(symbolCount: input.count)` bytes.
    package static func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws {
        try checkSymbols(input)
        guard let count = decodedCount(symbolCount: input.count) else { throw StrKeyError.invalidLength(input.count) }
        precondition(output.count == count)
        var buffer: UInt32 = 0
        var bits = 0
        var index = 0
        for symbol in input {
            buffer = (buffer << 5) | UInt32(values[Int(symbol)])
            bits += 5
            if bits >= 8 {
                bits -= 8
                output[index] = UInt8(truncatingIfNeeded: buffer >> UInt32(bits))
                index += 1
            }
        }
        let unused = buffer & ((1 << UInt32(bits)) - 1)
        buffer = 0
        // A set bit here means the string is not the canonical encoding of its bytes (SEP-23, "Specification").
        if unused != 0 { throw StrKeyError.nonCanonical }
    }
}
