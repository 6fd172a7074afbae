import Foundation
import Testing
import TestFixtures
import SoftwareTPM
import StellarKeystore
import StellarKeys

/// A keystore home with a private runtime directory, and the agent socket in it, for one test.
final class AgentHome {
    let home: KeystoreHome
    var socket: String { home.runtime + "/keystore/agent.sock" }
    var log: String { home.path + "/agent.log" }
    private var running: [KeystoreProcess.Running] = []

    init() throws {
        home = try KeystoreHome()
        _ = try home.keystoreWithRuntime()
        try home.addGolden()
    }

    deinit {
        for agent in running {
            kill(agent.pid, SIGKILL)
            _ = try? agent.wait(timeout: 10)
        }
    }

    /// `keystore` with this runtime directory, and `KEYSTORE_AGENT` (or a session) as given.
    func keystore(agent: String? = nil, session: String? = nil) -> KeystoreProcess {
        var process = home.keystore
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        process.environment["KEYSTORE_AGENT"] = agent
        process.environment["KEYSTORE_SESSION"] = session
        return process
    }

    /// `agent start --foreground`, once it answers on its socket.
    @discardableResult
    func startInForeground(_ extra: [String] = []) throws -> KeystoreProcess.Running {
        let agent = try keystore().start(["agent", "start", "--foreground", "--log", log] + extra)
        running.append(agent)
        for _ in 0..<500 { guard !(try AgentClient.isListening(at: socket)) else { break }; usleep(10_000) }
        try #require(try AgentClient.isListening(at: socket), "the agent did not start")
        return agent
    }

    /// Ends a foreground agent with `signal` and returns how it exited.
    func stop(_ agent: KeystoreProcess.Running, with signal: Int32 = SIGTERM) throws -> KeystoreProcess.Result {
        kill(agent.pid, signal)
        running.removeAll { $0.pid == agent.pid }
        return try agent.wait(timeout: 20)
    }

