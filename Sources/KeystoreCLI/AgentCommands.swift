import ArgumentParser
import Glibc
internal import CPlatform
import StellarKeystore
import StellarKeystoreAgent
import StellarKeystoreTPM
import StellarKeys
import StellarText
import StellarTransactions

/// `keystore agent …`: the signing agent (docs/AGENT.md), and the commands that ask it things.
struct Agent: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        _superCommandName: KeystoreCommand.name,
        abstract: "Run a signing agent, or ask the running one what it holds.",
        discussion: """
            The agent holds keys unlocked once with `login --agent` and signs with them for processes of your own \
            user, over a Unix socket: sign, sign-message, sign-tx and sign-auth (and their batches) use it when \
            KEYSTORE_AGENT names its socket and it holds the identity's key. See docs/AGENT.md for the protocol.
            """,
        subcommands: [AgentStart.self, AgentList.self, AgentStatus.self, AgentRemove.self, AgentLock.self, AgentStop.self],
        defaultSubcommand: AgentStart.self)
}

/// Which agent a command asks: --socket, else $KEYSTORE_AGENT, else the default path.
struct AgentSocketOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The agent's socket (default: $KEYSTORE_AGENT, else $XDG_RUNTIME_DIR/keystore/agent.sock).",
                               valueName: "path"))
    var socket: String?

    func path() throws -> String { try Self.path(socket) }
    func client() throws -> AgentClient { AgentClient(socketPath: try path()) }

    /// A relative --socket is anchored to the working directory; `$KEYSTORE_AGENT` is taken as it is, and the
    /// client refuses it unless it is absolute (the export line always is).
    static func path(_ given: String?) throws -> String {
        if let given { return try AgentClient.absolutePath(given) }
        if let path = Environment[SigningKeyOptions.agentVariable], !path.isEmpty { return path }
        return AgentClient.defaultSocketPath(environment: Environment.values)
    }

    /// The lines `eval` takes: the path quoted as one shell word.
    static func exportLine(_ path: String) -> String { "export \(SigningKeyOptions.agentVariable)=\(ShellWord.quoted(path))" }
    static let unsetLine = "unset \(SigningKeyOptions.agentVariable)"
}

