import Foundation
import Testing
@testable import StellarKeystore
import StellarKeys

/// The time one GPU takes to try every PIN against a copied vault: one published figure (hashcat, RTX 4090,
/// 1,667 guesses/s at 64 MiB and 3 passes), scaled by passes × memory (issue 28, item 8).
@Suite struct GPUEstimateTests {
    static let referenceSeconds = 1e6 / 1667

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func theReferenceCostsTakeThePublishedTenMinutes() {
        #expect(PIN.possibleValues == 1_000_000)
        #expect(abs(seconds(KDFParameters(opsLimit: 3, memLimit: 64 << 20).allPINsOnOneGPU) - Self.referenceSeconds) < 1e-6)
    }

    @Test(arguments: [
        (KDFParameters.Level.interactive.parameters, 2.0 / 3),  // 2 passes × 64 MiB
        (KDFParameters.Level.moderate.parameters, 4.0),  // 3 × 256 MiB
        (KDFParameters.Level.sensitive.parameters, 64.0 / 3),  // 4 × 1 GiB
        (KDFParameters(opsLimit: 1, memLimit: 8 << 20), 1.0 / 24),  // a vault written by someone else, lighter than any level
    ])
    func eachCostIsScaledByPassesTimesMemory(_ parameters: KDFParameters, _ scale: Double) {
        #expect(abs(seconds(parameters.allPINsOnOneGPU) - Self.referenceSeconds * scale) < 1e-6 * Self.referenceSeconds * scale,
                "\(parameters)")
    }

    /// SECURITY.md's table gives, for each level, its passes, its memory and this estimate, and cites the figure.
    @Test func securityMDGivesTheEstimateForEachLevel() throws {
        let security = try String(contentsOf: repositoryRoot.appendingPathComponent("SECURITY.md"), encoding: .utf8)
        let prose = security.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(prose.contains("1,667 guesses a second on one NVIDIA RTX 4090 at 64 MiB, 3 passes and 1 lane"))
        let header = try #require(security.split(separator: "\n").first { $0.hasPrefix("| `--kdf` |") })
        #expect(header.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.prefix(4)
                == ["`--kdf`", "passes", "memory", "all 10^6 PINs, one RTX 4090 (estimate)"])
        for level in KDFParameters.Level.allCases {
            let row = try #require(security.split(separator: "\n").first { $0.hasPrefix("| \(level.rawValue) ") }, "no row for \(level)")
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let parameters = level.parameters
            let memory = parameters.memLimit >= 1 << 30 ? "\(parameters.memLimit >> 30) GiB" : "\(parameters.memLimit >> 20) MiB"
            #expect(cells[1] == "\(parameters.opsLimit)" && cells[2] == memory, "\(row)")
            let time = seconds(parameters.allPINsOnOneGPU)
            let shown = time < 90 * 60 ? "\(oneDecimal(time / 60)) min" : "\(oneDecimal(time / 3600)) h"
            #expect(cells[3].hasPrefix(shown + " "), "\(level): SECURITY.md says \(cells[3]), the estimate is \(shown)")
        }
    }

    func oneDecimal(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded))" : "\(rounded)"
    }
}
