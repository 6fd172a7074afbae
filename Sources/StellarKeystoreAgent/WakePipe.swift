import Glibc
import StellarKeystore

/// A pipe used as a flag that `poll` can wait for: one end written to wake a thread, the other in its poll set.
/// Both ends are non-blocking and closed on exec.
struct WakePipe {
    let readEnd: Int32
    let writeEnd: Int32

    /// `purpose` names the step in the error when no pipe can be made.
    init(for purpose: String) throws(AgentError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw AgentError.system(purpose, errno) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties what `signal` wrote, so that the next poll waits again.
    func drain() {
        var byte: UInt8 = 0
        while read(readEnd, &byte, 1) == 1 {}
    }

    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}
