import Glibc
import StellarKeystore
import StellarText
import StellarKeys

/// The process that asks: the one that wrote a request (the kernel names it for each read, with a pidfd), or,
/// where the kernel cannot (before Linux 6.5), the one that connected (`SO_PEERCRED`). Its executable
/// (`/proc/PID/exe`) is read when its request is, and, as far as the request needs them, its parents' executables
/// (for a policy's rules) and its chain up to its session leader (for a question to a person); a pid alone could be
/// reused by the time a person reads the log. With a pidfd the reads are checked afterwards (`NamedProcess`): a
/// process that was reaped meanwhile is refused, never taken for the process that got its pid.
package struct AgentCaller: CustomStringConvertible {
    let pid: Int32
    let executable: String
    /// The executable's path as the kernel reports it, unescaped, for a policy's rules to match; nil when it
    /// could not be read.
    let executablePath: String?
    /// As the kernel named it with the request (or at `connect`); nil for a caller made without a connection.
    let uid: UInt32?
    /// The caller and its parents up to its session leader; empty unless asked for (it costs two reads of /proc
    /// per process, which only a question to a person needs).
    let chain: CallerChain
    /// The executables of the caller's parents, the nearest first (`parentExecutables()`); nil unless asked for.
    private let parents: [(path: String, file: ExecutableFile?)]?
    /// The file the caller runs, read with its path.
    let executableFile: ExecutableFile?
    /// The connection, watched while a question is pending: a client that hangs up withdraws it.
    let socket: UnixSocket?
    /// False when the kernel did not name the process that wrote the request, which is then judged as the one
    /// that connected: it matches no policy rule that names callers (`PolicyFacts`).
    var isWriterNamed = true

    /// The caller has exited (been reaped), so what was read by its pid may be another process's.
    struct Gone: Error {}

    package init(pid: Int32) { self.init(pid: pid, uid: nil, withChain: false, socket: nil) }

    /// Read by `pid` alone, unchecked: for a kernel that names no process by a pidfd.
    init(pid: Int32, uid: UInt32?, withChain: Bool, socket: UnixSocket?) {
        self.pid = pid
        self.uid = uid
        executablePath = Self.executable(of: pid)
        executableFile = ExecutableFile(path: "/proc/\(pid)/exe")
        executable = executablePath.map { TerminalText.escaped($0, limit: nil) } ?? "(executable unknown)"
        chain = withChain ? CallerChain(from: pid) : CallerChain(processes: [], isCut: false)
        parents = nil
        self.socket = socket
    }

    /// Read by the pid of `process`, then checked: `Gone` if the pidfd no longer names a process with that pid.
    /// The parents are checked too (`Lineage`).
    init(_ process: NamedProcess, uid: UInt32?, readingParents: Bool, withChain: Bool, socket: UnixSocket?) throws(Gone) {
        pid = process.pid
        self.uid = uid
        let path = Self.executable(of: pid)
        let file = ExecutableFile(path: "/proc/\(pid)/exe")
        if readingParents || withChain {
            let lineage = Lineage(of: pid, pastSessionLeader: readingParents)
            parents = readingParents ? lineage.parentExecutables : nil
            chain = withChain ? lineage.chain(callerPath: path) : CallerChain(processes: [], isCut: false)
        } else {
            parents = nil
            chain = CallerChain(processes: [], isCut: false)
        }
        // Last: every read above was of this process (and, through `Lineage`'s checks, of its parents).
        guard process.isStillThere else { throw Gone() }
        executablePath = path
        executableFile = file
        executable = path.map { TerminalText.escaped($0, limit: nil) } ?? "(executable unknown)"
        self.socket = socket
    }

    /// A caller that had exited (been reaped) when it was to be read: nothing read by its pid could be trusted.
    init(exited pid: Int32, uid: UInt32?, socket: UnixSocket?) {
        self.pid = pid
        self.uid = uid
        executablePath = nil
        executableFile = nil
        executable = "(exited)"
        chain = CallerChain(processes: [.init(pid: pid, name: nil)], isCut: false)
        parents = []
        self.socket = socket
    }

    package var description: String { "pid \(pid) \(executable)" }

    /// The executables of the caller's parents, the nearest first, up to `CallerChain.longest` or a process whose
    /// executable cannot be read (read when a policy's rule names parents; a parent that has exited ends it).
    func parentExecutables() -> [(path: String, file: ExecutableFile?)] {
        if let parents { return parents }
        var paths: [(path: String, file: ExecutableFile?)] = []
        var next = pid
        while paths.count < CallerChain.longest, let stat = CallerChain.stat(of: next), stat.parent > 0,
              let path = Self.executable(of: stat.parent) {
            paths.append((path, ExecutableFile(path: "/proc/\(stat.parent)/exe")))
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

/// A file as the system names it, whatever path it is reached by: its device and inode. A policy's executable is
/// matched by the file its path names, so that another mount showing another file at that path (in a mount
/// namespace of the caller's) is not taken for it.
package struct ExecutableFile: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64

    /// The file at `path`, symbolic links followed (`/proc/PID/exe` to the file the process runs, even one
    /// removed since); nil if there is none.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// A process and its parents as /proc showed them, checked after they were read: each parent's pid is read from
/// its child's `stat`, and read again once everything is read, from the farthest parent to the caller. A child's
/// parent changes only when its parent exits (it is given to a reaper, for good), so a parent still there at the
/// second read was there through every read of it, and what was read by its pid was its own; the chain ends
/// before the first parent that changed. The caller itself is checked by its pidfd, after this.
struct Lineage {
    struct Member {
        let pid: Int32
        let stat: (command: String, parent: Int32, session: Int32)?
        let executable: String?
        let file: ExecutableFile?
    }

    /// The caller first; a member whose `stat` is nil had exited by the time it was read.
    private(set) var members: [Member] = []
    /// Whether the reading stopped at `CallerChain.longest` parents before a session leader.
    private(set) var isCut = false

    init(of pid: Int32, pastSessionLeader: Bool) {
        var next = pid
        while true {
            guard members.count <= CallerChain.longest else {
                isCut = true
                break
            }
            let stat = CallerChain.stat(of: next)
            members.append(Member(pid: next, stat: stat, executable: stat == nil ? nil : AgentCaller.executable(of: next),
                                  file: stat == nil ? nil : ExecutableFile(path: "/proc/\(next)/exe")))
            guard let stat, stat.parent > 0, pastSessionLeader || stat.session != next else { break }
            next = stat.parent
        }
        // Read again, the farthest first: a parent that changed ends the chain before the parent it had.
        for index in members.indices.dropLast().reversed() where CallerChain.stat(of: members[index].pid)?.parent != members[index].stat?.parent {
            members.removeSubrange((index + 1)...)
            isCut = false
        }
    }

    /// As `AgentCaller.parentExecutables()`.
    var parentExecutables: [(path: String, file: ExecutableFile?)] {
        Array(members.dropFirst().prefix { $0.executable != nil }.prefix(CallerChain.longest).map { ($0.executable!, $0.file) })
    }

    /// The chain a person is shown: up to the session leader, at most `CallerChain.longest` processes.
    func chain(callerPath: String?) -> CallerChain {
        var processes: [CallerChain.Process] = []
        var cut = isCut
        for (index, member) in members.enumerated() {
            guard processes.count < CallerChain.longest else {
                cut = true
                break
            }
            guard let stat = member.stat else {
                processes.append(.init(pid: member.pid, name: nil))
                break
            }
            let path = index == 0 ? callerPath : member.executable
            let name = path.map { index == 0 ? $0 : String($0.split(separator: "/").last ?? Substring($0)) } ?? "[\(stat.command)]"
            processes.append(.init(pid: member.pid, name: TerminalText.escaped(name, limit: index == 0 ? nil : TerminalText.valueLimit)))
            if stat.session == member.pid || stat.parent <= 0 {
                cut = false
                break
            }
        }
        return CallerChain(processes: processes, isCut: cut)
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
