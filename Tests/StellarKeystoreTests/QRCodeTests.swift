import Foundation
import Testing
@testable import StellarKeystore
import TestFixtures

/// The QR Code encoder, checked against two independent implementations: python3-qrcode's matrices
/// (fixtures/qr/make-fixtures.py) module by module, and zbar's decoder reading what the encoder draws.
@Suite struct QRCodeTests {
    struct Case: Decodable { let text: String; let version: Int; let mask: Int; let rows: [String] }
    struct Choice: Decodable { let text: String; let penalties: [Int]; let mask: Int; let pythonQRCodeMask: Int }
    struct File: Decodable { let generator: String; let level: String; let cases: [Case]; let choices: [Choice] }
    static let file = try! Fixtures.load(File.self, "qr/matrices.json")

    static func rows(_ code: QRCode) -> [String] {
        (0..<code.size).map { y in String((0..<code.size).map { x in code.isDark(x: x, y: y) ? "1" : "0" }) }
    }

    /// Every mask forced: the same version and the same modules as python-qrcode's.
    @Test(arguments: file.cases) func matchesPythonQRCode(_ expected: Case) throws {
        let code = try QRCode(text: expected.text, forcingMask: expected.mask)
        #expect(code.version == expected.version, "\(expected.text)")
        #expect(Self.rows(code) == expected.rows, "\(expected.text), mask \(expected.mask)")
    }

    /// § 7.8.3's penalties of the finished symbol, as python-qrcode's `lost_point` scores them, and the mask of the
    /// lowest. (python-qrcode's own choice scores a symbol whose format information is still blank, so it differs
    /// for some texts: the fixture keeps both, and this follows the standard.)
    @Test(arguments: file.choices) func choosesTheMaskOfLowestPenalty(_ expected: Choice) throws {
        let penalties = try (0...7).map { mask in
            let code = try QRCode(text: expected.text, forcingMask: mask)
            return QRCode.Matrix.penalty(of: (0..<code.size).map { y in (0..<code.size).map { code.isDark(x: $0, y: y) } })
        }
        #expect(penalties == expected.penalties, "\(expected.text)")
        #expect(try QRCode(text: expected.text).mask == expected.mask, "\(expected.text)")
    }

    @Test func fixturesCoverEveryMaskAndVersionsWithVersionInformation() {
        #expect(Set(Self.file.cases.map(\.mask)) == Set(0...7))
        #expect(Self.file.choices.contains { $0.mask != $0.pythonQRCodeMask }, "the case that tells the two choices apart")
        #expect(Set(Self.file.cases.map(\.version)).isSuperset(of: [1, 4, 7, 8, 9, 10]))
        #expect(Self.file.level == "M")
    }

    /// An age identity is 74 characters of QR's alphanumeric set: version 4 (33 modules) at level M.
    @Test func ageIdentityIsVersionFour() throws {
        let code = try QRCode(text: "AGE-SECRET-KEY-1" + String(repeating: "Q", count: 58))
        #expect(code.version == 4)
        #expect(code.size == 33)
    }

    @Test func textOverVersionTenIsRefused() {
        #expect(throws: QRCodeError.tooLong(characters: 214)) { try QRCode(text: String(repeating: "x", count: 214)) }
        #expect(throws: Never.self) { try QRCode(text: String(repeating: "x", count: 213)) }
    }

    /// zbarimg (an independent decoder) reads the matrix drawn as an image, scaled, with a four-module quiet zone.
    @Test(arguments: ["AGE-SECRET-KEY-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARC0SS5L2Q4",
                      "age1ql3z7hjy58pw3mzqxzxzgfp6tn7lhj4m9s6u4j2vurrwdqdg4y9qfgy3xr", "A", "hello, world",
                      String(repeating: "GCEZWKCA5VLDNRLN3RPRJMRZOX3Z6G5CHCGSNFHEYVXM3XOJMDS674JZ", count: 3),
                      String(repeating: "x", count: 200)])
    func zbarDecodesTheMatrix(_ text: String) async throws {
        let code = try QRCode(text: text)
        let decoded = try await Self.zbar((0..<code.size).map { y in (0..<code.size).map { code.isDark(x: $0, y: y) } })
        #expect(decoded == text)
    }

    /// The terminal's lines read back (a lit half is a light module) give the matrix inside a lit quiet zone.
    @Test(arguments: [1, 4, 10]) func terminalLinesReadBackToTheMatrix(version: Int) async throws {
        let text = Self.file.cases.first { $0.version == version }!.text
        let code = try QRCode(text: text)
        let lines = code.terminalLines(quietZone: 4)
        let span = code.size + 8
        #expect(lines.count == (span + 1) / 2)
        var lit: [[Bool]] = []
        for line in lines {
            let cells = Array(line)
            #expect(cells.count == span)
            #expect(cells.allSatisfy { "█▀▄ ".contains($0) })
            lit.append(cells.map { $0 == "█" || $0 == "▀" })
            lit.append(cells.map { $0 == "█" || $0 == "▄" })
        }
        #expect(lit.count == span + 1)
        #expect(!lit[span].contains(true), "the half row below the quiet zone is unlit")
        lit.removeLast()
        // Lit everywhere in the four-module quiet zone, and lit exactly where the module is light inside it.
        let expected = (0..<span).map { y in
            (0..<span).map { x in
                let inside = (4..<4 + code.size).contains(x) && (4..<4 + code.size).contains(y)
                return inside ? !code.isDark(x: x - 4, y: y - 4) : true
            }
        }
        #expect(lit == expected)
        #expect(lit[0].allSatisfy { $0 } && lit[3].allSatisfy { $0 } && lit.allSatisfy { $0[0] && $0[3] && $0[span - 1] })
        // What a light-on-dark terminal shows (lit = light) is a code that zbar reads.
        #expect(try await Self.zbar(lit.map { $0.map { !$0 } }, quietZone: 0) == text)
    }

    /// Decodes a module grid (true = dark) with `zbarimg --raw -q`, drawn 8 pixels a module as a PGM.
    static func zbar(_ dark: [[Bool]], quietZone: Int = 4) async throws -> String {
        let scale = 8
        let side = (dark.count + 2 * quietZone) * scale
        var pixels = [UInt8](repeating: 255, count: side * side)
        for (y, row) in dark.enumerated() {
            for (x, isDark) in row.enumerated() where isDark {
                for py in 0..<scale {
                    let start = ((y + quietZone) * scale + py) * side + (x + quietZone) * scale
                    pixels.replaceSubrange(start..<start + scale, with: repeatElement(0, count: scale))
                }
            }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pgm").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try (Data("P5\n\(side) \(side)\n255\n".utf8) + Data(pixels)).write(to: URL(fileURLWithPath: path))
        return try await OffThePool.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
            process.arguments = ["--raw", "-q", path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice   // zbar's complaint that no D-Bus is running
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "zbarimg exited \(process.terminationStatus)"])
            }
            var text = String(decoding: data, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            return text
        }
    }
}
