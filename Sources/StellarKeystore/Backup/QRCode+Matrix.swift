extension QRCode {
    /// The module grid of a QR Code: function patterns (§ 6.3), codeword placement (§ 7.7.3), masking and its
    /// penalty (§ 7.8), format and version information (§ 7.9, § 7.10).
    struct Matrix {
        let version: Int
        let size: Int
        private(set) var dark: [Bool]
        private var isFunction: [Bool]

        init(version: Int) {
            self.version = version
            size = 17 + 4 * version
            dark = Array(repeating: false, count: size * size)
            isFunction = Array(repeating: false, count: size * size)
        }

        subscript(x: Int, y: Int) -> Bool { dark[y * size + x] }

        private mutating func set(_ x: Int, _ y: Int, _ isDark: Bool) {
            dark[y * size + x] = isDark
            isFunction[y * size + x] = true
        }

        /// Table E.1: the centres of the alignment patterns, on both axes.
        private static let alignmentCentres: [[Int]] = [
            [], [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
        ]

        mutating func drawFunctionPatterns() {
            for index in 0..<size {   // timing patterns, row 6 and column 6
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] { drawFinder(centreX: x, centreY: y) }
            let centres = Self.alignmentCentres[version]
            for cx in centres {
                for cy in centres {
                    // No alignment pattern sits on a finder.
                    if (cx == 6 && cy == 6) || (cx == 6 && cy == centres.last!) || (cx == centres.last! && cy == 6) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            drawFormat(bits: 0)   // reserves the area; the real bits come with the mask
            drawVersion()
        }

        /// A finder (7 × 7) with its light separator, clipped at the edges.
        private mutating func drawFinder(centreX: Int, centreY: Int) {
            for dy in -4...4 {
                for dx in -4...4 {
                    let x = centreX + dx, y = centreY + dy
                    guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                    let distance = max(abs(dx), abs(dy))
                    set(x, y, distance != 2 && distance != 4)
                }
            }
        }

        /// 15 bits: level M (00) and the mask, with their BCH(15,5) check (generator 0x537), XORed with 0x5412.
        private mutating func drawFormat(bits formatData: Int) {
            var remainder = formatData
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (formatData << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)   // the dark module
        }

        /// 18 bits from version 7: the version with its BCH(18,6) check (generator 0x1F25), in two 6 × 3 blocks.
        private mutating func drawVersion() {
            guard version >= 7 else { return }
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let isDark = (bits >> index) & 1 == 1
                let a = size - 11 + index % 3, b = index / 3
                set(a, b, isDark)
                set(b, a, isDark)
            }
        }

        /// Places the codewords' bits in two-module columns, upwards then downwards from the bottom right, skipping the
        /// vertical timing column; modules left over (the remainder bits) stay light.
        mutating func place(_ codewords: [UInt8]) {
            var bitIndex = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for column in 0..<2 {
                        let x = right - column
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        guard !isFunction[y * size + x] else { continue }
                        if bitIndex < codewords.count * 8 {
                            dark[y * size + x] = (codewords[bitIndex >> 3] >> (7 - bitIndex & 7)) & 1 == 1
                            bitIndex += 1
                        }
                    }
                }
                right -= 2
            }
        }

        /// Table 10's masks, with `i` the row and `j` the column, and the format information that names the mask.
        mutating func apply(mask: Int) {
            for i in 0..<size {
                for j in 0..<size where !isFunction[i * size + j] {
                    let inverts = switch mask {
                    case 0: (i + j) % 2 == 0
                    case 1: i % 2 == 0
                    case 2: j % 3 == 0
                    case 3: (i + j) % 3 == 0
                    case 4: (i / 2 + j / 3) % 2 == 0
                    case 5: (i * j) % 2 + (i * j) % 3 == 0
                    case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
                    default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
                    }
                    if inverts { dark[i * size + j].toggle() }
                }
            }
            drawFormat(bits: 0b00 << 3 | mask)
        }

        /// § 7.8.3's penalty: runs of five or more, 2 × 2 blocks, finder-like 1:1:3:1:1 patterns beside four light
        /// modules (inside the symbol, as zxing and python-qrcode read it), and the dark share's distance from 50 %.
        var penalty: Int { Self.penalty(of: (0..<size).map { y in (0..<size).map { self[$0, y] } }) }

        /// The penalty of a square grid of modules, `rows[y][x]` true where dark.
        static func penalty(of rows: [[Bool]]) -> Int {
            let size = rows.count
            var total = 0
            for line in 0..<size {
                for horizontal in [true, false] {
                    let modules = (0..<size).map { horizontal ? rows[line][$0] : rows[$0][line] }
                    var run = 1
                    for index in 1...size {
                        if index < size && modules[index] == modules[index - 1] { run += 1; continue }
                        if run >= 5 { total += run - 2 }
                        run = 1
                    }
                    for start in 0..<max(0, size - 10) {
                        let window = Array(modules[start..<start + 11])
                        if window == finderBefore || window == finderAfter { total += 40 }
                    }
                }
            }
            for y in 0..<size - 1 {
                for x in 0..<size - 1 {
                    let colour = rows[y][x]
                    if rows[y][x + 1] == colour && rows[y + 1][x] == colour && rows[y + 1][x + 1] == colour { total += 3 }
                }
            }
            let darkCount = rows.joined().filter { $0 }.count
            total += abs(darkCount * 2 - size * size) * 10 / (size * size) * 10
            return total
        }

        private static let finderBefore = [true, false, true, true, true, false, true, false, false, false, false]
        private static let finderAfter = Array(finderBefore.reversed())
    }
}
