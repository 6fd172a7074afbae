import Glibc
import StellarKeystore
import StellarKeys
import StellarText

/// One client's connection to the agent, served on its own thread: request lines in, one answer line each,
/// until the client closes it. A request that is malformed gets an error and the connection goes on; one that
/// grows past the cap, is left unfinished for `Options.requestTimeout`, or ends without its newline gets an
/// error and the connection is closed, since what follows it cannot be trusted to start a request. A connection
/// that begins no request for `requestTimeout` (after it opened, or after its last answer) is closed without a
/// word: a client that keeps one waiting makes another when it needs one.
struct AgentConnection {
    let agent: KeystoreAgent
    let socket: UnixSocket
    /// The process that connected, read when it did. Each request is judged as the process that wrote it
    /// (`caller(of:from:)`), which may be another: a connection can be passed on (`SCM_RIGHTS`), inherited, or
    /// kept across an `exec`.
    let connector: AgentCaller
    /// The process that connected, by its pidfd (`SO_PEERPIDFD`); nil where the kernel gives none.
    let connectorProcess: NamedProcess?

    init(agent: KeystoreAgent, socket: UnixSocket, peer: UnixSocket.Peer) {
        self.agent = agent
        self.socket = socket
        let withChain = !agent.identifiesSenders && agent.options.confirm != nil
        if let pidfd = socket.peerProcessDescriptor() {
            let process = NamedProcess(pid: peer.pid, pidfd: pidfd)
            connectorProcess = process
            connector = (try? AgentCaller(process, uid: peer.uid, readingParents: false, withChain: withChain, socket: socket))
                ?? AgentCaller(exited: peer.pid, uid: peer.uid, socket: socket)
        } else {
            connectorProcess = nil
            connector = AgentCaller(pid: peer.pid, uid: peer.uid, withChain: withChain, socket: socket)
        }
        // Inherited from the listening socket, unless the connection was made before the agent asked for it there
        // (a socket a service manager passed, with a connection waiting): then it names the writers from here on.
        if agent.identifiesSenders { _ = socket.identifySenders() }
    }

    /// Entries hold what clients sent (names, addresses, reasons): escaped, so that none can forge a line. `who`
    /// is escaped already.
    private func log(_ entries: [(who: String, entry: String)]) {
        guard !entries.isEmpty else { return }
        let time = KeystoreAgent.timestamp()
        agent.log(entries.map { "\(time) \($0.who) " + Self.escaped($0.entry) }.joined(separator: "\n"))
    }

