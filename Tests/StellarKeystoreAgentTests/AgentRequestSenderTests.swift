import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreAgent
import TestFixtures

/// Each request is judged as the process that wrote it, as the kernel names it with the request (a pidfd), not as
/// the process that connected: a connection passed on with `SCM_RIGHTS`, kept across an `exec`, or written to by a
/// child is another caller's then. A writer that was reaped before its request was read is refused, never taken
/// for whatever has its pid now. The clients are copies of one Python interpreter at two paths.
@Suite(.offThePool) struct AgentRequestSenderTests {
    static let request = #"{"jsonrpc":"2.0","id":1,"method":"signPayload","params":{"payload":"AA=="}}"#

    /// Connects to argv[1], then hands the connection to a copy at argv[2] over a socket pair (SCM_RIGHTS) and
    /// waits for it; the copy sends the request and prints the answer.
    static let passing = """
        import socket, subprocess, sys
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.connect(sys.argv[1])
        mine, theirs = socket.socketpair()
        receiver = '''
        import socket, sys
        carrier = socket.socket(fileno=int(sys.argv[1]))
        _, fds, _, _ = socket.recv_fds(carrier, 1, 1)
        s = socket.socket(fileno=fds[0])
        s.sendall(sys.argv[2].encode() + b"\\\\n")
        print(s.makefile().readline().strip(), flush=True)
        '''
        child = subprocess.Popen([sys.argv[2], '-c', receiver, str(theirs.fileno()), sys.argv[3]], pass_fds=[theirs.fileno()])
        socket.send_fds(mine, [b'x'], [agent.fileno()])
        child.wait()
        """

    /// Connects to argv[1], then runs the copy at argv[2] in its place (`exec`), the connection kept open across it.
    static let execing = """
        import os, socket, sys
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.connect(sys.argv[1])
        os.set_inheritable(agent.fileno(), True)
        sent = '''
        import socket, sys
        s = socket.socket(fileno=int(sys.argv[1]))
        s.sendall(sys.argv[2].encode() + b"\\\\n")
        print(s.makefile().readline().strip(), flush=True)
        '''
        os.execv(sys.argv[2], [sys.argv[2], '-c', sent, str(agent.fileno()), sys.argv[3]])
        """

    /// Sends request 1 itself; then a child (a fork: the same executable, another pid) sends request 2 and exits,
    /// and is reaped before "reaped" is printed; then the answers are printed.
    static let forking = """
        import os, socket, sys
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.connect(sys.argv[1])
        agent.sendall(sys.argv[2].encode() + b"\\n")
        child = os.fork()
        if child == 0:
            agent.sendall(sys.argv[3].encode() + b"\\n")
            os._exit(0)
        os.waitpid(child, 0)
        print("reaped %d" % child, flush=True)
        answers = agent.makefile()
        print(answers.readline().strip(), flush=True)
        print(answers.readline().strip(), flush=True)
        """

    /// Sends the first half of a request, then a child sends the rest.
    static let halving = """
        import os, socket, sys
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.connect(sys.argv[1])
        request = sys.argv[2].encode() + b"\\n"
        agent.sendall(request[:20])
        child = os.fork()
        if child == 0:
            agent.sendall(request[20:])
            os._exit(0)
        os.waitpid(child, 0)
        print(agent.makefile().readline().strip(), flush=True)
        """

    /// Connects, then a child that gave up its uid for argv[3]'s sends the request; the answer is printed.
    static let otherUser = """
        import os, socket, sys
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.connect(sys.argv[1])
        child = os.fork()
        if child == 0:
            os.setgid(int(sys.argv[3]))
            os.setuid(int(sys.argv[3]))
            agent.sendall(sys.argv[2].encode() + b"\\n")
            os._exit(0)
        os.waitpid(child, 0)
        print(agent.makefile().readline().strip(), flush=True)
        """

    /// Two copies of the system's Python, `first/python3` and `second/python3`, in a directory removed at the end.
    struct Copies {
        let directory = TemporaryDirectory()
        var first: String { "\(directory.path)/first/python3" }
        var second: String { "\(directory.path)/second/python3" }

