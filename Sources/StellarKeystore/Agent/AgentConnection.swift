#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StellarKeys

/// One client's connection to the agent, served on its own thread: request lines in, one answer line each,
/// until the client closes it. A request that is malformed gets an error and the connection goes on; one that
/// grows past the cap, is left unfinished for `Options.requestTimeout`, or ends without its newline gets an
/// error and the connection is closed, since what follows it cannot be trusted to start a request.
struct AgentConnection {
    let agent: KeystoreAgent
    let socket: UnixSocket
    let caller: AgentCaller

    init(agent: KeystoreAgent, socket: UnixSocket, peer: UnixSocket.Peer) {
        self.agent = agent
        self.socket = socket
        caller = AgentCaller(pid: peer.pid)
    }

    private func log(_ text: String) { agent.options.log("\(KeystoreAgent.timestamp()) \(caller) \(text)") }

    private func fail(_ message: String, id: [UInt8] = Array("null".utf8)) {
        _ = socket.write(AgentJSON.error(id: id, code: .invalidRequest, message: message))
        log("request refused: \(message)")
    }

    /// The answers and log lines of the requests of one read, written together: one write each, however many
    /// requests a client sent at once.
    private struct Round {
        var answers: [UInt8] = []
        var log: [String] = []
    }

    private func flush(_ round: inout Round) -> Bool {
        if !round.log.isEmpty {
            let prefix = "\(KeystoreAgent.timestamp()) \(caller) "
            agent.options.log(round.log.map { prefix + $0 }.joined(separator: "\n"))
        }
        defer { round = Round() }
        return round.answers.isEmpty || socket.write(round.answers)
    }

    func serve() {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        // When the request begun in `pending` must be complete: a client that trickles bytes cannot hold its
        // thread for longer than one that sends nothing.
        var deadline = 0.0
        while true {
            if !pending.isEmpty {
                let left = Int32(((deadline - KeystoreAgent.monotonicSeconds()) * 1000).rounded(.up))
                guard left > 0, UnixSocket.waitForInput([socket.fd], milliseconds: left)?.first == true else {
                    return fail("the request was not finished within \(agent.options.requestTimeout) s")
                }
            }
            let count = chunk.withUnsafeMutableBytes { socket.read(into: $0) } ?? 0
            guard count > 0 else {
                if !pending.isEmpty { fail("the request ended before its newline") }
                return
            }
            pending.append(contentsOf: chunk[..<count])
            var start = 0
            var round = Round()
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                let line = Array(pending[start..<newline])
                start = newline + 1
                guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                let rest = pending.count - start
                guard handle(line, bytesAfter: rest, into: &round) else {
                    _ = flush(&round)
                    return
                }
            }
            guard flush(&round) else { return }
            if start > 0 || pending.count == count {
                deadline = KeystoreAgent.monotonicSeconds() + Double(agent.options.requestTimeout)
            }
            pending.removeFirst(start)
            if pending.count > AgentProtocol.largestRequest {
                return fail("the request is longer than \(AgentProtocol.largestRequest >> 20) MiB")
            }
        }
    }

    /// Answers one line into `round`; false when the connection must close.
    private func handle(_ line: [UInt8], bytesAfter: Int, into round: inout Round) -> Bool {
        let request: AgentRequest
        do {
            request = try AgentRequest(line: line)
        } catch {
            round.answers += AgentJSON.error(id: error.id, code: .invalidRequest, message: error.message)
            round.log.append("request refused: \(error.message)")
            return true
        }
        if request.method == .addKey {
            // Its go-ahead and seed are a conversation of their own: what came before it is answered first.
            guard flush(&round) else { return false }
            return add(request, bytesAfter: bytesAfter)
        }
        let (response, entry) = agent.answer(request, from: caller)
        round.answers += response
        round.log.append(entry)
        return true
    }

    /// `addKey {name, keystore, address, ttl?}`: answered `{"send": 32}`; then exactly 32 bytes of seed, read
    /// straight into guarded memory (never into a buffer of ordinary memory, which is why the client must wait for
    /// the go-ahead); then answered with the key's address. The seed must give `address`, so that a key that
    /// arrived damaged is never held. The connection closes after it either way.
    private func add(_ request: AgentRequest, bytesAfter: Int) -> Bool {
        do {
            let name = try IdentityName(try request.requiredString("name"))
            let keystore = try request.requiredString("keystore")
            let address = try request.requiredString("address")
            let ttl = try request.seconds("ttl")
            guard bytesAfter == 0 else { throw AgentError.seedRefused("the seed was sent before the agent asked for it") }
            guard socket.write(AgentJSON.result(id: request.id, .object([("send", .integer(32))]))) else { return false }
            let seed = try SecureBytes(count: 32) { buffer throws(AgentError) in
                var filled = 0
                while filled < 32 {
                    guard UnixSocket.waitForInput([socket.fd], milliseconds: agent.options.requestTimeout * 1000)?.first == true,
                          let count = socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])), count > 0
                    else { throw AgentError.seedRefused("the connection ended before the whole seed arrived") }
                    filled += count
                }
            }
            let keyPair = try KeyPair(seed: seed)
            guard keyPair.publicKey.accountID == address else {
                throw AgentError.seedRefused("the seed is not the key of \(TerminalText.escaped(address, limit: 60))")
            }
            agent.add(Signer(name: name, keyPair: keyPair, isFromPhrase: nil), keystore: keystore, ttl: ttl)
            log("addKey \(name.rawValue) \(address) ok")
            _ = socket.write(AgentJSON.result(id: request.id, .object([("address", .string(address))])))
        } catch {
            let message = (error as? AgentRequest.Refusal)?.message ?? (error as? KeystoreError)?.message ?? "\(error)"
            fail(message, id: request.id)
        }
        return false
    }
}

/// A mutex for the agent's state (the library also builds for Apple platforms older than Synchronization's).
final class Lock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func locked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

/// Detached threads, one per connection: a blocking read holds only its own thread, and Dispatch's pool would
/// cap how many clients can wait at once.
enum Threads {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func detach(_ body: @escaping () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let started = pthread_create(&thread, &attributes, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box)
        if started != 0 {
            // No thread to spare: this connection is answered on the caller's instead of being dropped.
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP made into a byte on the agent's wake-up pipe, so that it stops between requests
/// and cleans up, rather than dying with keys in memory and its socket left behind.
enum Signals {
    nonisolated(unsafe) private static var wakeFD: Int32 = -1
    nonisolated(unsafe) private(set) static var received = false
    nonisolated(unsafe) private(set) static var installed: Bool = false
    nonisolated(unsafe) private static var caught: [Int32] = []

    static func stop(on signals: [Int32], writingTo fd: Int32) {
        wakeFD = fd
        received = false
        installed = true
        caught = signals
        for number in signals {
            signal(number) { _ in
                Signals.received = true
                var byte: UInt8 = 0
                _ = write(Signals.wakeFD, &byte, 1)
            }
        }
    }

    static func restore() {
        for number in caught { signal(number, SIG_DFL) }
        installed = false
    }
}
