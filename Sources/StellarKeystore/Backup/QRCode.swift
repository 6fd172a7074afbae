/// A QR Code (ISO/IEC 18004:2015) of one text, versions 1 to 10, error correction level M, in one segment of
/// alphanumeric mode where every character allows it and byte mode (UTF-8, no ECI) otherwise.
///
/// Level M, not Q: the code is shown on a screen and photographed, not printed and scuffed, so the damage it must
/// survive is blur and glare rather than missing modules, and M keeps the modules larger on the same screen
/// (a 74-character age identity is version 4, 33 modules wide, at M; version 5, 37 wide, at Q).
package struct QRCode: Sendable, Equatable {
    /// The version, 1 to 10: the code is `17 + 4 × version` modules wide.
    package let version: Int
    /// The mask pattern chosen (0 to 7, § 7.8.2), by the lowest penalty of § 7.8.3 unless a test forced one.
    package let mask: Int
    /// Modules wide and high, without the quiet zone.
    package var size: Int { 17 + 4 * version }
    private let modules: [Bool]

    package init(text: String) throws(QRCodeError) { self = try QRCode(text: text, forcingMask: nil) }

    /// `forcingMask` skips the penalty choice, so a test can compare every mask with another encoder's.
    init(text: String, forcingMask: Int?) throws(QRCodeError) {
        let segment = Segment(text)
        guard let version = (1...10).first(where: { segment.bitCount(version: $0) <= Blocks.m[$0].dataCodewords * 8 })
        else { throw .tooLong(characters: text.count) }
        let codewords = Blocks.m[version].interleaved(data: segment.codewords(version: version))
        var matrix = Matrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.place(codewords)
        if let forced = forcingMask {
            precondition((0...7).contains(forced), "a QR mask is 0 to 7")
            matrix.apply(mask: forced)
            self.init(version: version, mask: forced, modules: matrix.dark)
            return
        }
        var best: (mask: Int, penalty: Int, dark: [Bool])?
        for mask in 0...7 {
            var candidate = matrix
            candidate.apply(mask: mask)
            let penalty = candidate.penalty
            if best == nil || penalty < best!.penalty { best = (mask, penalty, candidate.dark) }
        }
        self.init(version: version, mask: best!.mask, modules: best!.dark)
    }

    private init(version: Int, mask: Int, modules: [Bool]) {
        self.version = version
        self.mask = mask
        self.modules = modules
    }

    /// Whether the module in column `x`, row `y` (0 at the top left) is dark.
    package func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }
}

package enum QRCodeError: Error, Equatable, CustomStringConvertible {
    case tooLong(characters: Int)

    package var description: String {
        switch self {
        case .tooLong(let characters): "a text of \(characters) characters is too long for a QR code of version 10 or less"
        }
    }
}

/// The text as one segment (§ 7.4): its mode, character count and bits.
private struct Segment {
    static let alphanumeric = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)
    let isAlphanumeric: Bool
    let values: [UInt8]   // alphanumeric values, or the UTF-8 bytes

    init(_ text: String) {
        let bytes = Array(text.utf8)
        let values = bytes.map { byte in Segment.alphanumeric.firstIndex(of: byte).map(UInt8.init) }
        isAlphanumeric = !bytes.isEmpty && values.allSatisfy { $0 != nil }
        self.values = isAlphanumeric ? values.map { $0! } : bytes
    }

    /// Table 3: the character count indicator's width changes at version 10.
    func countBits(version: Int) -> Int { isAlphanumeric ? (version < 10 ? 9 : 11) : (version < 10 ? 8 : 16) }

    func bitCount(version: Int) -> Int {
        let payload = isAlphanumeric ? 11 * (values.count / 2) + 6 * (values.count % 2) : 8 * values.count
        return 4 + countBits(version: version) + payload
    }

    /// The data codewords of § 7.4.9: mode, count, data, terminator, padding to a byte, then 0xEC 0x11 alternately.
    func codewords(version: Int) -> [UInt8] {
        let capacity = Blocks.m[version].dataCodewords * 8
        var bits = BitBuffer()
        bits.append(isAlphanumeric ? 0b0010 : 0b0100, count: 4)
        bits.append(values.count, count: countBits(version: version))
        if isAlphanumeric {
            var index = 0
            while index + 1 < values.count {
                bits.append(Int(values[index]) * 45 + Int(values[index + 1]), count: 11)
                index += 2
            }
            if index < values.count { bits.append(Int(values[index]), count: 6) }
        } else {
            for byte in values { bits.append(Int(byte), count: 8) }
        }
        bits.append(0, count: min(4, capacity - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var pad: UInt8 = 0xEC
        while bits.count < capacity {
            bits.append(Int(pad), count: 8)
            pad ^= 0xEC ^ 0x11
        }
        return bits.bytes
    }
}

private struct BitBuffer {
    private(set) var bits: [Bool] = []
    var count: Int { bits.count }
    mutating func append(_ value: Int, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }
    var bytes: [UInt8] {
        stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
        }
    }
}

