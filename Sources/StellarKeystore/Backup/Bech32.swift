import StellarKeys

/// Bech32 (BIP-173) as age uses it: no limit on the length of the data part (BIP-173's 90 characters would refuse
/// a post-quantum recipient), all upper-case or all lower-case, the checksum always over the lower-case form.
///
/// Both directions work on bytes, never on `String`: an age identity is a secret key, and a `String` cannot be
/// zeroed. The 5-bit groups in between are zeroed before they are dropped.
enum Bech32 {
    private static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() {
            table[Int(character)] = Int8(index)
            if character >= UInt8(ascii: "a") { table[Int(character) - 0x20] = Int8(index) }  // the letter's upper case
        }
        return table
    }()

    enum Failure: Error, Equatable {
        case mixedCase, noSeparator, invalidCharacter, invalidChecksum, invalidPadding, wrongPrefix
    }

    /// `prefix` ‖ "1" ‖ data ‖ checksum, lower-case (or upper-case when `uppercase`, as age writes identities).
    static func encode(prefix: [UInt8], data: UnsafeRawBufferPointer, uppercase: Bool = false) -> [UInt8] {
        let hrp = prefix.map(lowercased)
        var groups = regrouped(data, from: 8, to: 5, pad: true) ?? []
        defer { Sodium.zero(&groups) }
        var check = polymod(hrp: hrp)
        check = polymod(check, groups)
        check = polymod(check, [0, 0, 0, 0, 0, 0]) ^ 1
        let convert = uppercase ? uppercased : { $0 }
        var out: [UInt8] = []
        out.reserveCapacity(hrp.count + 1 + groups.count + 6)
        for byte in hrp { out.append(convert(byte)) }
        out.append(UInt8(ascii: "1"))
        for group in groups { out.append(convert(alphabet[Int(group)])) }
        for index in 0..<6 { out.append(convert(alphabet[Int(check >> (5 * (5 - index)) & 31)])) }
        return out
    }

    /// The data of `text` when its prefix is exactly `prefix` (case included: age writes recipients in lower case,
    /// identities in upper case, and reads them only so) and its checksum holds.
    static func decode(_ text: UnsafeRawBufferPointer, prefix: [UInt8]) throws(Failure) -> [UInt8] {
        try decode(text) { $0.elementsEqual(prefix) }
    }

    /// The prefix (as written) and the data of `text`, whatever its prefix: an age plugin's recipient or identity
    /// names its plugin there.
    static func decodeWithPrefix(_ text: UnsafeRawBufferPointer) throws(Failure) -> (prefix: [UInt8], data: [UInt8]) {
        var prefix: [UInt8] = []
        let data = try decode(text) { prefix = Array($0); return true }
        return (prefix, data)
    }

    private static func decode(_ text: UnsafeRawBufferPointer, acceptingPrefix accepts: (UnsafeRawBufferPointer.SubSequence) -> Bool) throws(Failure) -> [UInt8] {
        let hasLower = text.contains { (0x61...0x7A).contains($0) }
        let hasUpper = text.contains { (0x41...0x5A).contains($0) }
        guard !(hasLower && hasUpper) else { throw .mixedCase }
        guard let separator = text.lastIndex(of: UInt8(ascii: "1")), separator > 0, text.count - separator - 1 >= 6 else {
            throw .noSeparator
        }
        guard text[..<separator].allSatisfy({ (33...126).contains($0) }) else { throw .invalidCharacter }
        guard accepts(text[..<separator]) else { throw .wrongPrefix }
        let hrp = text[..<separator].map(lowercased)
        var groups: [UInt8] = []
        defer { Sodium.zero(&groups) }
        groups.reserveCapacity(text.count - separator - 1)
        for character in text[(separator + 1)...] {
            guard character < 128, values[Int(character)] >= 0 else { throw .invalidCharacter }
            groups.append(UInt8(values[Int(character)]))
        }
        guard polymod(polymod(hrp: hrp), groups) == 1 else { throw .invalidChecksum }
        guard let data = regrouped(groups.dropLast(6), from: 5, to: 8, pad: false) else { throw .invalidPadding }
        return data
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
    private static func uppercased(_ byte: UInt8) -> UInt8 { (0x61...0x7A).contains(byte) ? byte & ~0x20 : byte }

    /// The checksum's running state after the human-readable part, expanded as BIP-173 says.
    private static func polymod(hrp: [UInt8]) -> UInt32 {
        polymod(polymod(polymod(1, hrp.map { $0 >> 5 }), [0]), hrp.map { $0 & 31 })
    }

    private static func polymod(_ start: UInt32, _ values: some Sequence<UInt8>) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var check = start
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for bit in 0..<5 where top >> bit & 1 == 1 { check ^= generator[bit] }
        }
        return check
    }

    /// BIP-173's convertbits: nil when `pad` is false and the leftover bits are not fewer than `from` and all zero.
    private static func regrouped(_ input: some Collection<UInt8>, from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0, bits = 0
        var out: [UInt8] = []
        out.reserveCapacity(input.count * from / to + 1)
        let mask = (1 << to) - 1
        for value in input {
            accumulator = (accumulator << from | Int(value)) & 0xFFFF
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8(accumulator >> bits & mask))
            }
        }
        accumulator &= (1 << bits) - 1  // only the leftover bits may remain in memory
        defer { accumulator = 0 }
        if pad {
            if bits > 0 { out.append(UInt8(accumulator << (to - bits) & mask)) }
        } else if bits >= from || accumulator != 0 {
            Sodium.zero(&out)
            return nil
        }
        return out
    }
}

extension Sodium {
    /// Zeroes an array that held secret bytes before it is dropped.
    static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { zero($0) }
    }
}
