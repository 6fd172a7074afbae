import Testing
import TestFixtures
import Synchronization
@testable import StellarKeys
#if canImport(Glibc)
import Glibc
#endif

/// What the CLI tests cannot show, the keystore process having one thread there: in a process with many (this
/// one), an ending signal sent during a hold is taken by another thread, and must be noted there, not acted on,
/// until the hold ends. SIGHUP stands for the four; this process's own handler counts it, as an app's would.
@Suite(.offThePool) struct SignalHoldTests {
    static let received = Atomic<Int>(0)

    @Test func aSignalOnAnotherThreadDuringAHoldIsNotedAndActsOnlyAfterIt() throws {
        var counting = sigaction()
        counting.__sigaction_handler.sa_handler = { _ in _ = SignalHoldTests.received.add(1, ordering: .relaxed) }
        sigemptyset(&counting.sa_mask)
        var previous = sigaction()
        try #require(sigaction(SIGHUP, &counting, &previous) == 0)
        defer { sigaction(SIGHUP, &previous, nil) }
        let before = Self.received.load(ordering: .relaxed)
        SignalHold.during { arrived in
            #expect(!arrived())
            kill(getpid(), SIGHUP)
            for _ in 0..<500 { guard !arrived() else { break }; usleep(10_000) }
            #expect(arrived())
            usleep(100_000)
            #expect(Self.received.load(ordering: .relaxed) == before, "the handler ran during the hold")
        }
        for _ in 0..<500 { guard Self.received.load(ordering: .relaxed) == before else { break }; usleep(10_000) }
        #expect(Self.received.load(ordering: .relaxed) == before + 1)
        // Nothing is noted for the next hold, and the handler is this test's again.
        SignalHold.during { arrived in #expect(!arrived()) }
        kill(getpid(), SIGHUP)
        for _ in 0..<500 { guard Self.received.load(ordering: .relaxed) == before + 1 else { break }; usleep(10_000) }
        #expect(Self.received.load(ordering: .relaxed) == before + 2)
    }
}
