import Glibc
internal import CPlatform
import StellarKeystore

/// Where the agent's request log goes: standard error, a file, or syslog.
final class AgentLog: @unchecked Sendable {
    private let fd: Int32?

    init(path: String?, syslog: Bool) throws {
        if let path {
            // Not blocking on a FIFO someone planted, and only a regular file that is this user's alone: the log
            // names identities, addresses and callers.
            let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            // ENXIO: a FIFO that nobody reads.
            guard fd >= 0 else { throw errno == ENXIO ? AgentCommandError.unsafeLog(path) : AgentError.system("open \(path)", errno) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
                Glibc.close(fd)
                throw AgentCommandError.unsafeLog(path)
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            self.fd = fd
        } else {
            fd = syslog ? nil : STDERR_FILENO
        }
    }

    /// One or more lines (joined by newlines): one write to a file, one syslog message each.
    func write(_ lines: String) {
        if let fd {
            _ = Console.write(Array((lines + "\n").utf8), to: fd)
        } else {
            for line in lines.split(separator: "\n") { keystore_syslog(String(line)) }
        }
    }
}
