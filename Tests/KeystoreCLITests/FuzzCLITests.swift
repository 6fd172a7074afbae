import Foundation
import Testing
import TestFixtures

/// The fuzzing harness (Sources/keystore-fuzz, fuzz/run): every saved input still passes, and a brief run finds
/// nothing new.
@Suite struct FuzzCLITests {
    static let repository = KeystoreHome.fixtures.deletingLastPathComponent()
    static let targets = ["strkey", "vault", "batch", "session", "mnemonic", "throttle", "stellarcli", "tx", "auth", "toml", "smartaccount", "agent", "sep7", "backup"]

    /// The committed seeds and every input that once failed, through the same checks the fuzzer makes.
    @Test(.offThePool, arguments: targets)
    func savedInputsStillPass(target: String) throws {
        let directories = ["corpus", "crashers"].map { Self.repository.appendingPathComponent("fuzz/\($0)/\(target)").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        let files = try directories.flatMap { try FileManager.default.contentsOfDirectory(atPath: $0) }
        #expect(files.count >= 2, "fuzz/corpus/\(target) has seeds")
        let replayer = KeystoreProcess(program: KeystoreProcess.builtProduct("keystore-fuzz"))
        let result = try replayer.run(["replay", target] + directories)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(target): \(files.count) inputs replayed, all checks held\n")
    }

    /// libFuzzer on each target for a fixed number of executions (KEYSTORE_FUZZ_RUNS, 10,000 by default; 0 skips
    /// it), two targets at a time. This is how CI fuzzes (`.ci/run` runs only `swift test`): a smoke check that each
    /// target runs, reaches its checks ten thousand times and finds nothing quickly; the long runs are `fuzz/run` by
    /// hand. A count, not a time: the work is the same on a quiet machine and a loaded one (eight seconds a target
    /// made 5,786 executions of the slowest at load 9 and 400,000 of the fastest when quiet), and it is a few seconds
    /// of CPU where eight seconds a target were two minutes of it, on the longest chain of the suite.
    @Test(.enabled(if: Self.briefRunExecutions > 0, "KEYSTORE_FUZZ_RUNS=0"), .timeLimit(.minutes(20)))
    func briefFuzzRunFindsNothing() async throws {
        let script = Self.repository.appendingPathComponent("fuzz/run").path
        let result = try await KeystoreProcess(program: script).run(["--runs", String(Self.briefRunExecutions), "--jobs", "2"], timeout: nil)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == Self.targets.count, "\(result.stdout)")
        for (line, target) in zip(lines, Self.targets) {
            let fields = line.split(separator: " ")
            #expect(fields.first.map(String.init) == target && line.hasSuffix(" ok"), "\(line)")
            #expect((fields.dropFirst().first.flatMap { Int($0) } ?? 0) >= Self.briefRunExecutions, "\(line)")
        }
    }

    static var briefRunExecutions: Int {
        ProcessInfo.processInfo.environment["KEYSTORE_FUZZ_RUNS"].flatMap(Int.init) ?? 10_000
    }
}
