import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import Synchronization
import StellarText

/// A signing agent: keys unlocked once, held in this process's guarded memory, and used over a Unix socket by
/// processes of the same user (docs/AGENT.md). The command-line tool runs one; an app could
/// embed one the same way, with this library (its own product; the client, `AgentClient`, is StellarKeystore's):
///
/// ```swift
/// let agent = try KeystoreAgent(socketPath: path, options: .init(log: { print($0) }))
/// try agent.add(signer, ttl: 3600)
/// agent.run()      // until `stop()`, or SIGTERM, SIGINT, SIGHUP with `stoppingOnSignals`
/// ```
///
/// Each connection has its own thread, so a slow or silent client holds up only itself; beyond
/// `maximumConnections` at once, or when no thread or descriptor can be had, a new connection is closed at once,
/// never served by the thread that accepts the others and expires keys. A connection from another uid is closed
/// before a byte of it is read (`SO_PEERCRED`), whatever the socket's mode. Keys are never written anywhere; they
/// are dropped (their memory zeroed and freed) at their TTL, after `idle` unused, on `lock`, and when the agent
/// stops.
public final class KeystoreAgent: @unchecked Sendable {
    public struct Options: Sendable {
        /// The longest any key is held, in seconds (nil: until dropped otherwise).
        public var ttl: Int?
        /// How long a key is held unused, in seconds.
        public var idle: Int?
        /// Asked before each signature (those `confirmationScope` covers), with the caller and the summary; false
        /// refuses it (SEP-43 code −4). Calls are one at a time, each on a thread of the agent's own; a call should
        /// end when its question is withdrawn (`AgentConfirmation.cancellation`).
        public var confirm: (@Sendable (AgentConfirmation) -> Bool)?
        /// Which signing requests `confirm` is asked about.
        public var confirmationScope: ConfirmationScope
        /// Seconds a question waits for its answer before it is withdrawn, within
        /// `shortestConfirmationTimeout...longestConfirmationTimeout` (a value outside is taken as the nearer end).
        public var confirmationTimeout: Int
        /// The log: one line per request, several at once (joined by newlines) for the requests of one read, and
        /// once a second a line per reason for the connections closed at once. Called on a thread of the agent's
        /// own, one call at a time: it may block without holding up a client (lines wait, and past a limit are
        /// dropped and counted).
        public var log: @Sendable (String) -> Void
        /// Seconds on a clock that only moves forward.
        public var now: @Sendable () -> Double
        /// Seconds a client may take to finish a request it has begun (or to send a seed it was asked for), and
        /// to begin one on a connection that is open and has been answered.
        public var requestTimeout: Int32
        /// Connections served at once; one more is closed as soon as it is accepted.
        public var maximumConnections: Int
        /// The risks of authorization signatures the agent accepts for every caller; by default none, so that a
        /// V1 preimage (`signAuthEntry`), which binds no address, is refused.
        public var allowing: AuthorizationRisks
        /// The TPM that P-256 keys handed to the agent live in (`addKey` with `tpmKey`); nil: none is taken.
        public var tpm: TPMSealer?
        /// The policy every signing request is decided by, with the windows its rules spend from (docs/AGENT.md,
        /// "Policies"); nil: none, and every request of the user's is signed (or asked about, with `confirm`).
        /// With a policy, `confirm` is asked only where a rule's limit says `ask`: what a rule allows is signed
        /// without a question, what none allows is refused without one.
        package var policy: PolicyWindows?
        /// Tests: serve as on a kernel that names no request's writer (before Linux 6.5's `SO_PASSPIDFD`), whatever
        /// this one does. Not for a user to set: it only takes a capability away.
        package var ignoresWriterNames = false

