import Foundation
import Testing
import TestFixtures
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
@testable import StellarKeystoreAgent

/// A person at the agent's terminal, played by the test: each question is recorded, and waits for `answer` (or
/// 8 s, so that no test can hang on it).
final class Prompter: @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [AgentConfirmation] = []
    private var reply = false
    private let answered = DispatchSemaphore(value: 0)
    private let shown = DispatchSemaphore(value: 0)

    func confirm(_ request: AgentConfirmation) -> Bool {
        lock.withLock { asked.append(request) }
        shown.signal()
        _ = answered.wait(timeout: .now() + 8)
        return lock.withLock { reply }
    }

    func answer(_ yes: Bool) {
        lock.withLock { reply = yes }
        answered.signal()
    }

    var requests: [AgentConfirmation] { lock.withLock { asked } }

    /// Whether the next question was put within `seconds`.
    func waitForQuestion(seconds: Double = 5) -> Bool { shown.wait(timeout: .now() + seconds) == .success }
}

extension UnixSocket {
    /// Whether an answer (or the end) arrives within `milliseconds`, without reading it.
    func hasInput(within milliseconds: Int32) -> Bool {
        UnixSocket.waitForInput([fd], milliseconds: milliseconds)?.first == true
    }
}

/// `--confirm` as a real approval: a question pending is withdrawn when its key goes, when its client goes, and
/// when nobody answers; a yes is checked against the key once more.
@Suite(.offThePool) struct AgentConfirmationTests {
    static let address = AgentTests.address

    static func signPayload(_ id: Int, _ payload: String = "AAEC", address: String? = nil) -> String {
        let extra = address.map { #","address":"\#($0)""# } ?? ""
        return #"{"jsonrpc":"2.0","id":\#(id),"method":"signPayload","params":{"payload":"\#(payload)"\#(extra)}}"# + "\n"
    }

    /// An agent with the golden key, a prompter, and a raw connection whose signPayload is waiting for its answer.
    static func pendingRequest(ttl: Int? = nil, idle: Int? = nil) throws -> (RunningAgent, Prompter, UnixSocket) {
        let prompter = Prompter()
        let running = try RunningAgent(ttl: ttl, idle: idle, confirm: { prompter.confirm($0) })
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let socket = try running.connect()
        socket.setTimeouts(seconds: 10)
        #expect(socket.send(signPayload(1)))
        try #require(prompter.waitForQuestion())
        return (running, prompter, socket)
    }

    /// The answer arrives within `seconds` of `start`, and is a −4 that says the question was withdrawn.
    static func expectWithdrawn(_ socket: UnixSocket, since start: Date, within seconds: Double = 2,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        let answer = socket.hasInput(within: Int32(seconds * 1000)) ? socket.line() : nil
        #expect(answer?.contains(#""code":-4"#) == true && answer?.contains(#""reason":"cancelled""#) == true,
                "\(answer ?? "no answer within \(seconds) s")", sourceLocation: sourceLocation)
        #expect(Date().timeIntervalSince(start) < seconds + 0.5, sourceLocation: sourceLocation)
    }

    /// `lock` while a question is pending withdraws it at once; the yes that comes later signs nothing.
    @Test func lockWithdrawsAPendingQuestion() throws {
        let (running, prompter, socket) = try Self.pendingRequest()
        defer { prompter.answer(false) }
        let start = Date()
        #expect(try AgentClient(socketPath: running.socketPath).lock() == 1)
        Self.expectWithdrawn(socket, since: start)
        prompter.answer(true)
        #expect(!socket.hasInput(within: 300) || socket.line() == nil)
    }

