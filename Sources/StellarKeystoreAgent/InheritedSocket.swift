import Glibc
import StellarKeystore
import StellarText

/// A listening socket this process was handed by the service manager that started it: systemd's socket activation
/// (sd_listen_fds(3)), where the manager listens, starts the agent at the first connection, and passes the socket
/// as descriptor 3 onwards with `LISTEN_PID` (the process it is for), `LISTEN_FDS` (how many) and
/// `LISTEN_FDNAMES` (their names, `:`-separated). The agent serves it as one it made (`KeystoreAgent(inheriting:)`).
public struct InheritedSocket {
    /// Where it listens, as the socket itself says (`getsockname`), not as anyone claims.
    public let path: String
    /// The name its unit gave it (`FileDescriptorName=`), when the manager said.
    public let name: String?
    let socket: UnixSocket

    /// The first descriptor passed, by the protocol.
    static let firstDescriptor: Int32 = 3
    /// More sockets than this are not a unit written for an agent; the bound keeps a number from the environment
    /// from naming descriptors without end.
    static let mostDescriptors = 64
    /// The name that picks the agent's socket when several are passed.
    package static let agentName = "agent"

    /// The socket passed to this process, or nil when none was: `LISTEN_PID` unset, or another process's (the
    /// variables were inherited from a parent they were meant for). The variables are then removed from the
    /// environment, as sd_listen_fds(3) does, so that nothing this process starts takes the sockets for its own.
    /// One socket is taken whatever its name; of several, the one named `agentName`, and the others are closed.
    /// `expectedPath`, when given, must be where it listens. Refused (`AgentError.inheritedSocketRefused`) when
    /// the variables are malformed or the socket is not one `adoptListening` takes.
    package static func passedToThisProcess(expectedPath: String? = nil) throws -> InheritedSocket? {
        let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]
        var values: [String?] = []
        for variable in variables {
            let value: UnsafeMutablePointer<CChar>? = getenv(variable)
            values.append(value.map { String(cString: $0) })
        }
        defer { for variable in variables { unsetenv(variable) } }
        return try passed(pid: values[0], count: values[1], names: values[2], to: getpid(),
                          from: firstDescriptor, expectedPath: expectedPath)
    }

    /// `passedToThisProcess` on the variables given, for process `me`, with descriptors from `first`.
    static func passed(pid: String?, count: String?, names: String?, to me: Int32, from first: Int32,
                       expectedPath: String? = nil) throws -> InheritedSocket? {
        func refused(_ reason: String) -> AgentError { .inheritedSocketRefused(reason) }
        guard let pid else { return nil }
        guard let listener = Int32(decimal: pid), listener > 0 else { throw refused("LISTEN_PID is not a process id") }
        guard listener == me else { return nil }
        guard let count, let descriptors = Int(decimal: count), (1...mostDescriptors).contains(descriptors) else {
            throw refused("LISTEN_FDS is not a number from 1 to \(mostDescriptors)")
        }
        let given = try names.map { names in
            let split = names.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard split.count == descriptors else { throw refused("LISTEN_FDNAMES names \(split.count) sockets, LISTEN_FDS says \(descriptors)") }
            return split
        }
        let fds = (0..<Int32(descriptors)).map { first + $0 }
        let chosen: Int
        if descriptors == 1 {
            chosen = 0
        } else {
            let named = (given ?? []).indices.filter { given?[$0] == agentName }
            guard named.count == 1 else {
                throw refused("\(descriptors) sockets were passed, and \(named.isEmpty ? "none" : "more than one") is named \(agentName)")
            }
            chosen = named[0]
        }
        for (index, fd) in fds.enumerated() where index != chosen {
            // Not this agent's to serve: closed, so that they cannot reach whatever the process starts.
            if fcntl(fd, F_GETFD) >= 0 { close(fd) }
        }
        let (socket, path) = try UnixSocket.adoptListening(fds[chosen])
        if let expectedPath, expectedPath != path {
            throw refused("it listens at \(TerminalText.escaped(path, limit: nil)), not at \(TerminalText.escaped(expectedPath, limit: nil))")
        }
        return InheritedSocket(path: path, name: given?[chosen], socket: socket)
    }
}

private extension FixedWidthInteger {
    /// Only ASCII digits, as sd_listen_fds reads them: no sign, no space.
    init?(decimal text: String) {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        self.init(text)
    }
}