        public init(ttl: Int? = nil, idle: Int? = nil, confirm: (@Sendable (AgentConfirmation) -> Bool)? = nil,
                    confirmationScope: ConfirmationScope = .everyRequest, confirmationTimeout: Int = 120,
                    log: @escaping @Sendable (String) -> Void = { _ in }, now: @escaping @Sendable () -> Double = KeystoreAgent.monotonicSeconds,
                    requestTimeout: Int32 = 10, maximumConnections: Int = 64, allowing: AuthorizationRisks = []) {
            self.allowing = allowing
            self.ttl = ttl
            self.idle = idle
            self.confirm = confirm
            self.confirmationScope = confirmationScope
            self.confirmationTimeout = confirmationTimeout
            self.log = log
            self.now = now
            self.requestTimeout = requestTimeout
            self.maximumConnections = maximumConnections
        }
    }

    public let socketPath: String
    public let options: Options
    /// Whether the socket is one a service manager passed (`init(inheriting:options:)`), which outlives the agent.
    public let isSocketActivated: Bool
    /// Whether the kernel names the process that wrote each request (Linux 6.5's `SO_PASSPIDFD`), which is then
    /// the caller a request is judged as; otherwise the process that connected is, as it was when it connected.
    let identifiesSenders: Bool
    private let listener: UnixSocket
    private let wakePipe: WakePipe
    /// A descriptor kept open to be given up when the process has no other: then a waiting connection can be
    /// accepted and closed, instead of staying in the queue and waking the loop again at once.
    private var spareDescriptor: Int32
    let state = Mutex(State())
    let confirming = Mutex(())
    private let logQueue: LogQueue
    /// Connections closed at once since the last line that said so, by reason: said at most once a second, so
    /// that a flood of connections cannot flood the log. Touched only by the accept loop.
    private var refusals: [String: Int] = [:]
    private var refusalsLogged = 0.0

    struct State {
        var keys: [HeldKey] = []
        var connections: [ObjectIdentifier: UnixSocket] = [:]
        var stopped = false
        /// The questions pending (or waiting for the terminal), each about one key.
        var questions: [ObjectIdentifier: AgentConfirmation.Cancellation] = [:]

        /// Dropping the last reference to a `KeyPair` frees its guarded memory, which zeroes it.
        mutating func dropExpired(_ now: Double, idle: Int?) {
            let before = keys.count
            keys.removeAll { key in key.deadline(idle: idle).map { now >= $0 } ?? false }
            if keys.count < before { withdrawQuestionsWithoutKeys() }
        }

        /// Withdraws each pending question whose key is no longer held: called after every drop, so that no
        /// question outlives its key.
        func withdrawQuestionsWithoutKeys() {
            for question in questions.values where !keys.contains(where: { $0.address == question.address }) {
                question.withdraw(.keyDropped)
            }
        }
    }