    /// `login --agent` for the golden identity.
    func addGolden(_ extra: [String] = []) throws {
        let login = try keystore().run(["login", "--agent", "--name", KeystoreHome.golden.name, "--pin-stdin"] + extra,
                                       stdin: Array("270419\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
    }

    func session() throws -> String {
        let login = try keystore().run(["login", "--session", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: Array("270419\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
        return String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count)).trimmingCharacters(in: .newlines)
    }

    var runtimeContents: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: home.runtime + "/keystore")) ?? []
    }

    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// A `listKeys` sent on a raw connection to the socket, with none of the client's checks, by the process that
    /// `prefix` runs as: stdout is "answered", or "closed" when the agent closed the connection unanswered.
    func listKeysRaw(as prefix: [String]) throws -> KeystoreProcess.Result {
        let client = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
            try:
                s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"listKeys"}\\n')
                print("answered" if s.recv(4096) else "closed")
            except (ConnectionResetError, BrokenPipeError):
                print("closed")
            """
        return try KeystoreProcess(program: "/usr/bin/python3").run(["-c", client, socket], prefix: prefix, timeout: 30)
    }
}

@Suite(.offThePool) struct AgentCLITests {
    static let golden = KeystoreHome.golden

    /// Detached by default: the export line for eval, a 0600 socket in a 0700 directory, one agent per socket,
    /// and `agent stop` leaves nothing behind.
    @Test func startDetachesPrintsTheExportLineAndStopLeavesNothing() throws {
        let agent = try AgentHome()
        let start = try agent.keystore().run(["agent"])
        #expect(start.status == 0 && start.stdout == "export KEYSTORE_AGENT=\(agent.socket)\n", "\(start.stderr)")
        let pid = try #require(start.stderr.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .newlines)) })
        var info = stat()
        #expect(lstat(agent.socket, &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_mode & S_IFMT == S_IFSOCK)
        #expect(stat(agent.home.runtime + "/keystore", &info) == 0 && info.st_mode & 0o777 == 0o700)

        // A second start finds this user's agent there and gives its export line again.
        let again = try agent.keystore().run(["agent", "start"])
        #expect(again.status == 0 && again.stdout == start.stdout, "\(again.stderr)")

        let stop = try agent.keystore(agent: agent.socket).run(["agent", "stop"])
        #expect(stop.status == 0 && stop.stdout == "unset KEYSTORE_AGENT\n", "\(stop.stderr)")
        #expect(agent.runtimeContents.isEmpty)
        // Gone, or a zombie waiting for init: either way not running.
        let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
        #expect(state == nil || state == "Z", "agent pid \(pid) is still running")
    }

    /// SIGTERM and SIGINT: exit 0, the socket removed, nothing left in the runtime directory; the log names each
    /// request with its time, method, identity, and the caller's pid and executable.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsTheAgentCleanly(_ signal: Int32) throws {
        let agent = try AgentHome()
        let running = try agent.startInForeground()
        try agent.addGolden()
        let signed = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"])
        #expect(signed.status == 0 && signed.stderr.isEmpty, "\(signed.stderr)")
        let stopped = try agent.stop(running, with: signal)
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(agent.runtimeContents.isEmpty, "\(agent.runtimeContents)")
        let lines = agent.logText.split(separator: "\n")
        let signing = try #require(lines.first { $0.contains(" signPayload ") }, "\(agent.logText)")
        #expect(signing.contains(#/^20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ pid \d+ /#))
        #expect(signing.hasSuffix("signPayload \(Self.golden.name) \(Self.golden.address) ok"))
        #expect(lines.contains { $0.contains("addKey \(Self.golden.name) \(Self.golden.address) ok") })
    }

    /// What each signing command prints through the agent is byte for byte what it prints with a session; and it
    /// was the agent that signed (its log), with nothing said on stderr.
    @Test func throughTheAgentEveryCommandPrintsWhatASessionPrints() throws {
        let agent = try AgentHome()
        try agent.startInForeground()
        try agent.addGolden()
        let token = try agent.session()
        struct Envelopes: Decodable {
            struct Entry: Decodable { let envelope, passphrase: String }
            let envelopes: [Entry]
        }
        struct Authorizations: Decodable {
            struct Case: Decodable { let name, network, preimage: String }
            struct Envelope: Decodable { let name, network, envelope: String; let expiration: UInt32 }
            let cases: [Case]
            let envelopes: [Envelope]
        }
        let transactions = try JSONDecoder().decode(Envelopes.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("tx-envelopes.json")))
        let authorizations = try JSONDecoder().decode(Authorizations.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("auth-preimages.json")))
        let name = ["--name", Self.golden.name]
        // V2 authorizations: the agent, started without --allow-v1, refuses V1 ones (issue 30).
        let tx = transactions.envelopes[2]
        let auth = try #require(authorizations.envelopes.first { $0.name == "v2" })
        let preimage = try #require(authorizations.cases.first { $0.name.hasPrefix("v2") })
        let commands: [([String], String)] = [
            (["sign", "--hex", "00112233"], ""),
            (["sign", "--json", "--format", "hex"], "raw bytes"),
            (["sign-message", "héllo"], ""),
            (["sign-message", "--base64", "AAEC/w=="], ""),
            (["sign", "--batch"], "{\"id\":1,\"hex\":\"00\"}\n{\"id\":2,\"message\":\"hi\"}\n{\"hex\":\"zz\"}\n"),
            (["sign-message", "--batch", "--format", "hex"], "{\"id\":\"a\",\"message\":\"hi\"}\n"),
            (["sign-tx", "--network-passphrase", tx.passphrase, "--json", tx.envelope], ""),
            (["sign-tx", "--network-passphrase", tx.passphrase, "--batch"],
             transactions.envelopes.prefix(6).map { "{\"envelope\":\"\($0.envelope)\"}\n" }.joined()),
            (["sign-auth", "--network", auth.network, "--expiration-ledger", "\(auth.expiration)", auth.envelope], ""),
            (["sign-auth", "--network", preimage.network, "--preimage", "--json", preimage.preimage], ""),
        ]
        for (arguments, stdin) in commands {
            let throughAgent = try agent.keystore(agent: agent.socket).run(arguments + name, stdin: Array(stdin.utf8))
            let withSession = try agent.keystore(session: token).run(arguments + name, stdin: Array(stdin.utf8))
            #expect(throughAgent.stdout == withSession.stdout && throughAgent.status == withSession.status, "\(arguments)")
            #expect(!throughAgent.stdout.isEmpty && [0, 2].contains(throughAgent.status), "\(arguments): \(throughAgent.stderr)")
            #expect(throughAgent.stderr == withSession.stderr, "\(arguments)")
        }
        for method in ["signPayload", "signMessage", "signTransaction", "signAuthEntry"] {
            #expect(agent.logText.contains(" \(method) \(Self.golden.name) \(Self.golden.address) ok"), "\(method)")
        }
    }

    /// A dead agent, or one without the key: with no session or PIN to fall back on, exit 9 in one line; with
    /// one, the signature, after a warning line for a dead agent (none for an identity the agent never had).
    @Test func aDeadOrEmptyAgentFallsBackAsADeadSessionDoes() throws {
        let agent = try AgentHome()
        let expected = try agent.keystore().run(["sign", "--name", Self.golden.name, "--hex", "00", "--pin-stdin"], stdin: Array("270419\n".utf8))
        try #require(expected.status == 0)

        let dead = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"])
        #expect(dead.status == 9 && dead.stdout.isEmpty)
        #expect(dead.stderrLines.count == 1 && dead.stderr.hasPrefix("keystore: No agent is running at \(agent.socket)."), "\(dead.stderr)")
        let withPIN = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00", "--pin-stdin"],
                                                                  stdin: Array("270419\n".utf8))
        #expect(withPIN.stdout == expected.stdout)
        #expect(withPIN.stderr == "keystore: warning: No agent is running at \(agent.socket). Using the PIN instead.\n")

        // login --agent says there is no agent before the PIN is tried: a wrong one gives 9, not 3.
        let login = try agent.keystore(agent: agent.socket).run(["login", "--agent", "--name", Self.golden.name, "--pin-stdin"],
                                                                stdin: Array("111111\n".utf8))
        #expect(login.status == 9 && login.stderr == "keystore: No agent is running at \(agent.socket).\n", "\(login.stderr)")

        try agent.startInForeground()
        let empty = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"])
        #expect(empty.status == 9 && empty.stderr.hasPrefix("keystore: The agent holds no key for \(Self.golden.name) (\(Self.golden.address))"), "\(empty.stderr)")
        let token = try agent.session()
        let withSession = try agent.keystore(agent: agent.socket, session: token).run(["sign", "--name", Self.golden.name, "--hex", "00"])
        #expect(withSession.stdout == expected.stdout)
        #expect(withSession.stderr == "", "\(withSession.stderr)")
    }

    /// `login --agent --ttl`, `agent list`, `agent remove NAME`, `agent lock`.
    @Test func listRemoveAndLock() throws {
        let agent = try AgentHome()
        try agent.startInForeground()
        try agent.addGolden(["--ttl", "1h"])
        let list = try agent.keystore(agent: agent.socket).run(["agent", "list"])
        #expect(list.status == 0 && list.stdout.hasPrefix("\(Self.golden.name)  \(Self.golden.address)  "), "\(list.stderr)")
        #expect(list.stdout.contains("59 min") || list.stdout.contains("1 h"), "\(list.stdout)")
        let json = try agent.keystore(agent: agent.socket).run(["agent", "list", "--json"])
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [[String: Any]])
        #expect(keys.count == 1 && keys[0]["address"] as? String == Self.golden.address && (keys[0]["expiresIn"] as? Int ?? 0) > 3500)

        let remove = try agent.keystore(agent: agent.socket).run(["agent", "remove", Self.golden.name])
        #expect(remove.status == 0 && remove.stderr == "keystore: removed \(Self.golden.name) from the agent\n")
        #expect(try agent.keystore(agent: agent.socket).run(["agent", "remove", Self.golden.name]).status == 9)
        try agent.addGolden()
        let lock = try agent.keystore(agent: agent.socket).run(["agent", "lock"])
        #expect(lock.status == 0 && lock.stderr == "keystore: dropped 1 key\n")
        #expect(try agent.keystore(agent: agent.socket).run(["agent", "list"]).stderr == "keystore: the agent holds no keys\n")
        #expect(try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"]).status == 9)
    }

    /// In real time: a key goes at its `login --agent --ttl`, and after the agent's `--idle` unused, dropped by the
    /// agent's own timer (`agent list` finds it gone without anything signing first).
    @Test func keysGoAtTheirTTLAndWhenIdle() throws {
        let agent = try AgentHome()
        try agent.startInForeground(["--idle", "2s"])
        try agent.addGolden(["--ttl", "1s"])
        let sign = ["sign", "--name", Self.golden.name, "--hex", "00"]
        #expect(try agent.keystore(agent: agent.socket).run(sign).status == 0)
        usleep(1_300_000)
        let late = try agent.keystore(agent: agent.socket).run(sign)
        #expect(late.status == 9 && late.stderr == "keystore: The agent holds no key for \(Self.golden.name) (\(Self.golden.address)); "
                + "add it with 'keystore login --agent --name \(Self.golden.name)'.\n", "\(late.stderr)")

        try agent.addGolden()
        #expect(try agent.keystore(agent: agent.socket).run(["agent", "list", "--json"]).stdout.contains(Self.golden.address))
        usleep(2_300_000)
        #expect(try agent.keystore(agent: agent.socket).run(["agent", "list", "--json"]).stdout == "[]\n")
        #expect(agent.logText.contains("addKey \(Self.golden.name)"))
    }

    /// `kill -9`: the next client gets one clear line (exit 9) at once, not a hang; a new agent takes over the
    /// socket the dead one left.
    @Test func afterKillNineClientsGetAClearErrorAndANewAgentTakesOver() throws {
        let agent = try AgentHome()
        let running = try agent.startInForeground()
        try agent.addGolden()
        let stopped = try agent.stop(running, with: SIGKILL)
        #expect(stopped.status == 137)
        let started = Date()
        let sign = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"], timeout: 20)
        #expect(sign.status == 9 && sign.stderr == "keystore: No agent is running at \(agent.socket).\n", "\(sign.stderr)")
        #expect(Date().timeIntervalSince(started) < 5)
        try agent.startInForeground()
        try agent.addGolden()
        #expect(try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"]).status == 0)
    }

    /// Another uid is refused by the agent itself, even when the directory and socket let it connect.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to run a client as another user"))
    func anotherUserIsRefusedEvenWhenTheSocketLetsItIn() throws {
        let agent = try AgentHome()
        try agent.startInForeground()
        try agent.addGolden()
        for directory in [agent.home.path + "/..", agent.home.runtime, agent.home.runtime + "/keystore"] {
            var info = stat()
            if stat(directory, &info) == 0 && info.st_mode & 0o001 == 0 { chmod(directory, info.st_mode & 0o7777 | 0o711) }
        }
        chmod(agent.socket, 0o666)
        // keystore as that user (a copy it can read) refuses the socket itself (its directory is not that user's) ...
        let copy = try FilesForAnotherUser([KeystoreProcess.binary])
        var asOther = agent.keystore(agent: agent.socket)
        asOther.program = copy.path(of: KeystoreProcess.binary)
        let other = try asOther.run(["agent", "list", "--socket", agent.socket], prefix: FakeAgent.asNobody)
        #expect(other.status == 8 && other.stdout.isEmpty && other.stderr.contains("Refusing the agent socket"), "\(other.stderr)")
        // ... and a client that asks anyway is closed by the agent unanswered.
        let raw = try agent.listKeysRaw(as: FakeAgent.asNobody)
        #expect(raw.stdout == "closed\n", "\(raw.stdout) \(raw.stderr)")
        // Refusals are counted and logged at most once a second, from the agent's own thread: wait for the line.
        let refused = "closed 1 connection(s) at once: from uid 65534, not this agent's user"
        for _ in 0..<40 { guard !agent.logText.contains(refused) else { break }; usleep(100_000) }
        #expect(agent.logText.contains(refused), "\(agent.logText)")
        // Still serving its own user, once its directory is private again (its own client refuses it otherwise).
        chmod(agent.home.runtime + "/keystore", 0o700)
        #expect(try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"]).status == 0)
    }

    /// The agent holds keys, so no one of its own uid may read its memory: it is not dumpable (its /proc files
    /// belong to root, which `ptrace` by the same user needs them not to) and writes no core file.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to run the agent as another user"))
    func theAgentIsNotDumpable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-agent-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chown(directory, 65534, 65534)
        let agent = try KeystoreProcess().start(["agent", "start", "--foreground", "--socket", directory + "/agent.sock"],
                                                prefix: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        defer {
            kill(agent.pid, SIGTERM)
            _ = try? agent.wait(timeout: 20)
        }
        // Another user's socket, which this process's own client would refuse: wait for the file.
        var info = stat()
        for _ in 0..<500 { guard lstat(directory + "/agent.sock", &info) != 0 else { break }; usleep(10_000) }
        #expect(stat("/proc/\(agent.pid)/status", &info) == 0)
        let status = try String(contentsOfFile: "/proc/\(agent.pid)/status", encoding: .utf8)
        #expect(status.contains("Uid:\t65534"), "\(status)")
        #expect(info.st_uid == 0, "a dumpable process's /proc files belong to its own uid")
        let limits = try String(contentsOfFile: "/proc/\(agent.pid)/limits", encoding: .utf8)
        #expect(limits.contains(#/Max core file size\s+0\s+0/#), "\(limits)")
    }

    @Test func confirmWithoutATerminalIsRefusedAtStart() throws {
        let agent = try AgentHome()
        let start = try agent.keystore().run(["agent", "start", "--confirm"], timeout: 20)
        #expect(start.status == 8 && start.stderr == "keystore: --confirm and --confirm-public need a terminal to ask on, and there is none.\n")
        #expect(agent.runtimeContents.isEmpty)
    }

    /// `--confirm` in tmux: each request is shown with its caller and summary; y signs, n is exit 14.
    @Test(.enabled(if: Tmux.isInstalled, "tmux is not installed"))
    func confirmOnTheAgentsTerminal() throws {
        let agent = try AgentHome()
        let tmux = try Tmux(running: "env XDG_RUNTIME_DIR=\(agent.home.runtime) KEYSTORE_HOME=\(agent.home.path) \(KeystoreProcess.binary) agent start --confirm",
                            columns: 150, rows: 40)
        #expect(try tmux.screen(until: "each signature waits for y here").contains("export KEYSTORE_AGENT=\(agent.socket)"))
        try agent.addGolden()

        let yes = try agent.keystore(agent: agent.socket).start(["sign-message", "--name", Self.golden.name, "pay the rent"])
        let asked = try tmux.screen(until: "Sign? [y/N]")
        // The network first, then the caller's chain (here a session leader of its own: KeystoreProcess starts each
        // in a new session), then the summary.
        let network = try #require(asked.range(of: "Network: none"), "\(asked)")
        let caller = try #require(asked.range(of: "Requested by: \(KeystoreProcess.binary) (\(yes.pid))"), "\(asked)")
        let message = try #require(asked.range(of: "message     \"pay the rent\""), "\(asked)")
        #expect(network.upperBound < caller.lowerBound && caller.upperBound < message.lowerBound)
        try tmux.type("y", "Enter")
        let signed = try yes.wait(timeout: 20)
        #expect(signed.status == 0 && signed.stdout.count == 89, "\(signed.stderr)")

        let no = try agent.keystore(agent: agent.socket).start(["sign", "--name", Self.golden.name, "--hex", "0badc0de"])
        #expect(try tmux.screen(until: "Sign? [y/N]", occurrences: 2).contains("payload     0badc0de"))
        try tmux.type("n", "Enter")
        let declined = try no.wait(timeout: 20)
        #expect(declined.status == 14 && declined.stdout.isEmpty)
        #expect(declined.stderr == "keystore: The request was declined at the agent.\n")

        _ = try agent.keystore(agent: agent.socket).run(["agent", "stop"])
        #expect(agent.runtimeContents.isEmpty)
    }

    /// A y typed before the question appeared (typed ahead, or meant for another program) is not an answer: the
    /// terminal's input is flushed once the summary is shown, and only what is typed after counts.
    @Test(.enabled(if: Tmux.isInstalled, "tmux is not installed"))
    func anAnswerTypedBeforeTheQuestionIsNotTaken() throws {
        let agent = try AgentHome()
        let tmux = try Tmux(running: "env XDG_RUNTIME_DIR=\(agent.home.runtime) KEYSTORE_HOME=\(agent.home.path) \(KeystoreProcess.binary) agent start --confirm",
                            columns: 150, rows: 40)
        _ = try tmux.screen(until: "each signature waits for y here")
        try agent.addGolden()
        try tmux.type("y", "Enter")
        usleep(300_000)
        let request = try agent.keystore(agent: agent.socket).start(["sign", "--name", Self.golden.name, "--hex", "00"])
        #expect(try tmux.screen(until: "Sign?").contains("payload     00"))
        usleep(500_000)
        try tmux.type("n", "Enter")
        let answered = try request.wait(timeout: 20)
        #expect(answered.status == 14 && answered.stdout.isEmpty, "signed on a y typed before the question: \(answered.stderr)")
        _ = try agent.keystore(agent: agent.socket).run(["agent", "stop"])
        #expect(agent.runtimeContents.isEmpty)
    }

    /// A question nobody answers is withdrawn after --confirm-timeout: the client gets exit 14 and says why, the
    /// terminal says so too, and the next question is put.
    @Test(.enabled(if: Tmux.isInstalled, "tmux is not installed"))
    func aQuestionNobodyAnswersIsWithdrawn() throws {
        let agent = try AgentHome()
        let tmux = try Tmux(running: "env XDG_RUNTIME_DIR=\(agent.home.runtime) KEYSTORE_HOME=\(agent.home.path) \(KeystoreProcess.binary) agent start --confirm --confirm-timeout 2s",
                            columns: 150, rows: 40)
        _ = try tmux.screen(until: "each signature waits for y here")
        try agent.addGolden()
        let started = Date()
        let unanswered = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00"], timeout: 20)
        #expect(unanswered.status == 14 && unanswered.stdout.isEmpty)
        #expect(unanswered.stderr == "keystore: Nobody answered the agent's question in time; nothing was signed.\n")
        #expect(Date().timeIntervalSince(started) < 6)
        #expect(try tmux.screen(until: "Withdrawn (nobody answered in time); nothing was signed.").contains("Withdrawn (nobody answered in time)"))

        let next = try agent.keystore(agent: agent.socket).start(["sign", "--name", Self.golden.name, "--hex", "01"])
        _ = try tmux.screen(until: "Sign? [y/N]", occurrences: 2)
        try tmux.type("y", "Enter")
        #expect(try next.wait(timeout: 20).status == 0)
        _ = try agent.keystore(agent: agent.socket).run(["agent", "stop"])
        #expect(agent.runtimeContents.isEmpty)
    }

    /// --confirm-timeout is bounded, and means nothing without a question to time.
    @Test func confirmTimeoutIsBounded() throws {
        let agent = try AgentHome()
        for arguments in [["--confirm", "--confirm-timeout", "0s"], ["--confirm", "--confirm-timeout", "11m"], ["--confirm-timeout", "1m"],
                          ["--confirm", "--confirm-public"]] {
            let start = try agent.keystore().run(["agent", "start"] + arguments, timeout: 20)
            #expect(start.status == 64, "\(arguments): \(start.stderr)")
        }
        #expect(agent.runtimeContents.isEmpty)
    }

    /// A client in Python with nothing but its standard library, following docs/AGENT.md: it gets the same
    /// signatures as the command line.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed"))
    func aPythonClientOfTheStandardLibrarySigns() throws {
        let agent = try AgentHome()
        try agent.startInForeground()
        try agent.addGolden()
        let payload = try agent.keystore(agent: agent.socket).run(["sign", "--name", Self.golden.name, "--hex", "00ff"])
        let message = try agent.keystore(agent: agent.socket).run(["sign-message", "--name", Self.golden.name, "hello agent"])
        let script = KeystoreHome.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Interop/agent-client.py").path
        let client = try KeystoreProcess(program: "/usr/bin/python3").run([script, agent.socket], timeout: 60)
        #expect(client.status == 0, "\(client.stderr)")
        let lines = client.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [
            "address \(Self.golden.address)",
            "signPayload \(payload.stdout.trimmingCharacters(in: .newlines))",
            "signMessage \(message.stdout.trimmingCharacters(in: .newlines))",
            "error -3 there is no method 'nope'",
            "keys \(Self.golden.name)",
        ], "\(client.stdout)")
    }
}

/// A TPM-bound identity: its PIN is checked by the TPM once, at `login --agent`; after that the agent signs
/// without the TPM at all (here, with the TPM gone).
@Suite(.offThePool, .serialized, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct AgentTPMCLITests {
    @Test func aTPMBoundIdentityAddedOnceSignsWithNoFurtherTPMUse() throws {
        let agent = try AgentHome()
        let tpm = try SoftwareTPM()
        var withTPM = agent.keystore()
        withTPM.environment["KEYSTORE_TPM_TCTI"] = tpm.tcti
        let signup = try withTPM.run(["signup", "--name", "bound", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"],
                                     stdin: Array("270419\n".utf8))
        try #require(signup.status == 0, "\(signup.stderr)")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        try agent.startInForeground()
        var process = withTPM
        process.environment["KEYSTORE_AGENT"] = agent.socket
        let login = try process.run(["login", "--agent", "--name", "bound", "--pin-stdin"], stdin: Array("270419\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
        tpm.stop()

        let key = try PublicKey(accountID: address)
        for index in 0..<20 {
            let signed = try process.run(["sign", "--name", "bound", "--hex", String(format: "%02x", index)])
            #expect(signed.status == 0, "\(signed.stderr)")
            let signature = try #require(Data(base64Encoded: signed.stdout.trimmingCharacters(in: .newlines)))
            #expect(key.isValidSignature(Array(signature), for: [UInt8(index)]))
        }
        // The TPM really is gone: opening the vault needs it.
        #expect(try process.run(["login", "--name", "bound", "--pin-stdin"], stdin: Array("270419\n".utf8)).status == 8)
    }
}
