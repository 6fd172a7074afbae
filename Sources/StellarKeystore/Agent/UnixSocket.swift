import Glibc
internal import CPlatform
import StellarKeys
import StellarText

/// A Unix stream socket: the agent client's use of the socket calls, and what the server shares with it; the
/// server's own half (listening, adopting and accepting) is `UnixSocket+Listening.swift` in StellarKeystoreAgent.
package final class UnixSocket: @unchecked Sendable {
    package private(set) var fd: Int32

    package init(fd: Int32) { self.fd = fd }

    deinit { close() }

    package func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    /// `sun_path` holds 108 bytes with its terminating zero.
    package static let longestPath = 107

    /// The address of `path`, refused (`socketPathTooLong`) when it cannot be one: empty, too long, or with a NUL.
    package static func checkedAddress(_ path: String) throws -> sockaddr_un { try address(path) }

    package static func address(_ path: String) throws -> sockaddr_un {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= longestPath, !bytes.contains(0) else { throw AgentError.socketPathTooLong(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    package static func stream() throws -> UnixSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AgentError.system("socket", errno) }
        return UnixSocket(fd: fd)
    }

    /// A connection to the socket at `path`; nil when nothing listens there (no file, or a socket left by an
    /// agent that is gone).
    package static func connect(to path: String, timeout seconds: Int? = nil) throws -> UnixSocket? {
        var address = try address(path)
        let socket = try stream()
        // Before connect, which waits on a full queue for as long as the send timeout allows.
        if let seconds { socket.setTimeouts(seconds: seconds) }
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if result == 0 { return socket }
            switch errno {
            case EINTR: continue
            case ENOENT, ECONNREFUSED: return nil
            case EAGAIN where seconds != nil: throw AgentError.connectionLost("did not take the connection within \(seconds!) s")
            case let code: throw AgentError.system("connect \(path)", code)
            }
        }
    }

    /// A connection to a server of this process's own user at `path`, or nil when nothing listens there. Before
    /// a byte is sent: the path must be absolute; its directory a real directory (not a symlink) owned by the
    /// effective uid, with no access for group or others; the socket owned by the effective uid; and the server's
    /// uid, as the kernel recorded it when the server began to listen (`SO_PEERCRED`), the effective uid. The
    /// last is what counts, since it cannot be forged; the others refuse a planted socket with a clearer reason,
    /// and before it could learn anything from a connection.
    package static func connectToOwnServer(at path: String, timeout: Int) throws -> UnixSocket? {
        guard path.hasPrefix("/") else { throw AgentError.socketPathNotAbsolute(path) }
        let me = geteuid()
        switch try directoryTrust(of: path) {
        case .absent: return nil
        case .distrusted(let why): throw AgentError.untrustedSocket(path, why)
        case .privateToMe: break
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw AgentError.system("read \(path)", errno)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw AgentError.notASocket(path) }
        guard info.st_uid == me else { throw AgentError.untrustedSocket(path, .socketNotOwned(owner: info.st_uid)) }
        guard let socket = try connect(to: path, timeout: timeout) else { return nil }
        guard let server = socket.peer() else { throw AgentError.untrustedSocket(path, .serverUnknown) }
        guard server.uid == me else { throw AgentError.untrustedSocket(path, .serverNotOwned(uid: server.uid)) }
        return socket
    }

    /// Whether the directory of the socket at `path` is one only this process's user can change.
    package enum DirectoryTrust: Equatable {
        case privateToMe
        /// There is no such directory.
        case absent
        case distrusted(AgentError.SocketDistrust)
    }

    /// Its directory must be a real directory (not a symlink) owned by the effective uid, with no access for group
    /// or others.
    package static func directoryTrust(of path: String) throws -> DirectoryTrust {
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        // "/agent.sock" is in "/", which is checked like any other directory (and is no one's private one).
        let directory = parent.isEmpty ? "/" : parent
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .absent }
            throw AgentError.system("read \(directory)", errno)
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: return .distrusted(.directoryIsSymlink)
        default: return .distrusted(.directoryNotADirectory)
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            return .distrusted(.directoryNotPrivate(owner: info.st_uid, mode: info.st_mode & 0o7777))
        }
        return .privateToMe
    }

    /// Who is at the other end, as the kernel recorded it at `connect`: not forgeable by the peer.
    package struct Peer: Sendable, Equatable {
        package let pid: Int32
        package let uid: UInt32
    }

    package func peer() -> Peer? {
        var pid: Int32 = 0, uid: UInt32 = 0
        guard keystore_peer_credentials(fd, &pid, &uid) == 0 else { return nil }
        return Peer(pid: pid, uid: uid)
    }

    /// Has the kernel name the sender of each read from now on (`read(into:naming:)`): set on a listening socket,
    /// it passes to every connection accepted from it, from its first byte. False when this kernel cannot
    /// (`SO_PASSPIDFD` came with Linux 6.5).
    package func identifySenders() -> Bool { keystore_identify_senders(fd) == 0 }

    /// A pidfd for the process that connected (`SO_PEERPIDFD`), the caller's to close; nil when the kernel gives
    /// none (before Linux 6.5).
    package func peerProcessDescriptor() -> Int32? {
        let pidfd = keystore_peer_pidfd(fd)
        return pidfd >= 0 ? pidfd : nil
    }

    /// Whether the process `pidfd` names (one of `peerProcessDescriptor` or `Sender`) has not been reaped, so
    /// that its pid is still its own; false also when that cannot be told.
    package static func processIsThere(_ pidfd: Int32) -> Bool { keystore_pidfd_names_live_process(pidfd) == 1 }

    /// Who wrote what one read returned, as the kernel named it (`identifySenders`).
    package struct Sender {
        /// A pidfd for the writer, the caller's to close; nil when none came.
        package let processDescriptor: Int32?
        /// Why the kernel made no pidfd (ESRCH: the writer was gone), or 0.
        package let processDescriptorError: Int32
        /// 0 and `UInt32.max` when they did not come.
        package let pid: Int32
        package let uid: UInt32
    }

    /// `read(into:)` on a socket that names senders, and who wrote what was read: the kernel never joins two
    /// writers' bytes in one read. Descriptors the writer passed along are closed.
    package func read(into buffer: UnsafeMutableRawBufferPointer, naming sender: inout Sender?) -> Int? {
        while true {
            var pidfd: Int32 = -1, problem: Int32 = 0, pid: Int32 = 0, uid: UInt32 = .max
            let count = keystore_receive_from_sender(fd, buffer.baseAddress, UInt(buffer.count), &pidfd, &problem, &pid, &uid)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            sender = Sender(processDescriptor: pidfd >= 0 ? pidfd : nil, processDescriptorError: problem, pid: pid, uid: uid)
            return Int(count)
        }
    }

    /// Waits until one of `fds` can be read (or is closed), at most `milliseconds` (-1: forever); for each,
    /// whether it can. Nil if poll failed.
    package static func waitForInput(_ fds: [Int32], milliseconds: Int32) -> [Bool]? {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let count = poll(&polled, nfds_t(polled.count), milliseconds)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            return polled.map { $0.revents != 0 }
        }
    }

    /// Waits until one of `fds` can be read or `watched` is hung up (closed by its peer, or shut down here), at
    /// most `milliseconds`. Input waiting on `watched` does not end the wait: a client that pipelined its next
    /// request is still there. Nil if poll failed.
    package static func waitForInput(_ fds: [Int32], orHangUpOf watched: Int32, milliseconds: Int32) -> (ready: [Bool], hungUp: Bool)? {
        // Events 0: poll still reports POLLHUP and POLLERR, which it always does.
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) } + [pollfd(fd: watched, events: 0, revents: 0)]
        while true {
            let count = poll(&polled, nfds_t(polled.count), milliseconds)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            return (polled.dropLast().map { $0.revents != 0 }, polled.last!.revents != 0)
        }
    }

    /// Reads what is there, up to `buffer.count` bytes: 0 at the end of the stream, nil on an error.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            return count < 0 ? nil : count
        }
    }

    /// Has the kernel name, with what is read from now on, the process that wrote it (SO_PASSCRED), for
    /// `read(into:sender:)`. Set before the request whose answer's writer matters is sent.
    package func identifyWriters() { var on: Int32 = 1; _ = setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size)) }

    /// `read(into:)`, and the pid of the process that wrote what was read, as the kernel recorded it (0 if it did
    /// not say): on a socket a service manager listens on, `peer()` names the manager, and this the agent.
    package func read(into buffer: UnsafeMutableRawBufferPointer, sender: inout Int32) -> Int? {
        while true {
            let count = keystore_receive_with_sender(fd, buffer.baseAddress, UInt(buffer.count), &sender)
            if count < 0 && errno == EINTR { continue }
            return count < 0 ? nil : Int(count)
        }
    }

    /// Ends the connection both ways, waking a thread blocked on it; the descriptor stays its owner's to close.
    package func hangUp() { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    /// Whether the peer has closed its end or sent something unasked: a kept connection in either state is of no
    /// more use.
    package var isStale: Bool {
        var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&polled, 1, 0) != 0
    }

    /// Whether the last failed read ran out of time (`setTimeouts`), rather than failing otherwise.
    package static var timedOut: Bool { errno == EAGAIN || errno == EWOULDBLOCK }

    /// Writes all of `bytes`; false if the peer is gone. Never SIGPIPE.
    package func write(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes(write) }
    package func write(_ secret: SecureBytes) -> Bool { secret.withUnsafeBytes(write) }

    private func write(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// A bound on each blocking receive and send, so that a client never waits forever on an agent that stopped
    /// answering.
    package func setTimeouts(seconds: Int) {
        var time = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }
}
