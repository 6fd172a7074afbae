import Glibc
import StellarKeys
import StellarTransactions
import Synchronization
import StellarText

/// A signing agent: keys unlocked once, held in this process's guarded memory, and used over a Unix socket by
/// processes of the same user (docs/AGENT.md). The command line runs one with `keystore agent`; an app could
/// embed one the same way:
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
        /// Asked before each signature, with the caller and the summary; false refuses it (SEP-43 code −4).
        /// Calls are one at a time.
        public var confirm: (@Sendable (AgentConfirmation) -> Bool)?
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

        public init(ttl: Int? = nil, idle: Int? = nil, confirm: (@Sendable (AgentConfirmation) -> Bool)? = nil,
                    log: @escaping @Sendable (String) -> Void = { _ in }, now: @escaping @Sendable () -> Double = KeystoreAgent.monotonicSeconds,
                    requestTimeout: Int32 = 10, maximumConnections: Int = 64) {
            self.ttl = ttl
            self.idle = idle
            self.confirm = confirm
            self.log = log
            self.now = now
            self.requestTimeout = requestTimeout
            self.maximumConnections = maximumConnections
        }
    }

    public let socketPath: String
    public let options: Options
    private let listener: UnixSocket
    private let wakeRead: Int32, wakeWrite: Int32
    /// A descriptor kept open to be given up when the process has no other: then a waiting connection can be
    /// accepted and closed, instead of staying in the queue and waking the loop again at once.
    private var spareDescriptor: Int32
    private let state = Mutex(State())
    private let confirming = Mutex(())
    private let logQueue: LogQueue
    /// Connections closed at once since the last line that said so, by reason: said at most once a second, so
    /// that a flood of connections cannot flood the log. Touched only by the accept loop.
    private var refusals: [String: Int] = [:]
    private var refusalsLogged = 0.0

    private struct State {
        var keys: [HeldKey] = []
        var connections: [ObjectIdentifier: UnixSocket] = [:]
        var stopped = false

        /// Dropping the last reference to a `KeyPair` frees its guarded memory, which zeroes it.
        mutating func dropExpired(_ now: Double, idle: Int?) {
            keys.removeAll { key in key.deadline(idle: idle).map { now >= $0 } ?? false }
        }
    }

    struct HeldKey {
        let name: IdentityName
        let keystore: String
        let keyPair: KeyPair
        /// The `G…` address, encoded once: every request looks keys up by it.
        let address: String
        let expiresAt: Double?
        var lastUsed: Double

        var signer: Signer { Signer(name: name, keyPair: keyPair, isFromPhrase: nil) }

        /// When it goes unless used again: the earlier of its TTL and `idle` seconds after its last use.
        func idleDeadline(_ idle: Int?) -> Double? { idle.map { lastUsed + Double($0) } }
        func deadline(idle: Int?) -> Double? { [expiresAt, idleDeadline(idle)].compactMap { $0 }.min() }
    }

    /// Listens at `socketPath`, in a directory made private first (0700, the user's own, as for sessions); the
    /// socket is mode 0600. A live agent there is `AgentError.socketInUse`; a socket left by a dead one is replaced.
    public init(socketPath: String, options: Options = Options()) throws {
        self.socketPath = socketPath
        self.options = options
        _ = try UnixSocket.checkedAddress(socketPath)
        logQueue = LogQueue(options.log)
        let directory = socketPath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty { try SessionStore.preparePrivateDirectory(directory) }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw AgentError.system("pipe", errno) }
        for fd in pipeEnds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        (wakeRead, wakeWrite) = (pipeEnds[0], pipeEnds[1])
        spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        do {
            var info = stat()
            if lstat(socketPath, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFSOCK else { throw AgentError.notASocket(socketPath) }
                if try UnixSocket.connect(to: socketPath) != nil { throw AgentError.socketInUse(socketPath) }
                unlink(socketPath)
            }
            listener = try UnixSocket.listen(at: socketPath)
        } catch {
            close(wakeRead)
            close(wakeWrite)
            close(spareDescriptor)
            throw error
        }
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
        close(spareDescriptor)
    }

    public static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    // MARK: Keys

    /// Holds `signer`'s key, for at most `ttl` seconds as well as the agent's own limit; a key it holds already
    /// (same address) is replaced, with the new limits.
    public func add(_ signer: Signer, keystore: String, ttl: Int? = nil) {
        let now = options.now()
        let limit = [ttl, options.ttl].compactMap { $0 }.min()
        state.withLock { state in
            state.keys.removeAll { $0.keyPair.publicKey == signer.publicKey }
            state.keys.append(HeldKey(name: signer.name, keystore: keystore, keyPair: signer.keyPair, address: signer.address,
                                expiresAt: limit.map { now + Double($0) }, lastUsed: now))
        }
        wake()
    }

    /// What `listKeys` reports of one key.
    public struct KeyInfo: Sendable, Equatable {
        public let name: String
        public let keystore: String
        public let address: String
        /// Seconds left before the TTL, and before the idle limit; nil where there is none.
        public let expiresIn: Int?
        public let idleExpiresIn: Int?
    }

    public func heldKeys() -> [KeyInfo] {
        let now = options.now()
        return state.withLock { state in
            state.dropExpired(now, idle: options.idle)
            return state.keys.map { key in
                KeyInfo(name: key.name.rawValue, keystore: key.keystore, address: key.address,
                        expiresIn: key.expiresAt.map { Int(($0 - now).rounded(.up)) },
                        idleExpiresIn: key.idleDeadline(options.idle).map { Int(($0 - now).rounded(.up)) })
            }
        }
    }

    /// Drops every key; returns how many there were.
    @discardableResult
    public func lockAll() -> Int {
        state.withLock { state in
            defer { state.keys.removeAll() }
            return state.keys.count
        }
    }

    /// Drops the keys matching `address`, or `name` (in `keystore`, when given); returns how many.
    func remove(address: String?, name: String?, keystore: String?) -> Int {
        state.withLock { state in
            let before = state.keys.count
            state.keys.removeAll { key in
                if let address { return key.address == address }
                return key.name.rawValue == name && (keystore == nil || key.keystore == keystore)
            }
            return before - state.keys.count
        }
    }

    /// Drops the keys whose time is up, and says when the next one is due to go, so that the accept loop wakes
    /// for it.
    private func expireKeys() -> Double? {
        let now = options.now()
        return state.withLock { state in
            state.dropExpired(now, idle: options.idle)
            return state.keys.compactMap { $0.deadline(idle: options.idle) }.min()
        }
    }

    /// The key a request names (by `address`), or the only one held; marked used when it is to sign (`idle` is
    /// time unused for signing: asking for an address does not keep a key).
    private func key(for address: String?, signing: Bool) throws(AgentError) -> HeldKey {
        let now = options.now()
        return try state.withLock { (state) throws(AgentError) -> HeldKey in
            state.dropExpired(now, idle: options.idle)
            let index: Int
            if let address {
                guard let found = state.keys.firstIndex(where: { $0.address == address }) else {
                    throw AgentError.keyNotHeld(address)
                }
                index = found
            } else {
                guard state.keys.count == 1 else {
                    throw state.keys.isEmpty ? AgentError.noKeys : AgentError.severalKeys(state.keys.count)
                }
                index = 0
            }
            if signing { state.keys[index].lastUsed = now }
            return state.keys[index]
        }
    }

    /// How many connections are being served.
    var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: Running

    /// Serves until `stop()` (or, with `stoppingOnSignals`, SIGTERM, SIGINT or SIGHUP). Then every key is
    /// dropped, open connections are closed, and the socket file is removed.
    public func run(stoppingOnSignals: Bool = false) {
        if stoppingOnSignals { Signals.stop(on: [SIGTERM, SIGINT, SIGHUP], writingTo: wakeWrite) }
        while true {
            let now = options.now()
            let timeout = expireKeys().map { Int32(min(max(($0 - now) * 1000, 0), 3_600_000).rounded(.up)) } ?? -1
            guard let ready = UnixSocket.waitForInput([listener.fd, wakeRead], milliseconds: timeout) else { break }
            if ready[1] {
                var byte: UInt8 = 0
                while read(wakeRead, &byte, 1) == 1 {}
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

    /// Makes `run` return; safe from any thread.
    public func stop() {
        state.withLock { $0.stopped = true }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func shutDown() {
        logRefusals(now: .infinity)
        logQueue.drain(seconds: 2)
        unlink(socketPath)
        listener.close()
        state.withLock { state in
            state.keys.removeAll()
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

    // MARK: Answering

    /// The answer to one request line (its newline included), and the log line for it. `addKey` is answered by
    /// the connection itself, since its seed follows the request.
    package func answer(_ request: AgentRequest, from peer: AgentCaller) -> (response: [UInt8], log: String) {
        let code: AgentProtocol.ErrorCode, message: String, reason: String?
        do {
            let (result, identity) = try result(for: request, from: peer)
            return (AgentJSON.result(id: request.id, result), "\(request.method.rawValue) \(identity) ok")
        } catch let refusal as AgentRequest.Refusal {
            (code, message, reason) = (.invalidRequest, refusal.message, nil)
        } catch let error as AgentError {
            (code, message, reason) = (error.code, error.message, error.reason)
        } catch {
            (code, message, reason) = (.invalidRequest, (error as? KeystoreError)?.message ?? "\(error)", nil)
        }
        return (AgentJSON.error(id: request.id, code: code, message: message, reason: reason),
                "\(request.method.rawValue) refused: \(message)")
    }

    private func result(for request: AgentRequest, from peer: AgentCaller) throws -> (AgentJSON, String) {
        func named(_ key: HeldKey) -> String { "\(key.name.rawValue) \(key.address)" }
        func signed(_ key: HeldKey, _ members: [(String, AgentJSON)]) -> (AgentJSON, String) {
            (.object(members + [("signerAddress", .string(key.address))]), named(key))
        }
        switch request.method {
        case .getAddress:
            let key = try key(for: try request.string("address"), signing: false)
            return (.object([("address", .string(key.address))]), named(key))
        case .signPayload:
            let payload = try request.base64("payload") ?? { throw AgentRequest.Refusal(id: request.id, message: "'payload' is missing") }()
            let key = try approved(try request.string("address"), by: peer) { key in
                ["Sign \(payload.count) raw bytes as \(key.address) (\(key.name.rawValue)):", "  payload (hex): \(Self.hexPreview(payload))"]
            }
            return signed(key, [("signature", .string(Base64.string(key.signer.sign(payload))))])
        case .signMessage:
            let text = try request.string("message")
            let base64 = try request.base64("messageBase64")
            guard (text == nil) != (base64 == nil) else {
                throw AgentRequest.Refusal(id: request.id, message: "give exactly one of 'message' and 'messageBase64'")
            }
            let message = text.map { Array($0.utf8) } ?? base64 ?? []
            let shown = text.map { "  message: \(TerminalText.escaped($0, limit: 200))" } ?? "  message (hex): \(Self.hexPreview(message))"
            let key = try approved(try request.string("address"), by: peer) { key in
                ["Sign a SEP-53 message as \(key.address) (\(key.name.rawValue)):", shown]
            }
            return signed(key, [("signedMessage", .string(Base64.string(key.signer.signMessage(message))))])
        case .signTransaction:
            let xdr = try request.requiredString("xdr"), passphrase = try request.requiredString("networkPassphrase")
            let envelope = try TransactionEnvelope(base64: xdr)
            let network = try StellarNetwork(passphrase: passphrase)
            let key = try approved(try request.string("address"), by: peer) { key in
                TransactionSummary(envelope, on: network, signingAs: (key.name.rawValue, key.keyPair.publicKey)).lines
            }
            let result = try key.signer.signTransaction(envelope, on: network)
            return signed(key, [("signedTxXdr", .string(result.base64))])
        case .signAuthEntry:
            let authEntry = try request.requiredString("authEntry"), passphrase = try request.requiredString("networkPassphrase")
            let preimage = try AuthorizationPreimage(base64: authEntry)
            let network = try StellarNetwork(passphrase: passphrase)
            try preimage.check(on: network)
            let key = try approved(try request.string("address"), by: peer) { key in
                preimage.lines(on: network, signingAs: (key.name.rawValue, key.keyPair.publicKey))
            }
            let signature = try key.signer.signAuthorization(preimage: preimage, on: network)
            return signed(key, [("signedAuthEntry", .string(Base64.string(signature)))])
        case .listKeys:
            let listed = heldKeys().map { key -> AgentJSON in
                .object([("name", .string(key.name)), ("keystore", .string(key.keystore)), ("address", .string(key.address)),
                         ("expiresIn", key.expiresIn.map(AgentJSON.integer) ?? .null),
                         ("idleExpiresIn", key.idleExpiresIn.map(AgentJSON.integer) ?? .null)])
            }
            return (.object([("keys", .array(listed))]), "")
        case .status:
            return (.object([("pid", .integer(Int(getpid()))), ("socket", .string(socketPath)), ("keys", .integer(heldKeys().count)),
                             ("ttl", options.ttl.map(AgentJSON.integer) ?? .null), ("idle", options.idle.map(AgentJSON.integer) ?? .null),
                             ("confirm", .boolean(options.confirm != nil))]), "")
        case .lock:
            return (.object([("removed", .integer(lockAll()))]), "")
        case .removeKey:
            let address = try request.string("address"), name = try request.string("name")
            guard (address == nil) != (name == nil) else {
                throw AgentRequest.Refusal(id: request.id, message: "give exactly one of 'address' and 'name'")
            }
            let removed = remove(address: address, name: name, keystore: try request.string("keystore"))
            return (.object([("removed", .integer(removed))]), address ?? name ?? "")
        case .addKey, .shutdown:
            throw AgentRequest.Refusal(id: request.id, message: "\(request.method.rawValue) is answered by the connection")
        }
    }

    /// Asks the `confirm` callback, one request at a time; a "no" is SEP-43's −4.
    /// The key that signs a request, once the `confirm` callback (if any) said yes to what `lines` show of it.
    /// Callbacks are asked one at a time; a no is SEP-43's −4. The key is taken again after the yes: one dropped
    /// meanwhile (`lock`, `removeKey`, its TTL) signs nothing, and no copy of it waits through the question.
    private func approved(_ address: String?, by caller: AgentCaller, showing lines: (HeldKey) -> [String]) throws -> HeldKey {
        guard let confirm = options.confirm else { return try key(for: address, signing: true) }
        let (shown, held) = try { () throws(AgentError) -> ([String], String) in
            let key = try key(for: address, signing: false)
            return (lines(key), key.address)
        }()
        let yes = confirming.withLock { _ in confirm(AgentConfirmation(caller: caller.description, lines: shown)) }
        guard yes else { throw AgentError.rejected }
        return try key(for: held, signing: true)
    }

    /// Up to 64 bytes as hex, then how many more: enough to recognise a payload, never a wall of text.
    static func hexPreview(_ bytes: [UInt8]) -> String {
        bytes.count <= 64 ? Hex.string(bytes) : Hex.string(Array(bytes.prefix(64))) + "… (\(bytes.count - 64) bytes more)"
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

/// What `--confirm` shows before a signature: who asks, and what would be signed.
public struct AgentConfirmation: Sendable {
    /// The calling process: its pid and executable, as the kernel reports them.
    public let caller: String
    /// The summary, as `sign-tx` and `sign-auth` show theirs.
    public let lines: [String]
}

/// The process at the other end of a connection: its pid from `SO_PEERCRED`, and `/proc/PID/exe` read when it
/// connected (a pid alone could be reused by the time a person reads the log).
package struct AgentCaller: CustomStringConvertible {
    let pid: Int32
    let executable: String

    package init(pid: Int32) {
        self.pid = pid
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        executable = count > 0
            ? TerminalText.escaped(String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self), limit: nil)
            : "(executable unknown)"
    }

    package var description: String { "pid \(pid) \(executable)" }
}
