import Glibc
import StellarKeystore

/// A process as the kernel named it to the agent: its pid, and a pidfd, which names that process and no other for
/// as long as it is open, whatever later takes its pid. What the agent reads of the process in /proc by its pid is
/// the process's own only if, after the read, the pidfd still names a process with that pid: until it is reaped,
/// its pid cannot be reused.
final class NamedProcess: @unchecked Sendable {
    let pid: Int32
    private let pidfd: Int32

    /// Takes `pidfd`, which it closes.
    init(pid: Int32, pidfd: Int32) {
        self.pid = pid
        self.pidfd = pidfd
    }

    deinit { close(pidfd) }

    /// Whether the process has not been reaped (`UnixSocket.processIsThere`). Its pid is the one the kernel gave
    /// with the pidfd (both name one kernel pid), as this process's pid namespace sees it. The check is a
    /// signal 0 through the pidfd rather than the pidfd's `Pid:` line in /proc/self/fdinfo, which says the same
    /// and cost 13 µs a request against 1 (measured on Linux 6.18 under load; a signPayload round trip is
    /// tens of µs).
    var isStillThere: Bool { UnixSocket.processIsThere(pidfd) }
}

/// Who wrote a request, part by part: the kernel names the writer of each read (`UnixSocket.read(into:naming:)`)
/// and never joins two writers' bytes in one, so a request that came in several reads may have several writers.
struct RequestWriters {
    /// The writer of some of the bytes a connection holds, as far as the kernel could name it.
    enum Writer {
        case process(NamedProcess, uid: UInt32)
        /// The kernel named a writer by its pid, but could not make a pidfd for it (ESRCH: it was gone).
        case gone(pid: Int32, error: Int32)
        /// The kernel named no writer (bytes written before the agent asked it to), or named it by pid 0 (a writer
        /// in a pid namespace the agent cannot see); `uid` is the writer's when the kernel said it.
        case unnamed(uid: UInt32?)
        /// Bytes of one unfinished request that more than one writer wrote.
        case several
    }

    /// The writers of the bytes held, in order, each up to the offset where its bytes end. What is held after a
    /// round of requests is one unfinished request, so at most two parts are ever kept: a request that already
    /// has two writers is marked `several` when a third read comes (so that a client that trickles a request
    /// cannot make the agent hold a pidfd per byte).
    private var parts: [(end: Int, writer: Writer)] = []

    /// `sender` wrote the bytes that now end at offset `end`.
    mutating func add(_ sender: UnixSocket.Sender?, endingAt end: Int) {
        let writer: Writer
        if let sender, let pidfd = sender.processDescriptor {
            writer = sender.pid > 0 ? .process(NamedProcess(pid: sender.pid, pidfd: pidfd), uid: sender.uid) : .unnamed(uid: sender.uid)
            if sender.pid <= 0 { close(pidfd) }
        } else if let sender, sender.processDescriptorError != 0 {
            writer = .gone(pid: sender.pid, error: sender.processDescriptorError)
        } else {
            // `UInt32.max`: no credentials came with the bytes.
            writer = .unnamed(uid: sender.flatMap { $0.uid == .max ? nil : $0.uid })
        }
        if parts.count > 1, let last = parts.last { parts = [(last.end, .several)] }
        if let last = parts.last, Self.isOne(last.writer, writer) {
            // The new part's pidfd, if any, is closed as it is dropped here.
            parts[parts.count - 1].end = end
        } else {
            parts.append((end, writer))
        }
    }

    /// Whether `later` is the writer `earlier` names: the same pid, while the earlier pidfd still names it (so it
    /// was not reused in between).
    private static func isOne(_ earlier: Writer, _ later: Writer) -> Bool {
        switch (earlier, later) {
        case (.process(let first, let firstUID), .process(let second, let secondUID)):
            first.pid == second.pid && firstUID == secondUID && first.isStillThere
        case (.gone(let first, _), .gone(let second, _)): first == second
        case (.unnamed(let first), .unnamed(let second)): first == second
        case (.several, .several): true
        default: false
        }
    }

    /// The writers of `bytes` (one or two).
    func writers(of bytes: Range<Int>) -> [Writer] {
        var start = 0
        var found: [Writer] = []
        for part in parts {
            defer { start = part.end }
            guard part.end > bytes.lowerBound, start < bytes.upperBound else { continue }
            found.append(part.writer)
        }
        return found
    }

    /// The first `count` bytes are gone from the buffer.
    mutating func removeFirst(_ count: Int) {
        guard count > 0 else { return }
        parts = parts.compactMap { part in part.end > count ? (part.end - count, part.writer) : nil }
    }
}
