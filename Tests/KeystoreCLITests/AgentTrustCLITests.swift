import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// `Tests/Interop/fake-agent.py` run for one test: a server that answers like an agent and keeps whatever it is
/// sent, so that a test can tell whether a client sent it anything.
final class FakeAgent {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/fake-agent.py").path
    static let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    let record: String
    private let running: KeystoreProcess.Running
    /// The script, copied where nobody can read it, for a fake run as nobody.
    private let copy: FilesForAnotherUser?

    /// Listens at `socket`; `options` are the script's (`--as-uid`, `--pid`, …); `prefix` runs it as nobody
    /// (`asNobody`), from a copy of the script of nobody's own. Throws within seconds, with the script's stderr, if
    /// it does not start.
    init(socket: String, scratch: String, options: [String] = [], prefix: [String] = []) throws {
        record = scratch + "/fake-agent-\(UUID().uuidString).record"
        #expect(FileManager.default.createFile(atPath: record, contents: nil, attributes: [.posixPermissions: 0o666]))
        chmod(record, 0o666)  // past the umask, for a fake running as nobody
        copy = prefix.isEmpty ? nil : try FilesForAnotherUser([Self.script])
        running = try KeystoreProcess(program: "/usr/bin/python3")
            .start([copy?.path(of: Self.script) ?? Self.script, socket, record] + options, prefix: prefix)
        let stdout = running.scratch.appendingPathComponent("stdout")
        try running.waitUntilReady("the fake agent") {
            var info = stat()
            return lstat(socket, &info) == 0 && ((try? String(contentsOf: stdout, encoding: .utf8))?.contains("ready") ?? false)
        }
    }

    /// Everything any client sent it.
    var received: [UInt8] { Array(FileManager.default.contents(atPath: record) ?? Data()) }

    deinit {
        kill(running.pid, SIGKILL)
        _ = try? running.wait(timeout: 10)
        try? FileManager.default.removeItem(atPath: record)
    }
}

