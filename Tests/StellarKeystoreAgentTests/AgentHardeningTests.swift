import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreAgent
import TestFixtures

/// What a client trusts before it sends a byte, and what an agent gives a connection (issue 28, items 1, 2, 5, 6).
@Suite(.offThePool) struct AgentHardeningTests {
    static let address = AgentTests.address

    // MARK: A client trusts only a socket of its own user

    /// A socket whose directory others can enter is refused before any request, and nothing reaches it.
    @Test func aClientRefusesADirectoryOthersCanEnter() throws {
        let running = try RunningAgent()
        let directory = running.directory.path + "/run"
        chmod(directory, 0o755)
        defer { chmod(directory, 0o700) }
        let client = AgentClient(socketPath: running.socketPath)
        #expect(throws: AgentError.untrustedSocket(running.socketPath, .directoryNotPrivate(owner: geteuid(), mode: 0o755))) {
            try client.add(try AgentTests.signer(), keystore: "/keys")
        }
        #expect(throws: AgentError.untrustedSocket(running.socketPath, .directoryNotPrivate(owner: geteuid(), mode: 0o755))) {
            try AgentClient.isListening(at: running.socketPath)
        }
        #expect(running.agent.heldKeys().isEmpty)
        running.agent.waitForLog()
        #expect(running.log.isEmpty, "the agent was sent something: \(running.log)")
    }

    /// A directory reached through a symlink is refused, even one that points to the user's own private directory.
    @Test func aClientRefusesASymlinkedDirectory() throws {
        let running = try RunningAgent()
        let link = running.directory.path + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: running.directory.path + "/run")
        let path = link + "/agent.sock"
        #expect(throws: AgentError.untrustedSocket(path, .directoryIsSymlink)) { try AgentClient(socketPath: path).status() }
        running.agent.waitForLog()
        #expect(running.log.isEmpty)
    }

    /// A socket file of another owner, in the user's own private directory, is refused.
    @Test(.enabled(if: geteuid() == 0, "needs root to give the socket to another user"))
    func aClientRefusesASocketOfAnotherOwner() throws {
        let running = try RunningAgent()
        chown(running.socketPath, 65534, 65534)
        #expect(throws: AgentError.untrustedSocket(running.socketPath, .socketNotOwned(owner: 65534))) {
            try AgentClient(socketPath: running.socketPath).keys()
        }
        running.agent.waitForLog()
        #expect(running.log.isEmpty)
    }

    /// A relative path means a different socket in every directory: the client takes only absolute ones, and
    /// `absolutePath` anchors a relative one to the working directory.
    @Test func onlyAbsoluteSocketPathsAreUsed() throws {
        #expect(throws: AgentError.socketPathNotAbsolute("run/agent.sock")) { try AgentClient(socketPath: "run/agent.sock").status() }
        let here = FileManager.default.currentDirectoryPath
        #expect(try AgentClient.absolutePath("run/agent.sock") == here + "/run/agent.sock")
        #expect(try AgentClient.absolutePath("/a/b.sock") == "/a/b.sock")
        #expect(throws: AgentError.socketPathTooLong("")) { try AgentClient.absolutePath("") }
    }

    // MARK: Stopping

    /// `shutdown` stops the agent over the protocol: no signal, no pid taken from an answer.
    @Test func shutdownStopsTheAgentWithoutASignal() throws {
        let running = try RunningAgent()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        try client.shutdown()
        #expect(running.done.wait(timeout: .now() + 5) == .success)
        #expect(!FileManager.default.fileExists(atPath: running.socketPath))
        #expect(running.agent.heldKeys().isEmpty)
    }

    /// The pid a client reports is the kernel's (`SO_PEERCRED`), never a number from the answer.
    @Test func theStatusPIDIsTheKernels() throws {
        let running = try RunningAgent()
        #expect(try AgentClient(socketPath: running.socketPath).status().pid == getpid())
    }

    // MARK: What a connection gets

    /// A connection that sends nothing at all is closed after the request timeout (1 s here), as one that
    /// stops halfway is.
    @Test func aSilentConnectionIsClosed() throws {
        let running = try RunningAgent()
        let silent = try running.connect()
        silent.setTimeouts(seconds: 4)
        let started = Date()
        var byte: UInt8 = 0
        let count = withUnsafeMutableBytes(of: &byte) { silent.read(into: $0) }
        #expect(count == 0, "the silent connection was not closed")
        #expect(Date().timeIntervalSince(started) < 3)
    }

    /// Beyond `maximumConnections`, a new connection is closed at once; those within it are served.
    @Test func beyondTheCapANewConnectionIsClosedAtOnce() throws {
        let running = try RunningAgent()
        let held = try (0..<KeystoreAgent.Options().maximumConnections).map { _ in try running.connect() }
        // Each is accepted (and counted) by the agent's loop in turn: wait until all are.
        for _ in 0..<200 { guard running.agent.connectionCount < held.count else { break }; usleep(5_000) }
        #expect(running.agent.connectionCount == held.count)
        let extra = try running.connect()
        extra.setTimeouts(seconds: 4)
        var byte: UInt8 = 0
        #expect(withUnsafeMutableBytes(of: &byte) { extra.read(into: $0) } == 0, "the connection over the cap was kept")
        #expect(held[0].send(#"{"jsonrpc":"2.0","id":1,"method":"status"}"# + "\n"))
        #expect(held[0].line()?.contains(#""result""#) == true)
    }

    /// Idle means "not used to sign": asking for the address or the list of keys does not keep a key alive.
    @Test func addressAndListDoNotCountAsUse() throws {
        let running = try RunningAgent(idle: 10)
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        running.clock.advance(6)
        _ = try client.signer(for: Self.address, name: .default)
        #expect(try client.keys().count == 1)
        running.clock.advance(5)
        #expect(try client.keys().isEmpty)
    }

    /// A name a client sends is escaped in the log: a newline in it cannot forge a log line.
    @Test func aNameCannotForgeALogLine() throws {
        let running = try RunningAgent()
        let socket = try running.connect()
        let forged = #"x\n2099-01-01T00:00:00Z pid 1 /usr/bin/sudo addKey root GA ok"#
        #expect(socket.send(#"{"jsonrpc":"2.0","id":1,"method":"removeKey","params":{"name":"\#(forged)"}}"# + "\n"))
        _ = socket.line()
        running.agent.waitForLog()  // written on the agent's log thread, a moment after the answer
        let lines = running.log.joined(separator: "\n").split(separator: "\n")
        #expect(lines.contains { $0.contains(#"removeKey x\x0a2099-01-01T00:00:00Z"#) }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("2099-01-01") })
    }

    /// DEL, a C1 control (CSI, U+009B) and ESC are escaped in the log too, and text without any is logged as sent.
    @Test func everyControlCharacterIsEscapedInTheLog() throws {
        let running = try RunningAgent()
        let socket = try running.connect()
        for (index, name) in [#"a\u007fb"#, #"c\u009b2Jd"#, #"e\u001b[2Jf"#, "plain é ✓"].enumerated() {
            #expect(socket.send(#"{"jsonrpc":"2.0","id":\#(index),"method":"removeKey","params":{"name":"\#(name)"}}"# + "\n"))
            _ = socket.line()
        }
        running.agent.waitForLog()
        let log = running.log.joined(separator: "\n")
        for expected in [#"removeKey a\x7fb"#, #"removeKey c\xc2\x9b2Jd"#, #"removeKey e\x1b[2Jf"#, "removeKey plain é ✓"] {
            #expect(log.contains(expected), "\(expected) in \(log)")
        }
        #expect(!log.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) })
    }

    /// A seed sent before the agent asked for it is refused, and no copy of it is left in this process's ordinary
    /// memory once the connection is closed: the read buffers are zeroed.
    @Test func aSeedSentEarlyLeavesNoCopyBehind() throws {
        let running = try RunningAgent()
        let add = #"{"jsonrpc":"2.0","id":1,"method":"addKey","params":{"name":"golden","keystore":"/k","address":"\#(Self.address)"}}"# + "\n"
        // The request and a random seed, built in guarded memory, so that the only ordinary copy could be the agent's.
        let wire = SecureBytes(count: add.utf8.count + 32) { buffer in
            buffer.copyBytes(from: Array(add.utf8))
            Sodium.fillRandom(UnsafeMutableRawBufferPointer(rebasing: buffer[add.utf8.count...]))
        }
        let early = try running.connect()
        #expect(early.write(wire))
        #expect(early.line()?.contains("the seed was sent before the agent asked for it") == true)
        #expect(early.line() == nil)
        // The agent's thread is done with the connection once it has closed it; give it a moment to return.
        for _ in 0..<100 { guard running.agent.connectionCount > 0 else { break }; usleep(10_000) }
        // The wire bytes themselves are guarded memory, read-only once filled: the scan leaves them out.
        let copies = try wire.withUnsafeBytes { all in
            let seed = UnsafeRawBufferPointer(rebasing: all[add.utf8.count...])
            return try WritableMemory.scan { region in
                WritableMemory.memmem(region.baseAddress, region.count, seed.baseAddress, seed.count) == nil ? [] : [region.count]
            }
        }
        #expect(copies.isEmpty, "the early seed is still in \(copies.count) region(s) of ordinary memory")
    }
}

