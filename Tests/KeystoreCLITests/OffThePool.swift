import Foundation

/// Blocking work (a `waitpid`, a poll loop) run on a thread of its own while the calling task is suspended.
///
/// Swift Testing runs tests on the cooperative pool, one thread per core, and a time limit's clock starts before
/// the test's body has a thread. Whatever blocks on a pool thread (a test waiting minutes for `swift build`) makes
/// every other test wait for a thread while its clock runs.
enum OffThePool {
    /// The result of `blocking`, run on a new thread; the pool thread is free meanwhile.
    static func run<T: Sendable>(_ blocking: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
            let thread = Thread { done.resume(with: Result { try blocking() }) }
            thread.name = "off the pool"
            thread.start()
        }
    }
}