/// A directory anyone may write in, removed with everything in it (whoever made it) when the test ends.
final class SharedDirectory {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-shared-\(UUID().uuidString)").path
    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        chmod(path, 0o1777)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// What an agent client trusts (issue 28, items 1 and 2): only a socket of its own user, in a private directory,
/// answered by a server of its own uid; and it never signals a pid it was told.
@Suite(.offThePool) struct AgentTrustCLITests {
    static let golden = KeystoreHome.golden
    static let rootAndSetpriv = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// The review's attack: another user makes the socket's directory first (0755, its own) and listens there.
    /// `login --agent` refuses before the PIN is even asked, and the fake receives nothing; `agent`, `agent list`
    /// and `agent stop` refuse it too.
    @Test(.enabled(if: rootAndSetpriv, "needs root and setpriv to run the fake agent as another user"))
    func aSocketInAnotherUsersDirectoryGetsNothing() throws {
        let agent = try AgentHome()
        let shared = try SharedDirectory()
        let socket = shared.path + "/keystore-0/agent.sock"
        let fake = try FakeAgent(socket: socket, scratch: shared.path, options: ["--directory-mode", "0755", "--socket-mode", "0777"],
                                 prefix: FakeAgent.asNobody)
        let login = try agent.keystore(agent: socket).run(["login", "--agent", "--name", Self.golden.name, "--pin-stdin"],
                                                          stdin: Array("270419\n".utf8))
        #expect(login.status == 8 && login.stdout.isEmpty, "\(login.stderr)")
        #expect(login.stderr == "keystore: Refusing the agent socket \(socket): its directory is not private to you (owner uid 65534, mode 0755). Nothing was sent.\n",
                "\(login.stderr)")
        for command in [["agent", "list"], ["agent", "stop"], ["agent", "lock"]] {
            let refused = try agent.keystore(agent: socket).run(command)
            #expect(refused.status == 8 && refused.stdout.isEmpty && refused.stderr.contains("Refusing the agent socket"), "\(command): \(refused.stderr)")
        }
        // Starting an agent there is refused as the agent itself refuses the directory (issue 41, 7.3).
        let start = try agent.keystore(agent: socket).run(["agent", "--socket", socket])
        #expect(start.status == 8 && start.stdout.isEmpty, "\(start.stderr)")
        #expect(start.stderr == "keystore: The agent's socket directory \(shared.path)/keystore-0 is not private to you (owner uid 65534, mode 0755); "
                + "give --socket a path in a directory of your own (mode 0700).\n", "\(start.stderr)")
        #expect(fake.received.isEmpty, "the fake agent received \(fake.received.count) bytes")
    }

    /// A helper that does not start fails its test within seconds and says why (its own stderr), instead of the
    /// test waiting out a loop and reporting only that a socket is missing.
    @Test func aFakeAgentThatDoesNotStartFailsWithinSecondsSayingWhy() throws {
        let shared = try SharedDirectory()
        let started = ContinuousClock.now
        var failure = ""
        do {
            _ = try FakeAgent(socket: shared.path + "/agent.sock", scratch: shared.path, options: ["--no-such-option"])
        } catch {
            failure = "\(error)"
        }
        #expect(started.duration(to: .now) < .seconds(3))
        #expect(failure.contains("unrecognized arguments: --no-such-option"), "\(failure)")
    }

    /// In the user's own private directory, a socket file that another user owns is refused.
    @Test(.enabled(if: geteuid() == 0, "needs root to give the socket to another user"))
    func aSocketOfAnotherOwnerGetsNothing() throws {
        let agent = try AgentHome()
        let fake = try FakeAgent(socket: agent.socket, scratch: agent.home.path, options: ["--directory-mode", "0700", "--socket-owner", "65534"])
        let login = try agent.keystore(agent: agent.socket).run(["login", "--agent", "--name", Self.golden.name, "--pin-stdin"],
                                                                stdin: Array("270419\n".utf8))
        #expect(login.status == 8 && login.stderr == "keystore: Refusing the agent socket \(agent.socket): it belongs to uid 65534. Nothing was sent.\n",
                "\(login.stderr)")
        #expect(fake.received.isEmpty)
    }

    /// A socket file and directory of the user's own, but a server of another uid (as `SO_PEERCRED` reports it), is
    /// refused once connected, before a byte is sent.
    @Test(.enabled(if: geteuid() == 0, "needs root to switch the fake agent's uid"))
    func aServerOfAnotherUserGetsNothing() throws {
        let agent = try AgentHome()
        let fake = try FakeAgent(socket: agent.socket, scratch: agent.home.path, options: ["--directory-mode", "0700", "--as-uid", "65534"])
        let login = try agent.keystore(agent: agent.socket).run(["login", "--agent", "--name", Self.golden.name, "--pin-stdin"],
                                                                stdin: Array("270419\n".utf8))
        #expect(login.status == 8 && login.stderr == "keystore: Refusing the agent socket \(agent.socket): the server runs as uid 65534. Nothing was sent.\n",
                "\(login.stderr)")
        let sign = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"])
        #expect(sign.status == 8 && sign.stderr.contains("the server runs as uid 65534"), "\(sign.stderr)")
        #expect(fake.received.isEmpty)
    }

    /// `agent stop` asks the agent to stop; it signals no process, whatever pid an agent reports.
    @Test func agentStopSignalsNoPIDItIsTold() throws {
        let agent = try AgentHome()
        let bystander = try KeystoreProcess(program: "/bin/sleep").start(["60"])
        defer {
            kill(bystander.pid, SIGKILL)
            _ = try? bystander.wait(timeout: 10)
        }
        let fake = try FakeAgent(socket: agent.socket, scratch: agent.home.path,
                                 options: ["--directory-mode", "0700", "--pid", "\(bystander.pid)"])
        let stop = try agent.keystore(agent: agent.socket).run(["agent", "stop"])
        var status: Int32 = 0
        #expect(waitpid(bystander.pid, &status, WNOHANG) == 0 && kill(bystander.pid, 0) == 0, "agent stop signalled the pid it was told")
        // This fake answers and keeps running: the client says so instead of claiming success.
        #expect(stop.status == 8 && stop.stdout.isEmpty && stop.stderr == "keystore: The agent at \(agent.socket) did not stop.\n", "\(stop.stderr)")
        #expect(String(decoding: fake.received, as: UTF8.self).contains(#""method":"shutdown""#))
    }

    /// The export lines are shell-quoted and absolute: a path with `$(…)` in it runs nothing under eval, and a
    /// relative --socket still names the same socket from any other directory.
    @Test func exportLinesAreQuotedAndAbsolute() throws {
        let agent = try AgentHome()
        let work = agent.home.path + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let script = """
            set -e
            cd "$WORK"
            eval "$("$KEYSTORE" agent --socket 'run$(touch pwned)/agent.sock')"
            printf '%s\\n' "$KEYSTORE_AGENT"
            cd /
            "$KEYSTORE" agent list
            eval "$("$KEYSTORE" agent stop)"
            printf 'unset:%s\\n' "${KEYSTORE_AGENT-yes}"
            """
        var shell = KeystoreProcess(program: "/bin/bash")
        shell.environment = agent.keystore().environment
        shell.environment["WORK"] = work
        shell.environment["KEYSTORE"] = KeystoreProcess.binary
        // Whatever the script got to, the agent it started is stopped (by its absolute path, or its relative one).
        defer {
            for socket in ["\(work)/run$(touch pwned)/agent.sock", "run/agent.sock"] {
                _ = try? agent.keystore().run(["agent", "stop", "--socket", socket], prefix: ["/usr/bin/env", "-C", work])
            }
        }
        let result = try shell.run(["-c", script], timeout: 60)
        #expect(!FileManager.default.fileExists(atPath: work + "/pwned"), "eval ran the command in the socket path")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(work)/run$(touch pwned)/agent.sock\nunset:yes\n", "\(result.stdout)")
        #expect(result.stderr.contains("the agent holds no keys"), "\(result.stderr)")
    }

    /// `keystore agent` with an agent of this user already running there prints its export line again (exit 0),
    /// so that a first run without eval can be mended by running it again with eval.
    @Test func startingWhenOneRunsPrintsItsExportLine() throws {
        let agent = try AgentHome()
        try agent.startInForeground()
        let again = try agent.keystore().run(["agent"])
        #expect(again.status == 0 && again.stdout == "export KEYSTORE_AGENT=\(agent.socket)\n", "\(again.stderr)")
        #expect(again.stderr.hasPrefix("keystore: an agent is already running at \(agent.socket), pid "), "\(again.stderr)")
        // One that would have other limits is not silently taken for the one asked for.
        let other = try agent.keystore().run(["agent", "--ttl", "1h"])
        #expect(other.status == 8 && other.stdout.isEmpty && other.stderr.hasPrefix("keystore: An agent is already running at \(agent.socket)"),
                "\(other.stderr)")
    }

    /// `--log` writes only to a regular file of the user's alone: a FIFO someone planted does not block the agent,
    /// and a file others can read or write is refused; both before the agent listens.
    @Test func theLogIsAPrivateRegularFile() throws {
        let agent = try AgentHome()
        let fifo = agent.home.path + "/log.fifo", shared = agent.home.path + "/shared.log"
        #expect(mkfifo(fifo, 0o622) == 0)
        #expect(FileManager.default.createFile(atPath: shared, contents: nil))
        chmod(shared, 0o644)
        for log in [fifo, shared] {
            let start = try agent.keystore().run(["agent", "start", "--foreground", "--socket", agent.socket, "--log", log], timeout: 20)
            #expect(start.status == 8 && start.stderr == "keystore: The log \(log) is not a regular file of yours alone (mode 0600); nothing was written.\n",
                    "\(start.status) \(start.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: agent.socket))
    }

    /// A detached agent keeps none of its launcher's open files.
    @Test func aDetachedAgentInheritsNoDescriptor() throws {
        let agent = try AgentHome()
        let start = try agent.keystore().start(["agent"], files: [7: Array("launcher's file".utf8)])
        let result = try start.wait(timeout: 30)
        try #require(result.status == 0, "\(result.stderr)")
        let pid = try #require(result.stderr.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) },
                               "\(result.stderr)")
        defer { _ = try? agent.keystore(agent: agent.socket).run(["agent", "stop"]) }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        let targets = descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        // The number 7 itself may be taken again by a socket the agent opens later (a client's connection); what
        // must be gone is the launcher's file, which the descriptor's target names.
        #expect(!targets.contains { $0.hasSuffix("/fd7") }, "\(descriptors) \(targets)")
    }

    /// With no thread to spare, a connection is closed, never served on the accepting thread: a silent client
    /// cannot stop the agent from accepting (or its keys from expiring). Run as nobody under `prlimit --nproc`.
    @Test(.enabled(if: rootAndSetpriv && FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs root, setpriv and prlimit"))
    func withNoThreadToSpareAConnectionIsClosed() throws {
        let shared = try SharedDirectory()
        let socket = shared.path + "/run/agent.sock"
        let copy = try FilesForAnotherUser([KeystoreProcess.binary])
        var process = KeystoreProcess(program: copy.path(of: KeystoreProcess.binary))
        process.environment["KEYSTORE_HOME"] = shared.path + "/home"
        let running = try process.start(["agent", "start", "--foreground", "--socket", socket, "--log", shared.path + "/agent.log"],
                                        prefix: FakeAgent.asNobody + ["/usr/bin/prlimit", "--nproc=1:1"])
        defer {
            kill(running.pid, SIGKILL)
            _ = try? running.wait(timeout: 10)
        }
        try running.waitUntilReady("the agent") { var info = stat(); return lstat(socket, &info) == 0 }
        // A silent connection, then one that asks: the second must be dealt with (answered or closed) at once.
        let client = """
            import socket, sys
            silent = socket.socket(socket.AF_UNIX); silent.connect(sys.argv[1])
            asking = socket.socket(socket.AF_UNIX); asking.connect(sys.argv[1]); asking.settimeout(5)
            try:
                asking.sendall(b'{"jsonrpc":"2.0","id":1,"method":"status"}\\n')
                print("answered" if asking.recv(4096) else "closed")
            except (ConnectionResetError, BrokenPipeError):  # closed before or after the request arrived
                print("closed")
            except socket.timeout:
                print("timeout")
            """
        let asked = try KeystoreProcess(program: "/usr/bin/python3").run(["-c", client, socket], prefix: FakeAgent.asNobody, timeout: 30)
        #expect(asked.stdout == "closed\n", "\(asked.stdout) \(asked.stderr)")
    }

    /// Out of file descriptors, the agent waits for one instead of spinning on the connections it cannot accept.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs prlimit"))
    func outOfDescriptorsTheAgentDoesNotSpin() throws {
        let agent = try AgentHome()
        let running = try agent.keystore().start(["agent", "start", "--foreground", "--socket", agent.socket, "--log", agent.log],
                                                 prefix: ["/usr/bin/prlimit", "--nofile=24:24"])
        defer {
            kill(running.pid, SIGKILL)
            _ = try? running.wait(timeout: 10)
        }
        for _ in 0..<500 { guard !FileManager.default.fileExists(atPath: agent.socket) else { break }; usleep(10_000) }
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<40 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(agent.socket.utf8) + [0]) }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            held.append(fd)
        }
        func cpuTicks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/\(running.pid)/stat", encoding: .utf8)) ?? ""
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            return fields.count > 13 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        }
        usleep(200_000)
        let before = cpuTicks()
        usleep(1_000_000)
        let used = cpuTicks() - before
        #expect(used < 20, "the agent used \(used) of 100 ticks in one second")
    }
}
