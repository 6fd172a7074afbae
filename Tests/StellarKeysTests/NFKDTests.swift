import Foundation
import Testing
@testable import StellarKeys
import TestFixtures

/// keystore's own NFKD (scripts/generate-nfkd.py, Unicode 14.0) against CPython's `unicodedata.normalize`, an
/// independent implementation: every code point that NFKD changes, Hangul, and random sequences of marks that
/// need reordering (fixtures/nfkd-samples.json).
@Suite struct NFKDTests {
    struct Samples: Decodable {
        struct Case: Decodable { let input, nfkd: String }
        let cases: [Case]
    }

    @Test func everySampleNormalisesAsCPythonDoes() throws {
        let samples = try Fixtures.load(Samples.self, "nfkd-samples.json").cases
        #expect(samples.count > 9000)
        var wrong: [String] = []
        for sample in samples where NFKD.normalize(sample.input).unicodeScalars.elementsEqual(sample.nfkd.unicodeScalars) == false {
            wrong.append(sample.input.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, e.g. \(wrong.prefix(5))")
    }

    @Test func theSamplesCoverEveryDecompositionInTheTable() throws {
        let samples = try Fixtures.load(Samples.self, "nfkd-samples.json").cases
        let singles = Set(samples.compactMap { $0.input.unicodeScalars.count == 1 ? $0.input.unicodeScalars.first!.value : nil })
        let table = NFKD.decompositionData.split(whereSeparator: { $0 == ";" || $0 == "\n" })
            .compactMap { $0.split(separator: "=").first.flatMap { UInt32($0, radix: 16) } }
        #expect(table.count == 5795 && table.allSatisfy(singles.contains))
    }

    @Test func asciiIsUnchangedAndMarksAreReordered() {
        #expect(NFKD.normalize("abandon ability") == "abandon ability")
        // ccc 220 (dot below) sorts before ccc 230 (acute), whatever order they were typed in.
        #expect(Array(NFKD.normalize("a\u{301}\u{323}").unicodeScalars) == Array("a\u{323}\u{301}".unicodeScalars))
        #expect(Array(NFKD.normalize("\u{1E69}").unicodeScalars) == Array("s\u{323}\u{307}".unicodeScalars))
        #expect(Array(NFKD.normalize("\u{AC01}").unicodeScalars).map(\.value) == [0x1100, 0x1161, 0x11A8])
        #expect(NFKD.normalize("\u{FB01}") == "fi")
    }
}
