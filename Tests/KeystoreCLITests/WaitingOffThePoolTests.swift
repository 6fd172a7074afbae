import Foundation
import Testing

/// Swift Testing runs every test, synchronous or not, on the cooperative pool (one thread per core), and starts a
/// test's time limit before its body has a thread. A test that waits for a process on a pool thread therefore stops
/// other tests (and their clocks run meanwhile): on a busy 2-core machine the 0.5-second
/// `theAppProductHasNoTPM2TSSInItsGraph` failed its 5-minute limit while two builds held both threads.
@Suite struct WaitingOffThePoolTests {
    /// Many waits at once take as long as one: each waits on a thread of its own, none takes a turn on the pool.
    @Test func waitingForProcessesLeavesThePoolFree() async throws {
        let waits = 5 * ProcessInfo.processInfo.activeProcessorCount
        let started = ContinuousClock.now
        try await withThrowingTaskGroup { group in
            for _ in 0..<waits {
                group.addTask {
                    let slept = try await KeystoreProcess(program: "/bin/sleep").run(["2"])
                    #expect(slept.status == 0)
                }
            }
            try await group.waitForAll()
        }
        // Taking turns on the pool, they would take (waits / cores) × 2 s = 10 s.
        let took = started.duration(to: .now)
        #expect(took < .seconds(6), "\(waits) two-second waits took \(took)")
    }

    /// A synchronous test under `.offThePool` runs on the tests' own threads: its waits block one of those.
    @Test(.offThePool) func aSynchronousTestOffThePoolRunsOnATestThread() {
        let thread = Thread.current.name ?? ""
        #expect(thread.hasPrefix("keystore test "), "\(thread)")
    }
}