struct AgentStart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        _superCommandName: "\(KeystoreCommand.name) agent",
        abstract: "Start the agent and print `export KEYSTORE_AGENT=PATH` for eval.",
        discussion: """
            Detaches unless --foreground (or --confirm or --confirm-public, which need this terminal); stops on SIGTERM, \
            SIGINT or SIGHUP, or with `agent stop`, dropping every key. The socket is yours alone (0600 in a 0700 \
            directory; other users' connections refused). Each request is logged: on standard error in the foreground, \
            else to syslog, or to --log. Started by systemd (keystore-agent.socket), it serves the socket it is handed. \
            A V1 preimage (signAuthEntry) is refused unless --allow-v1. See docs/guides/agent.md and docs/AGENT.md.
            """)

    @Option(help: ArgumentHelp("Where to listen (default: $XDG_RUNTIME_DIR/keystore/agent.sock).", valueName: "path"))
    var socket: String?

    @Flag(help: "Stay in the foreground (for systemd, tmux or a test).")
    var foreground = false

    @Option(help: ArgumentHelp("Drop each key this long after it was added, up to 24h: e.g. 90s, 15m, 8h.", valueName: "duration"),
            transform: SessionDuration.parse)
    var ttl: SessionDuration?

    @Option(help: ArgumentHelp("Drop each key after this long unused.", valueName: "duration"), transform: SessionDuration.parse)
    var idle: SessionDuration?

    @Flag(help: "Show each signing request on this terminal, with its network, caller and summary, and sign only on y.")
    var confirm = false

    @Flag(help: "As --confirm, for requests that could be valid on the public network only: raw payloads and messages too.")
    var confirmPublic = false

    @Option(help: ArgumentHelp("Withdraw a question nobody answered after this long, 1s to 10m (default 2m).", valueName: "duration"),
            transform: SessionDuration.parse)
    var confirmTimeout: SessionDuration?

    @Option(help: ArgumentHelp("Append the request log to this file (mode 0600).", valueName: "path"))
    var log: String?

    @Flag(name: .customLong("allow-v1"), help: "Sign V1 authorization preimages (signAuthEntry), whose signatures bind no address.")
    var allowV1 = false

    @Option(help: ArgumentHelp("Sign only what this policy's rules allow, and refuse the rest (docs/AGENT.md, Policies).", valueName: "path"))
    var policy: String?

    // The detached agent's own: log to syslog.
    @Flag(help: .private)
    var syslog = false

    func path() throws -> String {
        try socket.map(AgentClient.absolutePath) ?? AgentClient.defaultSocketPath(environment: Environment.values)
    }

    func validate() throws {
        if log != nil && syslog { throw ValidationError("Give --log or --syslog, not both.") }
        if confirm && confirmPublic { throw ValidationError("Give --confirm or --confirm-public, not both.") }
        if let confirmTimeout {
            guard confirm || confirmPublic else { throw ValidationError("--confirm-timeout needs --confirm or --confirm-public.") }
            guard (KeystoreAgent.shortestConfirmationTimeout...KeystoreAgent.longestConfirmationTimeout).contains(confirmTimeout.seconds) else {
                throw ValidationError("--confirm-timeout must be from 1s to 10m.")
            }
        }
    }

    func run() throws {
        let asks = confirm || confirmPublic
        // Served here whatever --foreground says: the service manager that passed it waits on this process.
        let inherited = try InheritedSocket.passedToThisProcess(expectedPath: socket.map(AgentClient.absolutePath))
        if !foreground && !asks && inherited == nil { return try detach() }
        // A log reader that went away (a closed terminal, a pipe) must fail a write, not end the agent.
        signal(SIGPIPE, SIG_IGN)
        let terminal = asks ? AgentTerminal() : nil
        if asks && terminal == nil { throw AgentCommandError.noTerminal }
        let logger = try AgentLog(path: log, syslog: syslog)
        var options = KeystoreAgent.Options(ttl: ttl?.seconds, idle: idle?.seconds, log: { logger.write($0) })
        if let terminal { options.confirm = { terminal.confirm($0) } }
        options.confirmationScope = confirmPublic ? .publicNetwork : .everyRequest
        if let confirmTimeout { options.confirmationTimeout = confirmTimeout.seconds }
        if allowV1 { options.allowing = .notAddressBound }
        if let policy {
            // Read once, now: an agent does not change what it signs while it runs. Its windows beside the vaults,
            // checked usable before the agent listens.
            let windows = PolicyWindows(directory: try VaultStore.defaultDirectory(environment: Environment.values),
                                        policy: try AgentPolicy(contentsOf: policy))
            _ = try windows.windows()
            options.policy = windows
        }
        // The TPM that P-256 keys handed to the agent are opened in: $KEYSTORE_TPM_TCTI's, as for every command.
        options.tpm = TPM(environment: Environment.values, allowingOpenLockout: false)
        let agent = try inherited.map { try KeystoreAgent(inheriting: $0, options: options) }
            ?? KeystoreAgent(socketPath: try path(), options: options)
        if !syslog {
            let path = agent.socketPath
            Console.print(AgentSocketOptions.exportLine(path))
            let asking = policy != nil ? (asks ? "; under its policy, asking here only where a rule says ask" : "; under its policy")
                : confirmPublic ? "; each signature for the public network (or of raw bytes or a message) waits for y here"
                : confirm ? "; each signature waits for y here" : ""
            let passed = agent.isSocketActivated ? " (its socket passed by the service manager)" : ""
            Console.note("agent listening at \(TerminalText.escaped(path, limit: nil))\(passed), pid \(getpid())\(asking)")
        }
        agent.run(stoppingOnSignals: true)
    }

    /// Starts this same command in the foreground as a new session (no terminal, standard streams on
    /// /dev/null, logging to syslog or --log), waits until it answers on its socket, and prints the export line.
    private func detach() throws {
        let path = try path()
        // The agent's own check, here: a client's refusal of the directory would say that nothing was sent.
        try KeystoreAgent.prepareSocketDirectory(for: path)
        // Checked here too, so that a policy refused is said on this terminal, not in the detached agent's log.
        if let policy, let refusal = try AgentPolicy(contentsOf: policy).refusalAtStart(namingWriters: KeystoreAgent.kernelNamesWriters) {
            throw refusal
        }
        if try AgentClient.isListening(at: path) {
            // A running agent cannot say which policy it was given: starting "another" with one must not pass for it.
            if policy != nil { throw AgentCommandError.runningWithoutThisPolicy(path) }
            return try reuse(at: path)
        }
        var arguments = ["agent", "start", "--foreground", "--socket", path]
        if let ttl { arguments += ["--ttl", "\(ttl.seconds)s"] }
        if let idle { arguments += ["--idle", "\(idle.seconds)s"] }
        if allowV1 { arguments.append("--allow-v1") }
        arguments += try (log.map(AgentClient.absolutePath)).map { ["--log", $0] } ?? ["--syslog"]
        arguments += try (policy.map(AgentClient.absolutePath)).map { ["--policy", $0] } ?? []
        let pid = try Spawn.detached(arguments: arguments)
        // Up to 5 s for it to listen; an agent that failed to start exits, and says why in its log.
        for _ in 0..<500 {
            if try AgentClient.isListening(at: path) {
                Console.print(AgentSocketOptions.exportLine(path))
                Console.note("agent started, pid \(pid)")
                return
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { throw AgentCommandError.didNotStart(path) }
            usleep(10_000)
        }
        kill(pid, SIGTERM)
        throw AgentCommandError.didNotStart(path)
    }

    /// An agent of this user already listens at `path` (the client checked whose it is): its export line again,
    /// so that a first run without eval can be mended, unless it holds keys longer than this command asks.
    private func reuse(at path: String) throws {
        let running = try AgentClient(socketPath: path).status()
        guard running.ttl == ttl?.seconds, running.idle == idle?.seconds, running.allowsV1 == allowV1 else {
            throw AgentCommandError.runningWithOtherLimits(path, ttl: running.ttl, idle: running.idle, allowsV1: running.allowsV1)
        }
        Console.print(AgentSocketOptions.exportLine(path))
        let by = running.isSocketActivated ? ", started by its service manager (socket activation)" : ""
        Console.note("an agent is already running at \(TerminalText.escaped(path, limit: nil)), pid \(running.pid)\(by)")
    }
}