    /// Makes the directory of `socketPath` ready for an agent to listen in: created (mode 0700) when it does not
    /// exist, and refused (`AgentError.socketDirectoryRefused`) unless it is a real directory of this user's that
    /// no one else can enter, the directory every client requires before it sends anything.
    public static func prepareSocketDirectory(for socketPath: String) throws {
        let directory = socketPath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        guard !directory.isEmpty else { return }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw AtomicFile.ioError("create", directory) }
        switch try UnixSocket.directoryTrust(of: socketPath) {
        case .privateToMe: return
        case .absent: throw AtomicFile.ioError("open", directory, code: ENOENT)
        case .distrusted(let why): throw AgentError.socketDirectoryRefused(directory, why)
        }
    }

    /// Listens at `socketPath`, in a directory made private first (0700, the user's own, as for sessions); the
    /// socket is mode 0600. A live agent there is `AgentError.socketInUse`; a socket left by a dead one is replaced.
    public convenience init(socketPath: String, options: Options = Options()) throws {
        _ = try UnixSocket.checkedAddress(socketPath)
        try Self.prepareSocketDirectory(for: socketPath)
        let wakePipe = try WakePipe(for: "pipe")
        let listener: UnixSocket
        do {
            var info = stat()
            if lstat(socketPath, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFSOCK else { throw AgentError.notASocket(socketPath) }
                if try UnixSocket.connect(to: socketPath) != nil { throw AgentError.socketInUse(socketPath) }
                unlink(socketPath)
            }
            listener = try UnixSocket.listen(at: socketPath)
        } catch {
            wakePipe.close()
            throw error
        }
        try self.init(socketPath: socketPath, listener: listener, wakePipe: wakePipe, isSocketActivated: false, options: options)
    }

    /// Serves the socket the service manager listens on and passed to this process, checked as one the agent made
    /// (`InheritedSocket.passedToThisProcess`). The manager keeps listening after the agent stops, and starts an
    /// agent again at the next connection: the socket file is the manager's, and is left in place.
    public convenience init(inheriting socket: InheritedSocket, options: Options = Options()) throws {
        let wakePipe = try WakePipe(for: "pipe")
        try self.init(socketPath: socket.path, listener: socket.socket, wakePipe: wakePipe, isSocketActivated: true, options: options)
    }

    private init(socketPath: String, listener: UnixSocket, wakePipe: WakePipe, isSocketActivated: Bool, options: Options) throws {
        self.socketPath = socketPath
        self.options = options
        self.listener = listener
        self.wakePipe = wakePipe
        self.isSocketActivated = isSocketActivated
        let logQueue = LogQueue(options.log)
        self.logQueue = logQueue
        // A windows file found to have lost what the agent recorded (removed or edited by a process of the user's)
        // is said in the agent's log, where its person looks.
        options.policy?.logging { logQueue.append("\(KeystoreAgent.timestamp()) \($0)") }
        spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        // On the listening socket, so that every connection has it from its first byte, written before it was
        // accepted too.
        identifiesSenders = !options.ignoresWriterNames && listener.identifySenders()
        // A rule that names callers where the kernel names no writer would be kept only by the process that
        // connected: a connection passed to another process (or kept across an exec) would go on speaking as it.
        if let refusal = options.policy?.policy.refusalAtStart(namingWriters: identifiesSenders) {
            listener.close()
            if !isSocketActivated { unlink(socketPath) }
            throw refusal
        }
        if !identifiesSenders {
            log("\(Self.timestamp()) this kernel does not name the process that writes each request (SO_PASSPIDFD, Linux 6.5): "
                + "each request is judged as the process that connected, read when it connected")
        }
    }

    /// Whether this kernel names the process that writes each request (`identifiesSenders`), asked of a socket
    /// made for the purpose: for `agent start` to refuse a policy on its terminal before it detaches.
    package static var kernelNamesWriters: Bool {
        guard let probe = try? UnixSocket.stream() else { return false }
        defer { probe.close() }
        return probe.identifySenders()
    }

    deinit {
        wakePipe.close()
        close(spareDescriptor)
    }

    public static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// How many connections are being served.
    var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: Running

    /// Serves until `stop()` (or, with `stoppingOnSignals`, SIGTERM, SIGINT or SIGHUP). Then every key is
    /// dropped, open connections are closed, and the socket file is removed (unless a service manager passed it).
    public func run(stoppingOnSignals: Bool = false) {
        if stoppingOnSignals { Signals.stop(on: [SIGTERM, SIGINT, SIGHUP], writingTo: wakePipe.writeEnd) }
        while true {
            let now = options.now()
            let timeout = expireKeys().map { Int32(min(max(($0 - now) * 1000, 0), 3_600_000).rounded(.up)) } ?? -1
            guard let ready = UnixSocket.waitForInput([listener.fd, wakePipe.readEnd], milliseconds: timeout) else { break }
            if ready[1] {
                wakePipe.drain()
                if state.withLock({ $0.stopped }) || Signals.received { break }
            }
            if ready[0] { acceptWaiting() }
        }
        shutDown()
    }

    /// Accepts every connection waiting. Out of descriptors, the spare one is given up to accept a waiting
    /// connection and close it, until none waits: the loop must not wake again and again for connections it
    /// cannot take.
    private func acceptWaiting() {
        var refusedForDescriptors = 0
        loop: while true {
            switch listener.accept() {
            case .connection(let connection): accepted(connection)
            case .none: break loop
            case .failed: continue
            case .noMemory:
                // Nothing to accept with until the system has memory again: wait a little, not in a loop.
                usleep(50_000)
                break loop
            case .outOfDescriptors:
                guard spareDescriptor >= 0 else {
                    // Not even the spare: the system as a whole is out. Wait a little before trying again.
                    usleep(50_000)
                    spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    break loop
                }
                // Linux says EMFILE before it looks at the queue: only the accept with a descriptor free says
                // whether a connection waits.
                close(spareDescriptor)
                let waiting = listener.accept()
                if case .connection(let connection) = waiting {
                    connection.close()
                    refusedForDescriptors += 1
                }
                spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
                if case .none = waiting { break loop }
            }
        }
        if refusedForDescriptors > 0 { refusals["no file descriptor left", default: 0] += refusedForDescriptors }
        logRefusals(now: options.now())
    }

    /// One line per reason for the connections closed at once, at most once a second (and when the agent stops).
    private func logRefusals(now: Double) {
        guard !refusals.isEmpty, now - refusalsLogged >= 1 else { return }
        refusalsLogged = now
        let lines = refusals.sorted { $0.key < $1.key }.map { "\(Self.timestamp()) closed \($0.value) connection(s) at once: \($0.key)" }
        refusals.removeAll()
        log(lines.joined(separator: "\n"))
    }

    /// A line (or several, joined by newlines) for the program's log, which is written on a thread of its own.
    func log(_ entry: String) { logQueue.append(entry) }

    /// Waits (up to 2 s) until every line logged so far has been handed to the program's log.
    func waitForLog() { logQueue.drain(seconds: 2) }

    /// `body` (a question at the terminal) with no log line written meanwhile; they are written after it.
    func holdingLog(_ body: () -> Bool) -> Bool { logQueue.holding(body) }

    /// Makes `run` return; safe from any thread.
    public func stop() {
        state.withLock { $0.stopped = true }
        wake()
    }

    func wake() { wakePipe.signal() }

    private func shutDown() {
        logRefusals(now: .infinity)
        logQueue.drain(seconds: 2)
        if !isSocketActivated { unlink(socketPath) }
        listener.close()
        state.withLock { state in
            state.keys.removeAll()
            state.withdrawQuestionsWithoutKeys()
            for connection in state.connections.values { connection.hangUp() }
        }
        if Signals.installed { Signals.restore() }
    }

    private func accepted(_ connection: UnixSocket) {
        guard let peer = connection.peer(), peer.uid == geteuid() else {
            let who = connection.peer().map { "uid \($0.uid)" } ?? "an unknown peer"
            refusals["from \(who), not this agent's user", default: 0] += 1
            return
        }
        // A client that stops reading cannot hold its thread for longer than this either.
        connection.setTimeouts(seconds: Int(options.requestTimeout))
        let id = ObjectIdentifier(connection)
        let admitted = state.withLock { state in
            guard state.connections.count < options.maximumConnections else { return false }
            state.connections[id] = connection
            return true
        }
        guard admitted else {
            refusals["\(options.maximumConnections) are open already", default: 0] += 1
            return
        }
        let started = Threads.detach { [self] in
            AgentConnection(agent: self, socket: connection, peer: peer).serve()
            state.withLock { _ = $0.connections.removeValue(forKey: id) }
        }
        if !started {
            state.withLock { _ = $0.connections.removeValue(forKey: id) }
            refusals["no thread to serve it", default: 0] += 1
        }
    }

    /// UTC, to the second, as ISO 8601.
    static func timestamp() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