/// Table 9's error correction blocks at level M: each version's codewords are split into blocks, each block gets its
/// own Reed–Solomon codewords, and the blocks are interleaved (§ 7.6).
private struct Blocks {
    let ecPerBlock: Int
    let groups: [(count: Int, dataCodewords: Int)]
    var dataCodewords: Int { groups.reduce(0) { $0 + $1.count * $1.dataCodewords } }

    static let m: [Blocks] = [
        Blocks(ecPerBlock: 0, groups: []),   // no version 0
        Blocks(ecPerBlock: 10, groups: [(1, 16)]),
        Blocks(ecPerBlock: 16, groups: [(1, 28)]),
        Blocks(ecPerBlock: 26, groups: [(1, 44)]),
        Blocks(ecPerBlock: 18, groups: [(2, 32)]),
        Blocks(ecPerBlock: 24, groups: [(2, 43)]),
        Blocks(ecPerBlock: 16, groups: [(4, 27)]),
        Blocks(ecPerBlock: 18, groups: [(4, 31)]),
        Blocks(ecPerBlock: 22, groups: [(2, 38), (2, 39)]),
        Blocks(ecPerBlock: 22, groups: [(3, 36), (2, 37)]),
        Blocks(ecPerBlock: 26, groups: [(4, 43), (1, 44)]),
    ]

    func interleaved(data: [UInt8]) -> [UInt8] {
        var blocks: [[UInt8]] = []
        var start = 0
        for group in groups {
            for _ in 0..<group.count {
                blocks.append(Array(data[start..<start + group.dataCodewords]))
                start += group.dataCodewords
            }
        }
        let generator = ReedSolomon.generator(degree: ecPerBlock)
        let corrections = blocks.map { ReedSolomon.remainder(of: $0, by: generator) }
        var result: [UInt8] = []
        for column in 0..<(blocks.map(\.count).max() ?? 0) {
            for block in blocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<ecPerBlock {
            for correction in corrections { result.append(correction[column]) }
        }
        return result
    }
}

/// Reed–Solomon over GF(256) with the primitive polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D), generator roots α⁰…αⁿ⁻¹
/// (§ 7.5.2).
private enum ReedSolomon {
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var product = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            product = (product << 1) ^ ((product >> 7) * 0x11D)
            product ^= Int((b >> bit) & 1) * Int(a)
        }
        return UInt8(product & 0xFF)
    }

    /// The generator's coefficients below its leading 1, highest degree first.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                coefficients[index] = multiply(coefficients[index], root)
                if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
            }
            root = multiply(root, 2)
        }
        return coefficients
    }

    static func remainder(of data: [UInt8], by generator: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder.removeFirst()
            remainder.append(0)
            for index in remainder.indices { remainder[index] ^= multiply(generator[index], factor) }
        }
        return remainder
    }
}