    /// `removeKey` of another key leaves the question pending; of its key, withdraws it.
    @Test func removingItsKeyWithdrawsAPendingQuestion() throws {
        let other = try AgentTests.signer("other", seed: KeyPair.random().secretSeedStrKey().withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        let (running, prompter, socket) = try Self.pendingRequest()
        defer { prompter.answer(false) }
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(other, keystore: "/keys")
        #expect(try client.remove(name: other.name, keystore: "/keys") == 1)
        #expect(!socket.hasInput(within: 300), "removing another key answered the request")
        let start = Date()
        let golden = try AgentTests.signer().name
        #expect(try client.remove(name: golden, keystore: "/keys") == 1)
        Self.expectWithdrawn(socket, since: start)
    }

    /// Its key's TTL, reached while the question is pending, withdraws it.
    @Test func itsKeysTTLWithdrawsAPendingQuestion() throws {
        let (running, prompter, socket) = try Self.pendingRequest(ttl: 60)
        defer { prompter.answer(false) }
        running.clock.advance(61)
        let start = Date()
        // The agent's own loop wakes at the deadline on a real clock; with the test's clock, a listing drops it.
        _ = running.agent.heldKeys()
        Self.expectWithdrawn(socket, since: start)
    }

    /// So does its key's idle limit: waiting for a person is not use.
    @Test func itsKeysIdleLimitWithdrawsAPendingQuestion() throws {
        let (running, prompter, socket) = try Self.pendingRequest(idle: 30)
        defer { prompter.answer(false) }
        running.clock.advance(31)
        let start = Date()
        _ = running.agent.heldKeys()
        Self.expectWithdrawn(socket, since: start)
    }

    /// A client that leaves while its question is pending withdraws it: the log says so at once.
    @Test func theClientLeavingWithdrawsItsQuestion() throws {
        let (running, prompter, socket) = try Self.pendingRequest()
        defer { prompter.answer(false) }
        socket.close()
        var said = false
        for _ in 0..<30 where !said {
            usleep(100_000)
            running.agent.waitForLog()
            said = running.log.contains { $0.contains("signPayload withdrawn: the client left") }
        }
        #expect(said, "\(running.log)")
    }

    /// A request is reviewed once, before its question: one that its review refuses (a V1 preimage, which needs a
    /// consent this agent was not started to give) is refused without anyone being asked.
    @Test func aRequestItsReviewRefusesIsNeverPut() throws {
        struct Preimages: Decodable { struct Case: Decodable { let name, network, preimage: String }; let cases: [Case] }
        let v1 = try #require(try Fixtures.load(Preimages.self, "auth-preimages.json").cases.first { $0.name.hasPrefix("v1") })
        let prompter = Prompter()
        let running = try RunningAgent(confirm: { prompter.confirm($0) })
        let local = try AgentTests.signer()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(local, keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: local.name)
        let payload = AuthorizationPayload(preimage: try AuthorizationPreimage(base64: v1.preimage))
        let network = try StellarNetwork(named: v1.network)
        #expect(throws: AgentError.self) { try remote.signAuthorization(payload, on: network) }
        #expect(prompter.requests.isEmpty, "\(prompter.requests.map(\.text))")
        running.agent.waitForLog()
    }

    /// After a yes, the key is taken again: one past its TTL by then signs nothing, even though nothing dropped it
    /// while the question was pending.
    @Test func aYesForAKeyPastItsTTLSignsNothing() throws {
        let box = ClockBox()
        let running = try RunningAgent(ttl: 60, confirm: { _ in
            box.clock?.advance(61)
            return true
        })
        box.clock = running.clock
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        let socket = try running.connect()
        socket.setTimeouts(seconds: 10)
        #expect(socket.send(Self.signPayload(1)))
        #expect(socket.line()?.contains(#""reason":"no-key""#) == true)
    }
}

extension AgentConfirmationTests {
    /// Nobody answers within the agent's time: the question is withdrawn, the client gets −4 with reason
    /// "timeout", and a callback that waits with the cancellation handle is woken.
    @Test func aQuestionNobodyAnswersTimesOut() throws {
        let woken = RunningAgent.LockedLines()
        let running = try RunningAgent(confirm: { request in
            let typed = request.cancellation.waitForInput(on: -1)  // a descriptor that never becomes readable
            woken.append("\(typed) \(request.cancellation.reason ?? "standing") \(request.timeout)")
            return typed
        }, confirmationTimeout: 1)
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let socket = try running.connect()
        socket.setTimeouts(seconds: 10)
        let start = Date()
        #expect(socket.send(Self.signPayload(1)))
        let answer = socket.line()
        #expect(answer?.contains(#""code":-4"#) == true && answer?.contains(#""reason":"timeout""#) == true, "\(answer ?? "none")")
        #expect((0.9..<2.5).contains(Date().timeIntervalSince(start)))
        for _ in 0..<100 { guard woken.lines.isEmpty else { break }; usleep(10_000) }
        #expect(woken.lines == ["false nobody answered in time 1"])
        #expect(throws: AgentError.rejected(.timedOut)) {
            try AgentClient(socketPath: running.socketPath).signer(for: Self.address, name: .default).sign([1])
        }
    }

