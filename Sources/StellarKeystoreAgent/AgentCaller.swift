import Glibc
import StellarKeystore
import StellarText
import StellarKeys

/// The process at the other end of a connection: its pid from `SO_PEERCRED`, and `/proc/PID/exe` read when it
/// connected (a pid alone could be reused by the time a person reads the log). For a question to a person, also
/// its chain of parents, read then too.
package struct AgentCaller: CustomStringConvertible {
    let pid: Int32
    let executable: String
    /// The executable's path as the kernel reports it, unescaped, for a policy's rules to match; nil when it
    /// could not be read.
    let executablePath: String?
    /// From `SO_PEERCRED`; nil for a caller made without a connection.
    let uid: UInt32?
    /// The caller and its parents up to its session leader; empty unless asked for (it costs two reads of /proc
    /// per process, which only a question to a person needs).
    let chain: CallerChain
    /// The connection, watched while a question is pending: a client that hangs up withdraws it.
    let socket: UnixSocket?

    package init(pid: Int32) { self.init(pid: pid, uid: nil, withChain: false, socket: nil) }

    init(pid: Int32, uid: UInt32?, withChain: Bool, socket: UnixSocket?) {
        self.pid = pid
        self.uid = uid
        executablePath = Self.executable(of: pid)
        executable = executablePath.map { TerminalText.escaped($0, limit: nil) } ?? "(executable unknown)"
        chain = withChain ? CallerChain(from: pid) : CallerChain(processes: [], isCut: false)
        self.socket = socket
    }

    package var description: String { "pid \(pid) \(executable)" }

    /// The executables of the caller's parents, the nearest first, up to `CallerChain.longest` or a process whose
    /// executable cannot be read (read when a policy's rule names parents; a parent that has exited ends it).
    func parentExecutables() -> [String] {
        var paths: [String] = []
        var next = pid
        while paths.count < CallerChain.longest, let stat = CallerChain.stat(of: next), stat.parent > 0,
              let path = Self.executable(of: stat.parent) {
            paths.append(path)
            next = stat.parent
        }
        return paths
    }

    static func executable(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }
}

/// Who asks for a signature: the calling process and its parents, up to the leader of its session (the shell or
/// terminal it runs under), as the kernel reports them, so that a person can tell `git` from something that only
/// calls itself so. The shape is ssh-tpm-agent's peer chain ("ssh (1234) ← git ← zsh": agent/peer.go at
/// Foxboron/ssh-tpm-agent 3854ff20dfa9cd174f7950ac2062ad3baa6d7b35), with two differences: the name is the
/// executable the kernel ran (`/proc/PID/exe`), which a process cannot rename, rather than its `comm`, which it
/// can (`prctl`); and every process keeps its pid.
public struct CallerChain: Sendable, Equatable {
    /// One process of the chain.
    public struct Process: Sendable, Equatable {
        public let pid: Int32
        /// Its executable, escaped for a terminal: the full path for the caller, the file name for its parents;
        /// `comm` in brackets when the executable cannot be read (another user's process). Nil: the process had
        /// exited by the time it was read.
        public let name: String?
    }

    /// The caller first, then its parent, and so on.
    public let processes: [Process]
    /// Whether the chain was cut at `longest` before its session leader.
    package let isCut: Bool

    /// The most processes a chain shows.
    public static let longest = 8

    init(processes: [Process], isCut: Bool) {
        self.processes = processes
        self.isCut = isCut
    }

    /// Reads the chain of `pid` from /proc.
    public init(from pid: Int32) {
        var processes: [Process] = []
        var next = pid
        var isCut = false
        while true {
            guard processes.count < Self.longest else {
                isCut = true
                break
            }
            guard let stat = Self.stat(of: next) else {
                processes.append(Process(pid: next, name: nil))
                break
            }
            let name: String
            if let path = AgentCaller.executable(of: next) {
                name = processes.isEmpty ? path : String(path.split(separator: "/").last ?? Substring(path))
            } else {
                name = "[\(stat.command)]"
            }
            processes.append(Process(pid: next, name: TerminalText.escaped(name, limit: processes.isEmpty ? nil : TerminalText.valueLimit)))
            // The session leader ends the chain; so does a process with no parent to read (pid 1, or one whose
            // parent is outside this pid namespace).
            guard stat.session != next, stat.parent > 0 else { break }
            next = stat.parent
        }
        self.processes = processes
        self.isCut = isCut
    }

    /// "/usr/bin/ssh (1234) ← git (1200) ← zsh (1100)", "pid 1234 (exited)", "… ← more not shown".
    public var text: String {
        let shown = processes.map { process in
            process.name.map { "\($0) (\(process.pid))" } ?? "pid \(process.pid) (exited)"
        }
        return (shown + (isCut ? ["… (more not shown)"] : [])).joined(separator: " ← ")
    }

    /// `comm`, the parent and the session of `pid`, from /proc/PID/stat; nil when it has gone.
    static func stat(of pid: Int32) -> (command: String, parent: Int32, session: Int32)? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let bytes = buffer[..<count]
        // "PID (COMM) STATE PPID PGRP SESSION …" (proc(5)): COMM may hold spaces and parentheses, so it ends at the
        // last ')'.
        guard let first = bytes.firstIndex(of: UInt8(ascii: "(")), let last = bytes.lastIndex(of: UInt8(ascii: ")")), first < last
        else { return nil }
        let fields = bytes[(last + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count >= 4, let parent = Int32(String(decoding: fields[1], as: UTF8.self)),
              let session = Int32(String(decoding: fields[3], as: UTF8.self)) else { return nil }
        return (String(decoding: bytes[(first + 1)..<last], as: UTF8.self), parent, session)
    }
}