extension AgentHardeningTests {
    /// A key dropped while its confirmation is pending (by `lock`, here) withdraws the question: the yes that
    /// follows signs nothing.
    @Test func aKeyDroppedDuringItsConfirmationSignsNothing() throws {
        let agentBox = AgentBox()
        let running = try RunningAgent(confirm: { _ in
            agentBox.agent?.lockAll()
            return true
        })
        agentBox.agent = running.agent
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)
        #expect(throws: AgentError.rejected(.keyDropped)) { try remote.sign([1, 2, 3]) }
    }

    /// A log that blocks (a terminal stopped with Ctrl-S, a pipe nobody reads) holds up no client and no expiry.
    @Test func aLogThatBlocksHoldsUpNothing() throws {
        let gate = DispatchSemaphore(value: 0)
        defer { for _ in 0..<1000 { gate.signal() } }
        let clock = AgentClock()
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let agent = try KeystoreAgent(socketPath: directory.path + "/run/agent.sock", options: .init(
            ttl: 60, log: { _ in gate.wait() }, now: { clock.now }, requestTimeout: 1))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { agent.run(); done.signal() }
        defer { agent.stop(); done.wait() }
        let client = AgentClient(socketPath: agent.socketPath)
        try client.add(try AgentTests.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)
        for byte in 0..<20 { #expect(try remote.sign([UInt8(byte)]).count == 64) }
        clock.advance(61)
        #expect(try client.keys().isEmpty)
    }

    /// Blank lines are not requests: they do not keep a connection that begins none.
    @Test func blankLinesDoNotKeepAConnection() throws {
        let running = try RunningAgent()
        let socket = try running.connect()
        socket.setTimeouts(seconds: 5)
        let started = Date()
        for _ in 0..<8 {
            guard socket.send("\n") else { break }
            usleep(400_000)
        }
        var byte: UInt8 = 0
        #expect(withUnsafeMutableBytes(of: &byte) { socket.read(into: $0) } ?? 0 == 0)
        #expect(Date().timeIntervalSince(started) < 2.5, "blank lines kept the connection for \(Date().timeIntervalSince(started)) s")
    }

    /// The seed must arrive within the timeout of the go-ahead, however it is trickled.
    @Test func aTrickledSeedTimesOutFromTheGoAhead() throws {
        let running = try RunningAgent()
        let socket = try running.connect()
        let add = #"{"jsonrpc":"2.0","id":1,"method":"addKey","params":{"name":"golden","keystore":"/k","address":"\#(Self.address)"}}"#
        #expect(socket.send(add + "\n"))
        #expect(socket.line() == #"{"jsonrpc":"2.0","id":1,"result":{"send":32}}"#)
        let started = Date()
        for _ in 0..<8 {
            guard socket.write([7, 7, 7, 7]) else { break }
            usleep(400_000)
        }
        #expect(socket.line()?.contains("the whole seed did not arrive within 1 s") == true)
        #expect(Date().timeIntervalSince(started) < 2.5)
    }
}

/// Lets a confirmation callback reach the agent it is given to.
final class AgentBox: @unchecked Sendable {
    var agent: KeystoreAgent?
}