    /// Under `.publicNetwork`, transactions for testnet, futurenet and a custom passphrase sign without a
    /// question; one for the public network, a raw payload and a message are each asked about, network first.
    @Test func theConfirmationScopeOfThePublicNetwork() throws {
        let asked = RunningAgent.LockedLines()
        let running = try RunningAgent(confirm: { request in
            asked.append(request.text[0])
            return true
        }, confirmationScope: .publicNetwork)
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)
        struct Envelopes: Decodable {
            struct Entry: Decodable { let name, envelope, passphrase: String }
            let envelopes: [Entry]
        }
        let payments = try Fixtures.load(Envelopes.self, "tx-envelopes.json").envelopes.filter { $0.name.hasPrefix("payment ") }.prefix(4)
        try #require(payments.count == 4)
        for entry in payments {
            _ = try remote.signTransaction(try TransactionEnvelope(base64: entry.envelope), on: try StellarNetwork(passphrase: entry.passphrase))
        }
        #expect(asked.lines == ["Network: \(StellarNetwork.public.shown)"], "\(asked.lines)")
        _ = try remote.sign([1, 2, 3])
        _ = try remote.signMessage(Array("hello".utf8))
        let none = "Network: none (a signature of raw bytes or of a message is valid on every network)"
        #expect(asked.lines == ["Network: \(StellarNetwork.public.shown)", none, none])
        #expect(try client.call(.status, [])["confirmScope"] == .string("public"))
    }

    /// A request whose summary leaves part of it out (a payload past 256 bytes, a message past 200 characters)
    /// is approved by `yes` alone, and its question says so; one shown whole takes `y` too.
    @Test func anElidedRequestNeedsTheWordYes() throws {
        let asked = RunningAgent.LockedLines()
        let running = try RunningAgent(confirm: { request in
            asked.append("\(request.isElided) \(request.isApproval("y")) \(request.isApproval("yes")) \(request.question.contains("Type yes"))")
            return request.isApproval("y")
        })
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)
        #expect(try remote.sign(Array(repeating: 7, count: SigningSummary.mostPayloadBytes)).count == 64)
        #expect(throws: AgentError.rejected(.declined)) { try remote.sign(Array(repeating: 7, count: SigningSummary.mostPayloadBytes + 1)) }
        #expect(try remote.signMessage(Array(String(repeating: "a", count: 200).utf8)).count == 64)
        #expect(throws: AgentError.rejected(.declined)) { try remote.signMessage(Array(String(repeating: "a", count: 201).utf8)) }
        #expect(asked.lines == ["false true true false", "true false true true", "false true true false", "true false true true"])
    }

    /// The caller's chain: the process, its parents up to its session leader, each with its pid; names escaped;
    /// a process gone says so.
    @Test func theCallersProcessChain() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        // An executable whose name would clear the screen if printed raw.
        let evil = directory.path + "/sle\u{1B}[2Jep"
        try Program.copy("/bin/sleep", to: evil)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: evil)
        child.arguments = ["5"]
        try child.run()
        defer { child.terminate(); child.waitUntilExit() }
        let chain = CallerChain(from: child.processIdentifier)
        #expect(chain.processes.first?.pid == child.processIdentifier)
        #expect(chain.processes.first?.name?.hasSuffix("/sle\\x1b[2Jep") == true, "\(chain.text)")
        #expect(chain.processes.count > 1 && chain.processes[1].pid == getpid())
        #expect(chain.processes.count <= CallerChain.longest)
        #expect(!chain.text.unicodeScalars.contains { $0.value < 0x20 })
        #expect(chain.text.contains(" ← ") && chain.text.contains("(\(getpid()))"))

        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        #expect(CallerChain(from: gone.processIdentifier).text == "pid \(gone.processIdentifier) (exited)")
    }
}

final class ClockBox: @unchecked Sendable {
    var clock: AgentClock?
}
