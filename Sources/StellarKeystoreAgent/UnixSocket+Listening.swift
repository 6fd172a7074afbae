import Glibc
import StellarKeystore
import StellarText

/// The server's half of `UnixSocket`: a socket to listen on, made here or passed by a service manager, and the
/// connections accepted from it. The client's half, and what both use, stays beside `AgentClient`.
extension UnixSocket {
    /// A listening socket at `path`, mode 0600. The mode is set after `bind`, not with the umask, which is the
    /// whole process's and would change files other threads create meanwhile; until then the socket is in a
    /// directory only its owner can enter, and the agent checks every peer's uid anyway.
    static func listen(at path: String, backlog: Int32 = 64) throws -> UnixSocket {
        var address = try address(path)
        let socket = try stream()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            throw errno == EADDRINUSE ? AgentError.socketInUse(path) : AgentError.system("bind \(path)", errno)
        }
        guard chmod(path, 0o600) == 0 else {
            let code = errno
            unlink(path)
            throw AgentError.system("chmod \(path)", code)
        }
        guard Glibc.listen(socket.fd, backlog) == 0 else {
            let code = errno
            unlink(path)
            throw AgentError.system("listen", code)
        }
        // Accepting never blocks: the agent's loop accepts until none is waiting.
        _ = fcntl(socket.fd, F_SETFL, fcntl(socket.fd, F_GETFL) | O_NONBLOCK)
        return socket
    }

    /// The socket at descriptor `fd`, which the process that started this one left open for it to serve, and the
    /// path it listens at: refused unless it is a Unix stream socket that listens, at a path in the file system
    /// (not an abstract or unnamed one), and that path is a socket in a directory only this user can change, and
    /// the user's own. A mode that lets group or others in (a socket bound under a loose umask) is narrowed to
    /// 0600, as for a socket this process binds itself. It is made non-blocking, like `listen(at:)`'s, and
    /// closed on exec.
    static func adoptListening(_ fd: Int32) throws -> (socket: UnixSocket, path: String) {
        func refused(_ reason: String) -> AgentError { .inheritedSocketRefused(reason) }
        var info = stat()
        guard fcntl(fd, F_GETFD) >= 0, fstat(fd, &info) == 0 else { throw refused("descriptor \(fd) is not open") }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw refused("descriptor \(fd) is not a socket") }
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0, length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard option(SO_DOMAIN) == AF_UNIX, option(SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
            throw refused("descriptor \(fd) is not a Unix stream socket")
        }
        guard option(SO_ACCEPTCONN) == 1 else { throw refused("descriptor \(fd) is not listening") }
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let pathBytes = withUnsafeBytes(of: address.sun_path) { raw in
            Array(raw.prefix(max(0, Int(length) - MemoryLayout<sa_family_t>.size)).prefix { $0 != 0 })
        }
        // An abstract address begins with a zero byte: it has no file, so no owner or mode to check.
        guard named == 0, let first = pathBytes.first, first == UInt8(ascii: "/") else {
            throw refused("descriptor \(fd) listens at no path in the file system")
        }
        let path = String(decoding: pathBytes, as: UTF8.self)
        switch try directoryTrust(of: path) {
        case .privateToMe: break
        case .absent: throw refused("its directory is gone (\(TerminalText.escaped(path, limit: nil)))")
        case .distrusted(let why): throw refused("\(TerminalText.escaped(path, limit: nil)): \(why.reason)")
        }
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else {
            throw refused("\(TerminalText.escaped(path, limit: nil)) is not a socket")
        }
        guard info.st_uid == geteuid() else {
            throw refused("\(TerminalText.escaped(path, limit: nil)): \(AgentError.SocketDistrust.socketNotOwned(owner: info.st_uid).reason)")
        }
        if info.st_mode & 0o077 != 0 {
            guard chmod(path, 0o600) == 0 else { throw AgentError.system("chmod \(path)", errno) }
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (UnixSocket(fd: fd), path)
    }

    /// What one `accept` gave.
    enum Accepted {
        case connection(UnixSocket)
        /// None is waiting.
        case none
        /// This process has no descriptor left for it; the connection may still be waiting.
        case outOfDescriptors
        /// The system has no memory for it now.
        case noMemory
        /// It failed for this connection alone (it was reset before it could be accepted, a signal): try again.
        case failed
    }

    /// The next waiting connection; the listening socket is non-blocking.
    func accept() -> Accepted {
        let client = Glibc.accept(fd, nil, nil)
        if client >= 0 {
            // The agent starts no process, so a descriptor cannot leak between accept and here.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            return .connection(UnixSocket(fd: client))
        }
        switch errno {
        case EMFILE, ENFILE: return .outOfDescriptors
        case ENOBUFS, ENOMEM: return .noMemory
        case EINTR, ECONNABORTED, EPROTO: return .failed
        default: return .none  // EAGAIN, or an error no retry would mend: wait for the next wake-up
        }
    }
}
