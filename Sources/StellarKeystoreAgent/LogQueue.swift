import Glibc
import Dispatch
import Synchronization

/// The agent's log lines, handed to the program's log on a thread of their own. A log can block (a terminal
/// stopped with Ctrl-S, a pipe nobody reads, a full disk): then lines wait here, up to `capacity`, and past that
/// are counted and dropped, said in the next line that gets through. No client and no key's expiry waits on it.
/// While a question is put to the person at the agent's terminal (`holding`), nothing is written: the log of a
/// foreground agent is that terminal, and a line written there would land on the pending prompt. A question never
/// waits on a blocked log: at most a moment for a write already under way.
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
        /// Signalled when a question ends and the writer waits for it (`Waiting.writerWaits`).
        let released = DispatchSemaphore(value: 0)
        /// Serializes the writes of a queue without a thread of its own.
        let inlineOutput = Mutex(())
    }

    private struct Waiting {
        var entries: [String] = []
        var dropped = 0
        /// The writer is busy or about to look again: no need to wake it (a wake-up per request would cost
        /// each one a switch of threads).
        var awake = false
        /// A question is open (`holding`): nothing is written until it ends.
        var held = false
        /// The writer is writing lines it took before the question opened.
        var writing = false
        /// The writer found a question open and waits for `released`.
        var writerWaits = false
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
                    let taken = shared.waiting.withLock { state -> ([String], Int)? in
                        if state.held {
                            state.writerWaits = true
                            return nil
                        }
                        defer { state.entries.removeAll(); state.dropped = 0 }
                        state.writing = !state.entries.isEmpty || state.dropped > 0
                        return (state.entries, state.dropped)
                    }
                    guard let (entries, dropped) = taken else {
                        shared.released.wait()
                        continue
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
                    write(text)
                    shared.waiting.withLock { $0.writing = false }
                }
            }
        }
    }

    /// One or more lines (joined by newlines), kept together.
    func append(_ entry: String) {
        if inline {
            // While a question is open the line waits, and `holding` writes it after the answer.
            let held = shared.waiting.withLock { state in
                if state.held { state.entries.append(entry) }
                return state.held
            }
            if !held { shared.inlineOutput.withLock { _ in write(entry) } }
            return
        }
        let wake = shared.waiting.withLock { state in
            if state.entries.count < Self.capacity { state.entries.append(entry) } else { state.dropped += 1 }
            defer { state.awake = true }
            return !state.awake
        }
        if wake { shared.ready.signal() }
    }

    /// `body` with nothing written meanwhile: lines that come wait, and are written once it has returned. A write
    /// already under way gets up to a second to end; a log that blocks longer (a stopped terminal, a pipe nobody
    /// reads) does not hold the question up. `body` must not log.
    func holding(_ body: () -> Bool) -> Bool {
        shared.waiting.withLock { $0.held = true }
        for _ in 0..<1000 where shared.waiting.withLock({ $0.writing }) { usleep(1_000) }
        let answer = body()
        let (wake, waited) = shared.waiting.withLock { state in
            defer { state.held = false; state.writerWaits = false }
            let waited = inline ? state.entries : []
            if inline { state.entries.removeAll() }
            return (state.writerWaits, waited)
        }
        if wake { shared.released.signal() }
        if !waited.isEmpty { shared.inlineOutput.withLock { _ in write(waited.joined(separator: "\n")) } }
        return answer
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