        init() throws {
            let python = try #require(["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) })
            for copy in [first, second] {
                try FileManager.default.createDirectory(atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Program.copy(python, to: copy)
            }
        }

        /// An agent whose one rule allows raw payloads from `executable` alone.
        func agent(allowing executable: String, confirm: (@Sendable (AgentConfirmation) -> Bool)? = nil) throws -> RunningAgent {
            let policy = try AgentPolicy(json: Array("""
                {"version": 1, "rules": [{"name": "raw", "callers": [{"executable": "\(executable)"}], "kinds": ["payload"]}]}
                """.utf8))
            let running = try RunningAgent(confirm: confirm, policy: PolicyWindows(directory: directory.path, policy: policy))
            try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
            return running
        }
    }

    /// Runs `executable -c script arguments…`; its output's lines, each handed to `line` as it comes.
    static func run(_ executable: String, _ script: String, _ arguments: [String], commandLine whole: [String]? = nil,
                    line: (String) -> Void = { _ in }) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = whole ?? ["-c", script] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var lines: [String] = []
        var pending = Data()
        while true {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            pending.append(data)
            while let newline = pending.firstIndex(of: 0x0A) {
                let text = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                lines.append(text)
                line(text)
            }
        }
        process.waitUntilExit()
        return lines
    }