struct AgentStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        _superCommandName: "\(KeystoreCommand.name) agent",
        abstract: "Show the running agent: its pid, keys and limits, and what each policy rule has spent in its window.")

    @OptionGroup var agent: AgentSocketOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let status = try agent.client().status()
        if json {
            struct Window: Encodable { let rule, asset: String; let window: Int; let perWindow, spent: String; let ask: Bool }
            struct Shown: Encodable {
                let pid, keys: Int
                let ttl, idle: Int?
                let confirm, allowV1, socketActivated: Bool
                let policy: [Window]?
            }
            try Console.printJSON(Shown(pid: status.pid, keys: status.keys, ttl: status.ttl, idle: status.idle, confirm: status.confirms,
                                        allowV1: status.allowsV1, socketActivated: status.isSocketActivated,
                                        policy: status.policyWindows?.map {
                                            Window(rule: $0.rule, asset: $0.asset, window: $0.window, perWindow: $0.perWindow, spent: $0.spent, ask: $0.asks)
                                        }))
            return
        }
        Console.print("pid \(status.pid), \(status.keys) key(s), ttl \(status.ttl.map { "\($0)s" } ?? "none"), idle \(status.idle.map { "\($0)s" } ?? "none")"
            + (status.confirms ? ", asks before signing" : "") + (status.allowsV1 ? ", signs V1 authorizations" : ""))
        guard let windows = status.policyWindows else { return Console.print("no policy") }
        if windows.isEmpty { Console.print("policy: no rule caps a window") }
        for window in windows {
            Console.print("rule \(TerminalText.escaped(window.rule)): \(TerminalText.escaped(window.spent)) of \(TerminalText.escaped(window.perWindow)) "
                + "\(TerminalText.escaped(window.asset)) spent in the last \(AgentPolicy.duration(window.window))" + (window.asks ? " (then it asks)" : ""))
        }
    }
}