    /// `TerminalText.escaped`, without its cost for the usual entry: one of printable ASCII only has nothing to
    /// escape (anything else may be a control or a character a terminal hides). Building the escaped copy scalar
    /// by scalar was a fifth of the agent's own (non-libsodium) time under load.
    private static func escaped(_ entry: String) -> String {
        entry.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } ? entry : TerminalText.escaped(entry, limit: nil)
    }

    private func fail(_ message: String, id: [UInt8] = Array("null".utf8), who: String? = nil) {
        _ = socket.write(AgentJSON.error(id: id, code: .invalidRequest, message: message))
        log([(who ?? connector.description, "request refused: \(message)")])
    }

    /// The answers and log lines of the requests of one read, written together: one write each, however many
    /// requests a client sent at once.
    private struct Round {
        var answers: [UInt8] = []
        var log: [(who: String, entry: String)] = []
    }

    private func flush(_ round: inout Round) -> Bool {
        log(round.log)
        defer { round = Round() }
        return round.answers.isEmpty || socket.write(round.answers)
    }

    func serve() {
        // One more byte than the longest request, so that one too long is seen as such without reading further.
        let buffer = ReadBuffer(limit: AgentProtocol.largestRequest + 1)
        var writers = RequestWriters()
        let timeout = Double(agent.options.requestTimeout)
        // When the next request must have begun (nothing pending) or be finished (part of it pending): a client
        // that trickles bytes cannot hold its thread longer than one that sends nothing.
        var deadline = KeystoreAgent.monotonicSeconds() + timeout
        while true {
            let left = Int32(((deadline - KeystoreAgent.monotonicSeconds()) * 1000).rounded(.up))
            guard left > 0, UnixSocket.waitForInput([socket.fd], milliseconds: left)?.first == true else {
                if buffer.count > 0 { fail("the request was not finished within \(agent.options.requestTimeout) s") }
                return
            }
            let pendingBefore = buffer.count
            var sender: UnixSocket.Sender?
            let count = (agent.identifiesSenders ? buffer.read(from: socket, naming: &sender) : buffer.read(from: socket)) ?? 0
            guard count > 0 else {
                if let pidfd = sender?.processDescriptor { close(pidfd) }
                if buffer.count > 0 { fail("the request ended before its newline") }
                return
            }
            if agent.identifiesSenders { writers.add(sender, endingAt: buffer.count) }
            var start = 0
            var round = Round()
            // What was pending before this read held no newline: the search starts at the new bytes.
            var searched = pendingBefore
            var requests = 0
            while let newline = buffer.newline(from: max(start, searched)) {
                searched = newline + 1
                let line = Array(buffer.bytes[start..<newline])
                let bytes = start..<(newline + 1)
                start = newline + 1
                guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                requests += 1
                guard handle(line, from: caller(of: bytes, writtenBy: writers), bytesAfter: buffer.count - start, into: &round) else {
                    _ = flush(&round)
                    return
                }
                // Many small requests pipelined at once: their answers go out as they add up, not all at the end.
                if round.answers.count >= 64 * 1024 { guard flush(&round) else { return } }
            }
            guard flush(&round) else { return }
            // A new deadline once a request was answered (for the next), or when a request began with this read
            // (to finish it). Blank lines are not requests: they keep no connection open.
            if requests > 0 || (pendingBefore == 0 && buffer.count > start) { deadline = KeystoreAgent.monotonicSeconds() + timeout }
            buffer.removeFirst(start)
            writers.removeFirst(start)
            if buffer.isFull { return fail("the request is longer than \(AgentProtocol.largestRequest >> 20) MiB") }
        }
    }

    /// Who asks with a request: the caller it is judged as, or why it is refused; and how the log names it.
    enum Asker {
        case caller(AgentCaller, who: String)
        case refused(String, who: String)

        var who: String {
            switch self {
            case .caller(_, let who), .refused(_, let who): who
            }
        }
    }

    /// The process that wrote the request in `bytes`, read now (`AgentCaller.init(_:…)`); without a kernel that
    /// names writers, the process that connected. Refused: a request written by more than one process (each
    /// could be judged as the other), one whose writer had exited (been reaped) before it was read, and one
    /// written by another uid (a connection passed to another user's process). A writer other than the process
    /// that connected is logged as such. Bytes the kernel names no writer of were written before the agent asked
    /// it to (`KeystoreAgent.identifiesSenders`), or by a process in a pid namespace the agent cannot see (pid 0):
    /// they are judged as the process that connected, their uid checked as every request's (the writer's, when the
    /// kernel said it), but match no rule that names callers, since any process could have written them.
    func caller(of bytes: Range<Int>, writtenBy writers: RequestWriters) -> Asker {
        guard agent.identifiesSenders else { return .caller(connector, who: connector.description) }
        let found = writers.writers(of: bytes)
        guard found.count == 1, let writer = found.first else {
            return .refused("the request was written by more than one process", who: connector.description)
        }
        switch writer {
        case .several: return .refused("the request was written by more than one process", who: connector.description)
        case .unnamed(let uid):
            // Written before the agent had the kernel name writers (a connection waiting on a socket a service
            // manager passed), or from a pid namespace this one cannot see: judged as the process that connected,
            // read now, as a writer not named.
            guard let connectorProcess else {
                return .refused("the kernel did not say which process wrote the request", who: connector.description)
            }
            return judged(connectorProcess, uid: uid ?? connector.uid ?? geteuid(), named: false)
        case .gone(let pid, _): return .refused("the caller exited before its request was read", who: "pid \(pid) (exited)")
        case .process(let process, let uid): return judged(process, uid: uid)
        }
    }

    /// `process`, which wrote a request (or, not `named`, connected), read now as its caller.
    private func judged(_ process: NamedProcess, uid: UInt32, named: Bool = true) -> Asker {
        guard uid == geteuid() else {
            return .refused("a request from uid \(uid), not this agent's user", who: "pid \(process.pid) uid \(uid)")
        }
        guard var caller = try? AgentCaller(process, uid: uid, readingParents: agent.options.policy?.policy.namesParents ?? false,
                                            withChain: agent.options.confirm != nil, socket: socket) else {
            return .refused("the caller exited before its request was read", who: "pid \(process.pid) (exited)")
        }
        guard named else {
            caller.isWriterNamed = false
            return .caller(caller, who: "\(caller) (the kernel did not name the writer)")
        }
        let isConnector = caller.pid == connector.pid && caller.executablePath == connector.executablePath
        return .caller(caller, who: isConnector ? caller.description : "\(caller) (on a connection made by \(connector))")
    }

    /// Answers one line into `round`; false when the connection must close.
    private func handle(_ line: [UInt8], from asker: Asker, bytesAfter: Int, into round: inout Round) -> Bool {
        let request: AgentRequest
        do {
            request = try AgentRequest(line: line)
        } catch {
            round.answers += AgentJSON.error(id: error.id, code: .invalidRequest, message: error.message)
            round.log.append((asker.who, "request refused: \(error.message)"))
            return true
        }
        let caller: AgentCaller, who: String
        switch asker {
        case .caller(let asking, let name): (caller, who) = (asking, name)
        case .refused(let message, let name):
            round.answers += AgentJSON.error(id: request.id, code: .invalidRequest, message: message)
            round.log.append((name, "\(request.method.rawValue) refused: \(message)"))
            return true
        }
        switch request.method {
        case .addKey:
            // Its go-ahead and seed are a conversation of their own: what came before it is answered first.
            guard flush(&round) else { return false }
            return add(request, bytesAfter: bytesAfter, who: who)
        case .shutdown:
            // Answered before the agent stops, which closes every connection.
            round.answers += AgentJSON.result(id: request.id, .object([("stopping", .boolean(true)),
                                                                       ("socketKept", .boolean(agent.isSocketActivated))]))
            round.log.append((who, "shutdown ok"))
            _ = flush(&round)
            agent.stop()
            // Open until the agent has dropped every key and hangs up every connection (or 5 s): a client that
            // waits for this one to end knows the keys are gone, even when the socket stays, a service manager's.
            _ = UnixSocket.waitForInput([], orHangUpOf: socket.fd, milliseconds: 5000)
            return false
        default:
            let (response, entry) = agent.answer(request, from: caller)
            round.answers += response
            round.log.append((who, entry))
            return true
        }
    }

    /// `addKey {name, keystore, address, ttl?}`: answered `{"send": 32}`; then exactly 32 bytes of seed, read
    /// straight into guarded memory (never into a buffer of ordinary memory, which is why the client must wait for
    /// the go-ahead); then answered with the key's address. With `token: true` or `tpmKey: true` and `pinLength`
    /// (4 to 64), the agent answers `{"send": pinLength}` and reads the PIN instead. The connection only frames
    /// this conversation: the agent opens the key (`KeystoreAgent.holdKey`). It closes after it either way.
    private func add(_ request: AgentRequest, bytesAfter: Int, who: String) -> Bool {
        do {
            let name = try IdentityName(try request.requiredString("name"))
            let keystore = try request.requiredString("keystore")
            let address = try request.requiredString("address")
            let ttl = try request.seconds("ttl")
            let isToken = request.params["token"] == StrictJSON.Value.boolean(true)
            let isTPMKey = request.params["tpmKey"] == StrictJSON.Value.boolean(true)
            guard !(isToken && isTPMKey) else { throw AgentError.seedRefused("a key is in a token or in the TPM, not both") }
            let kind: KeystoreAgent.KeyKind = isTPMKey ? .tpmKey : isToken ? .token : .seed
            let secret = kind == .seed ? "seed" : "PIN"
            let count = kind == .seed ? 32 : try request.pinLength()
            guard bytesAfter == 0 else { throw AgentError.seedRefused("the \(secret) was sent before the agent asked for it") }
            guard socket.write(AgentJSON.result(id: request.id, .object([("send", .integer(count))]))) else { return false }
            // One deadline for the whole seed or PIN, however it is trickled.
            let deadline = KeystoreAgent.monotonicSeconds() + Double(agent.options.requestTimeout)
            let received = try SecureBytes(count: count) { buffer throws(AgentError) in
                var filled = 0
                while filled < count {
                    let left = Int32(((deadline - KeystoreAgent.monotonicSeconds()) * 1000).rounded(.up))
                    guard left > 0, UnixSocket.waitForInput([socket.fd], milliseconds: left)?.first == true else {
                        throw AgentError.seedRefused("the whole \(secret) did not arrive within \(agent.options.requestTimeout) s")
                    }
                    guard let count = socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])), count > 0
                    else { throw AgentError.seedRefused("the connection ended before the whole \(secret) arrived") }
                    filled += count
                }
            }
            try agent.holdKey(name, in: keystore, address: address, kind: kind, secret: received, ttl: ttl)
            log([(who, "addKey \(name.rawValue) \(address)\(kind.logged) ok")])
            _ = socket.write(AgentJSON.result(id: request.id, .object([("address", .string(address))])))
        } catch {
            let message = (error as? AgentRequest.Refusal)?.message ?? (error as? KeystoreError)?.message ?? "\(error)"
            fail(message, id: request.id, who: who)
        }
        return false
    }
}
