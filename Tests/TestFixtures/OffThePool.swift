import Foundation
import Synchronization
import Testing

/// Blocking work (a `waitpid`, a poll loop) run on a thread of its own while the calling task is suspended.
///
/// Swift Testing runs tests on the cooperative pool, one thread per core, and a time limit's clock starts before
/// the test's body has a thread. Whatever blocks on a pool thread (a test waiting minutes for `swift build`) makes
/// every other test wait for a thread while its clock runs.
public enum OffThePool {
    /// The result of `blocking`, run on a new thread; the pool thread is free meanwhile.
    public static func run<T: Sendable>(_ blocking: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
            let thread = Thread { done.resume(with: Result { try blocking() }) }
            thread.name = "off the pool"
            thread.start()
        }
    }
}

/// A few threads of the tests' own, as many as the cooperative pool has: a synchronous test that waits (for a
/// process, in a `usleep` loop) blocks one of these, never a pool thread, and the tests run as many at a time as
/// before.
public final class TestThreads: TaskExecutor {
    public static let shared = TestThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// Whether the calling thread is one of these. Not by its name: a thread started from a pool thread sometimes
    /// keeps that thread's name ("oot.default-qos") even though it names itself first thing (one run in five under
    /// load, on this machine).
    public static var isCurrent: Bool { Thread.current.threadDictionary[marker] as? Bool == true }
    private static let marker = "keystore test thread"

    private let jobs = Mutex<[UnownedJob]>([])
    private let queued = DispatchSemaphore(value: 0)

    private init(count: Int) {
        for index in 0..<count {
            // Named from inside: a thread started from a pool thread keeps that thread's name (comm) otherwise. The
            // name is for people reading `ps`; `isCurrent` goes by the mark.
            Thread { [self] in
                Thread.current.name = "keystore test \(index)"
                Thread.current.threadDictionary[Self.marker] = true
                work()
            }.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        queued.signal()
    }

    private func work() {
        while true {
            queued.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs each test of a suite (or one test) on `TestThreads`: its body, synchronous or not, holds no pool thread.
///
/// Not for a test with a time limit: its clock runs from when it is queued, so it belongs on the pool, `async`,
/// awaiting its processes (`KeystoreProcess.run` in an `async` test waits off the pool).
public struct OffThePoolTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) {
            // The preference applies from the task's next enqueue: yield, so that the body starts on a test thread.
            await Task.yield()
            try await function()
        }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Each test runs on the tests' own threads, not the cooperative pool (`TestThreads`).
    public static var offThePool: Self { OffThePoolTrait() }
}
