import Foundation
import Testing
import TestFixtures

/// Swift Testing runs every test, synchronous or not, on the cooperative pool (one thread per core), and starts a
/// test's time limit before its body has a thread. A test that waits for a process on a pool thread therefore stops
/// other tests (and their clocks run meanwhile): on a busy 2-core machine the 0.5-second
/// `theAppProductHasNoTPM2TSSInItsGraph` failed its 5-minute limit while two builds held both threads.
@Suite struct WaitingOffThePoolTests {
    /// Many waits at once: every process is started and waited for together, none takes a turn on the pool. Each
    /// child says it started, then waits for a word that comes only once all have started; waits that took turns on
    /// the pool's threads (one per core) would never let the later ones start, and the word comes after 60 s
    /// instead, which fails. No clock decides it: a busy machine only makes it slower.
    @Test func waitingForProcessesLeavesThePoolFree() async throws {
        let waits = 5 * ProcessInfo.processInfo.activeProcessorCount
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-rendezvous-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Off the pool too: it says the word once every child has started, or after 60 s whatever happened.
        let word = Thread {
            for _ in 0..<600 {
                let started = (try? FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("started.") }.count) ?? 0
                if started == waits { break }
                usleep(100_000)
            }
            _ = FileManager.default.createFile(atPath: directory + "/go", contents: Data())
        }
        word.start()
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<waits {
                group.addTask {
                    // Started: it says so, then waits for the word; it says whether all had started by then.
                    let script = "touch '\(directory)/started.\(index)'; while [ ! -e '\(directory)/go' ]; do sleep 0.05; done; "
                        + "[ $(ls '\(directory)' | grep -c '^started\\.') -eq \(waits) ]"
                    return try await KeystoreProcess(program: "/bin/sh").run(["-c", script], timeout: 120).status == 0
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == waits && results.allSatisfy { $0 }, "not all \(waits) waits ran at once: \(results)")
    }

    /// A synchronous test under `.offThePool` runs on the tests' own threads: its waits block one of those.
    @Test(.offThePool) func aSynchronousTestOffThePoolRunsOnATestThread() {
        #expect(TestThreads.isCurrent, "on \(Thread.current.name ?? "a thread with no name")")
    }
}