    static func signed(_ answer: String?) -> Bool { answer?.contains(#""signature""#) == true }

    @Test func aConnectionPassedToAnotherExecutableIsJudgedAsTheOneThatWrites() throws {
        let copies = try Copies()
        // Allowed: the process that sends, not the one that connected.
        let allowingTheWriter = try copies.agent(allowing: copies.second)
        let passed = try Self.run(copies.first, Self.passing, [allowingTheWriter.socketPath, copies.second, Self.request])
        #expect(passed.count == 1 && Self.signed(passed.first), "\(passed)")
        allowingTheWriter.stop()
        let logged = try #require(allowingTheWriter.log.first { $0.contains("signPayload") })
        #expect(logged.contains(" \(copies.second) (on a connection made by pid ") && logged.contains(" \(copies.first))"), "\(logged)")

        // Allowed: the process that connected, which passes its connection on.
        let allowingTheConnector = try copies.agent(allowing: copies.first)
        let refused = try Self.run(copies.first, Self.passing, [allowingTheConnector.socketPath, copies.second, Self.request])
        #expect(refused.count == 1 && !Self.signed(refused.first))
        #expect(refused.first?.contains("no rule allows payload requests for golden from \(copies.second)") == true, "\(refused)")
    }

    @Test func aConnectionKeptAcrossExecIsJudgedAsTheNewExecutable() throws {
        let copies = try Copies()
        let allowingTheConnector = try copies.agent(allowing: copies.first)
        let refused = try Self.run(copies.first, Self.execing, [allowingTheConnector.socketPath, copies.second, Self.request])
        #expect(refused.first?.contains("no rule allows payload requests for golden from \(copies.second)") == true, "\(refused)")
        let allowingTheNew = try copies.agent(allowing: copies.second)
        let signed = try Self.run(copies.first, Self.execing, [allowingTheNew.socketPath, copies.second, Self.request])
        #expect(Self.signed(signed.first), "\(signed)")
    }

    /// A question to a person names the process that wrote the request, and so does the log.
    @Test func theQuestionShowsTheProcessThatWrote() throws {
        let copies = try Copies()
        let asked = RunningAgent.LockedLines()
        let plain = try RunningAgent(confirm: { question in asked.append(question.caller.text); return true })
        try AgentClient(socketPath: plain.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let answers = try Self.run(copies.first, Self.passing, [plain.socketPath, copies.second, Self.request])
        #expect(Self.signed(answers.first), "\(answers)")
        let shown = try #require(asked.lines.first)
        #expect(shown.hasPrefix("\(copies.second) ("), "\(shown)")
        // Its parent is the process that connected and passed the connection on.
        #expect(shown.contains(" ← python3 ("), "\(shown)")
        plain.stop()
        #expect(plain.log.contains { $0.contains(" \(copies.second) (on a connection made by pid ") && $0.contains("signPayload") })
    }

    /// A writer reaped before its request is read is refused as gone, though the process that connected (the
    /// same executable) is still there and would be allowed.
    @Test func aWriterThatExitedBeforeItsRequestWasReadIsRefused() throws {
        let copies = try Copies()
        let release = DispatchSemaphore(value: 0)
        // The first request's question holds the connection's thread until the child that wrote the second has
        // been reaped.
        let running = try RunningAgent(confirm: { _ in release.wait(timeout: .now() + 20) == .success })
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let second = Self.request.replacingOccurrences(of: #""id":1"#, with: #""id":2"#)
        var child: Int32 = 0
        let lines = try Self.run(copies.first, Self.forking, [running.socketPath, Self.request, second]) { line in
            if line.hasPrefix("reaped ") {
                child = Int32(line.dropFirst(7)) ?? 0
                release.signal()
            }
        }
        #expect(lines.count == 3, "\(lines)")
        #expect(Self.signed(lines.dropFirst().first), "\(lines)")
        #expect(lines.last?.contains(#""id":2"#) == true && lines.last?.contains("the caller exited before its request was read") == true, "\(lines)")
        running.stop()
        #expect(child > 0)
        #expect(running.log.contains { $0.contains("pid \(child) (exited) signPayload refused: the caller exited") }, "\(running.log)")
    }

    /// A connection passed to a process of another uid (here a child that gave up root's) is not a way in: its
    /// requests are refused, though the agent accepted the connection from its own user.
    @Test(.enabled(if: geteuid() == 0, "only root can become another user")) func aRequestFromAnotherUidIsRefused() throws {
        let copies = try Copies()
        let running = try copies.agent(allowing: copies.first)
        let lines = try Self.run(copies.first, Self.otherUser, [running.socketPath, Self.request, "65534"])
        #expect(lines.first?.contains("a request from uid 65534, not this agent's user") == true, "\(lines)")
        running.stop()
        #expect(running.log.contains { $0.contains(" uid 65534 signPayload refused: a request from uid 65534") }, "\(running.log)")
    }

    /// A request of which one process wrote a part and another the rest is refused: it could be judged as either.
    @Test func aRequestWrittenByTwoProcessesIsRefused() throws {
        let copies = try Copies()
        let running = try copies.agent(allowing: copies.first)
        let lines = try Self.run(copies.first, Self.halving, [running.socketPath, Self.request])
        #expect(lines.first?.contains("the request was written by more than one process") == true, "\(lines)")
    }

    /// On a kernel that names no request's writer (before Linux 6.5), the caller would be read once, from the
    /// process that connected, and a connection passed on would keep its identity: an agent whose policy names
    /// callers refuses to start, leaving no socket behind. A policy that names none is kept (it does not tell
    /// callers apart).
    @Test func aPolicyNamingCallersIsRefusedWhereTheKernelNamesNoWriter() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let socketPath = directory.path + "/run/agent.sock"
        var options = KeystoreAgent.Options()
        options.ignoresWriterNames = true
        options.policy = PolicyWindows(directory: directory.path, policy: try AgentPolicy(json: Array("""
            {"version": 1, "rules": [{"name": "raw", "callers": [{"executable": "/usr/bin/python3"}], "kinds": ["payload"]}]}
            """.utf8)))
        #expect(throws: PolicyError.writersNotNamed) { _ = try KeystoreAgent(socketPath: socketPath, options: options) }
        #expect(!FileManager.default.fileExists(atPath: socketPath))
        #expect(PolicyError.writersNotNamed.message.contains("SO_PASSPIDFD"))

        options.policy = PolicyWindows(directory: directory.path, policy: try AgentPolicy(json: Array("""
            {"version": 1, "rules": [{"name": "raw", "kinds": ["payload"]}]}
            """.utf8)))
        let agent = try KeystoreAgent(socketPath: socketPath, options: options)
        #expect(!agent.identifiesSenders)
    }

    /// A writer the kernel did not name (pid 0: a process in a pid namespace the agent cannot see; or bytes
    /// written before the agent asked for names) is judged as the process that connected, but its uid is checked
    /// as every writer's, and it matches no rule that names callers: any process could have written its request.
    /// Such a writer cannot be made without root (a connection waiting on a passed socket is named on Linux 6.18:
    /// the kernel keeps the writer with its bytes), so the kernel's answer is handed to the connection as
    /// `UnixSocket.read(into:naming:)` gives it.
    @Test func aWriterTheKernelDidNotNameIsCheckedAndMatchesNoCallers() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let policy = try AgentPolicy(json: Array("""
            {"version": 1, "rules": [{"name": "raw", "callers": [{"executable": "\(AgentPolicySigningTests.me)"}], "kinds": ["payload"]}]}
            """.utf8))
        let running = try RunningAgent(policy: PolicyWindows(directory: directory.path, policy: policy))
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let socket = UnixSocket(fd: pair[0])
        defer { socket.close() }
        let connection = AgentConnection(agent: running.agent, socket: socket, peer: .init(pid: getpid(), uid: geteuid()))
        let line = Array(Self.request.utf8)
        let request = try AgentRequest(line: line)
        func asker(uid: UInt32) -> AgentConnection.Asker {
            var writers = RequestWriters()
            writers.add(UnixSocket.Sender(processDescriptor: nil, processDescriptorError: 0, pid: 0, uid: uid), endingAt: line.count + 1)
            return connection.caller(of: 0..<(line.count + 1), writtenBy: writers)
        }
        // Another uid: refused, though the process that connected is of this one.
        let other = geteuid() &+ 1
        guard case .refused(let why, _) = asker(uid: other) else {
            Issue.record("a writer of another uid was served")
            return
        }
        #expect(why == "a request from uid \(other), not this agent's user")
        // This uid: served as the process that connected, which the rule names, but not matched as it.
        guard case .caller(let caller, let who) = asker(uid: geteuid()) else {
            Issue.record("a writer of this uid was refused")
            return
        }
        #expect(caller.pid == getpid() && !caller.isWriterNamed && who.hasSuffix("(the kernel did not name the writer)"), "\(who)")
        let answer = String(decoding: running.agent.answer(request, from: caller).response, as: UTF8.self)
        #expect(answer.contains("no rule allows payload requests for golden from a process the kernel did not name"), "\(answer)")
        // The same process, named, is allowed: the refusal is the unnamed writer's.
        let named = AgentCaller(pid: getpid(), uid: geteuid(), withChain: false, socket: nil)
        #expect(Self.signed(String(decoding: running.agent.answer(request, from: named).response, as: UTF8.self)))
    }

    /// Connects to argv[1], sends argv[2] and prints the answer.
    static let sending = """
        import socket, sys
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.connect(sys.argv[1])
        agent.sendall(sys.argv[2].encode() + b"\\n")
        print(agent.makefile().readline().strip(), flush=True)
        """

    /// Whether this user can make a user and mount namespace (`unshare -Urm`), to mount a file over another.
    static let canMount: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-Urm", "true"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// A rule's executable is matched by the file its path names, not by the path the kernel reports: in a mount
    /// namespace of its own a process can mount another file over a listed path and run it, and
    /// `/proc/PID/exe` names the listed path. The same script, run from the listed file there, is allowed.
    @Test(.enabled(if: Self.canMount, "unshare -Urm is not allowed here"))
    func anotherFileMountedAtTheListedPathIsAnotherCaller() throws {
        let copies = try Copies()
        // Another file than the first copy (a copy of a file is another inode; the two copies are one program).
        let running = try copies.agent(allowing: copies.first)
        func answer(mounting: Bool) throws -> [String] {
            let script = (mounting ? "mount --bind \"$1\" \"$2\" && " : "") + "exec \"$2\" -c \"$3\" \"$4\" \"$5\""
            return try Self.run("/usr/bin/unshare", "", [], commandLine: ["-Urm", "sh", "-c", script, "sh", copies.second, copies.first,
                                                                    Self.sending, running.socketPath, Self.request])
        }
        let mounted = try answer(mounting: true)
        #expect(mounted.first?.contains("no rule allows payload requests for golden from \(copies.first)") == true, "\(mounted)")
        let listed = try answer(mounting: false)
        #expect(Self.signed(listed.first), "\(listed)")
    }

    /// An agent does not start with a rule naming an executable no file is at: the refusal names the field.
    @Test func aListedExecutableThatIsNotThereIsRefusedAtStart() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        var options = KeystoreAgent.Options()
        options.policy = PolicyWindows(directory: directory.path, policy: try AgentPolicy(json: Array("""
            {"version": 1, "rules": [{"name": "raw", "kinds": ["payload"],
              "callers": [{"executable": "/bin/sh"}, {"executable": "/bin/sh", "parents": ["\(directory.path)/gone"]}]}]}
            """.utf8)))
        let socketPath = directory.path + "/run/agent.sock"
        #expect(throws: PolicyError.invalid(field: "rules[0].callers[1].parents[0]", line: nil, "no file is at \(directory.path)/gone")) {
            _ = try KeystoreAgent(socketPath: socketPath, options: options)
        }
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }
}
