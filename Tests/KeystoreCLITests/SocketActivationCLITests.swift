import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// The agent started as systemd starts it for keystore-agent.socket, by `systemd-socket-activate` (from the
/// `systemd` package): it listens, and at the first connection executes the agent in its own place with the socket
/// as descriptor 3 (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`).
@Suite(.offThePool) struct SocketActivationCLITests {
    static let activate = "/usr/bin/systemd-socket-activate"
    static let installed = FileManager.default.isExecutableFile(atPath: activate)
    static let golden = KeystoreHome.golden

    /// `systemd-socket-activate -l PATH keystore agent --foreground`, with the socket named as the unit names it;
    /// returns once the socket exists (the agent itself starts at the first connection).
    static func activated(_ agent: AgentHome, directoryMode: mode_t = 0o700) throws -> KeystoreProcess.Running {
        let directory = agent.home.runtime + "/keystore"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, directoryMode)
        let running = try KeystoreProcess(program: activate).start(
            ["-l", agent.socket, "--fdname=agent", KeystoreProcess.binary, "agent", "--foreground"])
        var info = stat()
        for _ in 0..<500 { guard lstat(agent.socket, &info) != 0 else { break }; usleep(10_000) }
        guard lstat(agent.socket, &info) == 0 else {
            let result = try ended(running)
            throw SocketActivationFailure(message: "systemd-socket-activate made no socket: \(result.stderr)")
        }
        return running
    }

    static func ended(_ running: KeystoreProcess.Running) throws -> KeystoreProcess.Result {
        kill(running.pid, SIGTERM)
        return try running.wait(timeout: 20)
    }

    /// The whole path a user takes with the socket unit: the first connection starts the agent, `login --agent`
    /// hands it a key, a sign goes through it (the signature the PIN gives too), each request is logged on standard
    /// error (the journal, under systemd), another uid is closed unanswered, `agent start` sees the socket served,
    /// and `agent stop` drops the keys and leaves the socket to its manager.
    @Test(.enabled(if: installed, "needs systemd-socket-activate (the systemd package)"))
    func anAgentStartedAtTheFirstConnectionServesAndStopsLikeAnyOther() throws {
        let agent = try AgentHome()
        let running = try Self.activated(agent)
        var stopped = false
        defer { if !stopped { _ = try? Self.ended(running) } }

        try agent.addGolden()
        var info = stat()
        #expect(lstat(agent.socket, &info) == 0 && info.st_mode & 0o7777 == 0o600, "the socket's mode was left as the umask made it")
        let through = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00ff"])
        let direct = try agent.keystore().run(["sign", "--name", Self.golden.name, "--hex", "00ff", "--pin-stdin"],
                                              stdin: Array("\(Self.golden.pin)\n".utf8))
        #expect(through.status == 0 && !through.stdout.isEmpty && through.stdout == direct.stdout, "\(through.stderr)\(direct.stderr)")

        let start = try agent.keystore().run(["agent"])
        #expect(start.status == 0 && start.stdout == "export KEYSTORE_AGENT=\(agent.socket)\n", "\(start.stderr)")
        #expect(start.stderr.contains("started by its service manager (socket activation)"), "\(start.stderr)")

        if AgentTrustCLITests.rootAndSetpriv {
            // The directories let nobody reach the socket, so that only the agent's own check stands in the way.
            for directory in [agent.home.path + "/..", agent.home.path, agent.home.runtime, agent.home.runtime + "/keystore"] {
                if stat(directory, &info) == 0 && info.st_mode & 0o001 == 0 { chmod(directory, info.st_mode & 0o7777 | 0o711) }
            }
            chmod(agent.socket, 0o666)
            let raw = try agent.listKeysRaw(as: FakeAgent.asNobody)
            #expect(raw.stdout == "closed\n", "\(raw.stdout) \(raw.stderr)")
            chmod(agent.home.runtime + "/keystore", 0o700)
            chmod(agent.socket, 0o600)
        }

        let stop = try agent.keystore().run(["agent", "stop"])
        #expect(stop.status == 0 && stop.stdout.isEmpty, "\(stop.stdout)\(stop.stderr)")
        #expect(stop.stderr.contains("its service manager still listens at \(agent.socket)"), "\(stop.stderr)")
        let result = try running.wait(timeout: 20)
        stopped = true
        #expect(result.status == 0, "\(result.stderr)")
        #expect(lstat(agent.socket, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK, "the manager's socket was removed")
        unlink(agent.socket)

        let log = result.stderr
        #expect(log.contains("agent listening at \(agent.socket) (its socket passed by the service manager)"), "\(log)")
        for entry in ["addKey \(Self.golden.name)", "signPayload", "status", "shutdown ok"] {
            #expect(log.contains(entry), "no \(entry) in the log: \(log)")
        }
        if AgentTrustCLITests.rootAndSetpriv {
            #expect(log.contains("closed 1 connection(s) at once: from uid 65534, not this agent's user"), "\(log)")
        }
    }

    /// A socket in a directory other users can enter is not one the agent would make: it ends with one line and
    /// a documented exit code, at the first connection, and accepts none.
    @Test(.enabled(if: installed, "needs systemd-socket-activate (the systemd package)"))
    func aSocketInADirectoryOthersCanEnterIsRefused() throws {
        let agent = try AgentHome()
        let running = try Self.activated(agent, directoryMode: 0o755)
        // keystore's own client refuses that directory: a raw connection starts the agent.
        let poke = try KeystoreProcess(program: "/usr/bin/python3").run(
            ["-c", """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
                try:
                    print("answered" if s.recv(1) else "closed")
                except ConnectionResetError:
                    print("closed")
                """, agent.socket], timeout: 30)
        #expect(poke.stdout == "closed\n", "\(poke.stdout)\(poke.stderr)")
        let result = try running.wait(timeout: 20)
        let line = "keystore: Refusing the socket passed by the service manager: \(agent.socket): its directory is not private to you (owner uid \(geteuid()), mode 0755).\n"
        #expect(result.status == 8, "\(result.stderr)")
        #expect(result.stderr.hasSuffix(line), "\(result.stderr)")
        unlink(agent.socket)
    }
}

/// systemd-socket-activate did not start as a test needs it to.
struct SocketActivationFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