struct AgentList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        _superCommandName: "\(KeystoreCommand.name) agent",
        abstract: "List the keys the agent holds: name, address, and the time each has left.")

    @OptionGroup var agent: AgentSocketOptions

    @Flag(help: "Print one JSON array.")
    var json = false

    func run() throws {
        let keys = try agent.client().keys()
        if json {
            struct Key: Encodable { let name, keystore, address: String; let expiresIn, idleExpiresIn: Int? }
            try Console.printJSON(keys.map { Key(name: $0.name, keystore: $0.keystore, address: $0.address,
                                                 expiresIn: $0.expiresIn, idleExpiresIn: $0.idleExpiresIn) })
            return
        }
        if keys.isEmpty { Console.note("the agent holds no keys") }
        for key in keys {
            let left = [key.expiresIn.map { "\(SessionDuration(seconds: max(1, $0))) left" },
                        key.idleExpiresIn.map { "\(SessionDuration(seconds: max(1, $0))) if unused" }].compactMap { $0 }
            // Names and keystores as every summary quotes them: a plain word as is, anything else quoted.
            Console.print("\(SigningSummary.quotedIfNeeded(key.name))  \(TerminalText.escaped(key.address, limit: 56))  \(left.isEmpty ? "until the agent stops" : left.joined(separator: ", "))  \(SigningSummary.quotedIfNeeded(key.keystore))")
        }
    }
}

struct AgentRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        _superCommandName: "\(KeystoreCommand.name) agent",
        abstract: "Drop one identity's key from the agent.")

    @OptionGroup var agent: AgentSocketOptions
    @OptionGroup var keystore: HomeOptions

    @Argument(help: "The identity.")
    var name: String

    func run() throws {
        let name = try IdentityName(name)
        let removed = try keystore.keystore().removeFromAgent(name, client: agent.client())
        guard removed > 0 else { throw AgentError.keyNotHeld(name.rawValue) }
        Console.note("removed \(name.rawValue) from the agent")
    }
}

struct AgentLock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        _superCommandName: "\(KeystoreCommand.name) agent",
        abstract: "Drop every key the agent holds; it keeps running.")

    @OptionGroup var agent: AgentSocketOptions

    func run() throws {
        let removed = try agent.client().lock()
        Console.note("dropped \(removed) key\(removed == 1 ? "" : "s")")
    }
}

struct AgentStop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        _superCommandName: "\(KeystoreCommand.name) agent",
        abstract: "Stop the agent: its keys are dropped and its socket removed (unless systemd passed it).",
        discussion: "Asks the agent over its socket (after checking that it is yours), and waits up to 5 s for it to go. An agent started by systemd (socket activation) drops its keys and ends; systemd keeps its socket and starts it again at the next connection.")

    @OptionGroup var agent: AgentSocketOptions

    func run() throws {
        // Asked over the protocol, never by a signal to a pid an answer gave.
        let client = try agent.client()
        switch try client.shutdown() {
        case .removed:
            // For eval "$(keystore agent stop)", as logout does for a session.
            Console.print(AgentSocketOptions.unsetLine)
        case .keptByServiceManager:
            // The socket still answers, so KEYSTORE_AGENT stays as it is.
            Console.note("""
                the agent stopped and dropped its keys; its service manager still listens at \
                \(TerminalText.escaped(client.socketPath, limit: nil)) and starts it again at the next connection; \
                to end that, stop the socket unit (systemctl --user stop keystore-agent.socket)
                """)
        }
    }
}

enum AgentCommandError: CommandLineError {
    case didNotStart(String)
    case noTerminal
    case runningWithOtherLimits(String, ttl: Int?, idle: Int?, allowsV1: Bool)
    case unsafeLog(String)
    case runningWithoutThisPolicy(String)

    var message: String {
        switch self {
        case .didNotStart(let path): "The agent did not start listening at \(TerminalText.escaped(path)); see its log (syslog, or --log)."
        case .unsafeLog(let path):
            "The log \(TerminalText.escaped(path, limit: nil)) is not a regular file of yours alone (mode 0600); nothing was written."
        case .runningWithOtherLimits(let path, let ttl, let idle, let allowsV1):
            "An agent is already running at \(TerminalText.escaped(path, limit: nil)) with other limits (--ttl \(ttl.map { "\($0)s" } ?? "none"), "
                + "--idle \(idle.map { "\($0)s" } ?? "none")\(allowsV1 ? ", --allow-v1" : "")); stop it first with agent stop."
        case .noTerminal: "--confirm and --confirm-public need a terminal to ask on, and there is none."
        case .runningWithoutThisPolicy(let path):
            "An agent is already running at \(TerminalText.escaped(path, limit: nil)); stop it first with agent stop to start one with --policy."
        }
    }

    var exitStatus: ExitStatus { .system }
}
