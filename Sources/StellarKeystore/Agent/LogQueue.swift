import Glibc
import Dispatch
import Synchronization

/// The agent's log lines, handed to the program's log on a thread of their own. A log can block (a terminal
/// stopped with Ctrl-S, a pipe nobody reads, a full disk): then lines wait here, up to `capacity`, and past that
/// are counted and dropped, said in the next line that gets through. No client and no key's expiry waits on it.
/// While a question is put to the person at the agent's terminal (`holding`), nothing is written: the log of a
/// foreground agent is that terminal, and a line written there would land on the pending prompt.
final class LogQueue: Sendable {
    private let write: @Sendable (String) -> Void
    private let shared = Shared()
    private var ready: DispatchSemaphore { shared.ready }
    private var emptied: DispatchSemaphore { shared.emptied }
    /// Without a thread of its own (none could be made) it writes on the caller's: a log must not go missing.
    private let inline: Bool
    static let capacity = 4096

    /// What the writer thread shares with the queue; the thread lives as long as the process.
    private final class Shared: Sendable {
        let waiting = Mutex(Waiting())
        let ready = DispatchSemaphore(value: 0)
        let emptied = DispatchSemaphore(value: 0)
        /// Held by each write, and by `holding` for as long as its question is open.
        let output = Mutex(())
    }

    private struct Waiting {
        var entries: [String] = []
        var dropped = 0
        /// The writer is busy or about to look again: no need to wake it (a wake-up per request would cost
        /// each one a switch of threads).
        var awake = false
    }

    init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
        let shared = shared
        inline = !Threads.detach {
            while true {
                shared.ready.wait()
                while true {
                    // Lines of the next few requests gather meanwhile: one write for many.
                    usleep(2_000)
                    let (entries, dropped) = shared.waiting.withLock { state in
                        defer { state.entries.removeAll(); state.dropped = 0 }
                        return (state.entries, state.dropped)
                    }
                    if entries.isEmpty && dropped == 0 {
                        let idle = shared.waiting.withLock { state in
                            state.awake = !state.entries.isEmpty
                            return !state.awake
                        }
                        if idle {
                            shared.emptied.signal()
                            break
                        }
                        continue
                    }
                    let note = dropped > 0 ? ["\(dropped) log line(s) dropped: the log could not keep up"] : []
                    let text = (note + entries).joined(separator: "\n")
                    shared.output.withLock { _ in write(text) }
                }
            }
        }
    }

    /// One or more lines (joined by newlines), kept together.
    func append(_ entry: String) {
        if inline { return shared.output.withLock { _ in write(entry) } }
        let wake = shared.waiting.withLock { state in
            if state.entries.count < Self.capacity { state.entries.append(entry) } else { state.dropped += 1 }
            defer { state.awake = true }
            return !state.awake
        }
        if wake { shared.ready.signal() }
    }

    /// `body` with nothing written meanwhile: lines that come wait, and are written once it has returned. `body`
    /// must not log.
    func holding(_ body: () -> Bool) -> Bool {
        shared.output.withLock { _ in body() }
    }

    /// Waits up to `seconds` for what is queued to be written: the last lines of an agent that stops.
    func drain(seconds: Double) {
        guard !inline else { return }
        let deadline = DispatchTime.now() + seconds
        while shared.waiting.withLock({ !$0.entries.isEmpty || $0.awake }) {
            guard emptied.wait(timeout: deadline) == .success else { return }
        }
    }
}
