import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

/// What a copied vault costs to attack on this machine: one Argon2id guess at each level, and all 10^6 PINs.
struct BenchKDF: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-kdf",
        _superCommandName: KeystoreCommand.name,
        abstract: "Measure one PIN guess (Argon2id) at each --kdf level on this machine, and the time to try every PIN.",
        discussion: "SECURITY.md explains the figures. Takes a few seconds per level (sensitive needs 1 GiB of memory).")

    @Option(help: "Derivations per level; the median is reported.")
    var runs = 3

    @Option(parsing: .upToNextOption, help: "Levels to measure (default: all three).")
    var levels: [KDFParameters.Level] = KDFParameters.Level.allCases

    @Flag(help: "Print one JSON object.")
    var json = false

    struct Row: Encodable {
        let level: String
        let opsLimit: UInt64
        let memLimitMiB: UInt64
        let secondsPerGuess: Double
        let peakMemoryMiB: Int
        let cores: Int
        /// Every one of the 10^6 PINs, one core; the expected time to find a PIN is half of it.
        let allPINsOneCoreHours: Double
        /// The same on all cores that memory allows.
        let allPINsAllCoresHours: Double
        /// Every PIN on one GPU: the library's estimate, scaled from a published figure, not measured here.
        let allPINsOneGPUHoursEstimated: Double
    }

    func run() throws {
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let memory = sysconf(Int32(_SC_PHYS_PAGES)) * sysconf(Int32(_SC_PAGESIZE))
        var rows: [Row] = []
        for level in levels {
            let parameters = level.parameters
            let seconds = try parameters.medianGuessTime(runs: runs).inSeconds
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            let parallel = max(1, min(cores, memory / Int(parameters.memLimit)))
            rows.append(Row(
                level: level.rawValue, opsLimit: parameters.opsLimit, memLimitMiB: parameters.memLimit >> 20,
                secondsPerGuess: seconds, peakMemoryMiB: usage.ru_maxrss / 1024, cores: parallel,
                allPINsOneCoreHours: seconds * 1e6 / 3600, allPINsAllCoresHours: seconds * 1e6 / 3600 / Double(parallel),
                allPINsOneGPUHoursEstimated: parameters.allPINsOnOneGPU.inSeconds / 3600))
        }
        if json {
            struct Output: Encodable { let cores: Int; let memoryMiB: Int; let levels: [Row] }
            try Console.printJSON(Output(cores: cores, memoryMiB: memory >> 20, levels: rows))
            return
        }
        Console.print("machine: \(cores) cores, \(memory >> 30) GiB; one Argon2id derivation per PIN guess (median of \(runs))")
        Console.print(pad(["level", "ops", "memory", "per guess", "peak RSS", "10^6 PINs, 1 core", "10^6 PINs, all cores",
                           "10^6 PINs, 1 GPU (estimate)"]))
        for row in rows {
            Console.print(pad([
                row.level, "\(row.opsLimit)", "\(row.memLimitMiB) MiB", format(row.secondsPerGuess, "s", 3),
                "\(row.peakMemoryMiB) MiB", format(row.allPINsOneCoreHours, "h", 1),
                "\(format(row.allPINsAllCoresHours, "h", 1)) (\(row.cores))", format(row.allPINsOneGPUHoursEstimated, "h", 2),
            ]))
        }
        Console.print("1 GPU: not measured here; \(GPUEstimate.source).")
        Console.print("Expected time to find a PIN is half the time for all of them; see SECURITY.md.")
    }

    private func pad(_ columns: [String]) -> String {
        var line = zip(columns, [12, 4, 10, 11, 10, 19, 22, 27]).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }
            .joined(separator: " ")
        while line.hasSuffix(" ") { line.removeLast() }
        return line
    }

    private func format(_ value: Double, _ unit: String, _ decimals: Int) -> String {
        let scale = [1.0, 10, 100, 1000][decimals]
        return "\((value * scale).rounded() / scale) \(unit)"
    }
}
