import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
@testable import StellarKeystoreAgent
import TestFixtures

/// An agent started with a policy: it signs what a rule allows, counts it in a window kept beside the vaults, and
/// answers the rest with SEP-43's −4, the reason naming the rule and the limit.
@Suite(.offThePool) struct AgentPolicySigningTests {
    /// This test process's executable, as the agent reads it for the caller.
    static let me: String = {
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink("/proc/self/exe", &buffer, 4096)
        return String(decoding: buffer[..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    struct Envelope: Decodable { let name, envelope, passphrase: String }
    struct File: Decodable { let envelopes: [Envelope] }
    /// Payments of 1, 13 and 25 XLM (and a few stroops) on testnet from the fixture signer (fixtures/tx-envelopes.json),
    /// valid for ten minutes from now (a windowed rule sets expiresWithin).
    static let payments = try! Fixtures.load(File.self, "tx-envelopes.json").envelopes.filter {
        ["payment 0 (testnet)", "payment 12 (testnet)", "payment 24 (testnet)"].contains($0.name)
    }.map { Envelope(name: $0.name, envelope: Fixtures.expiring($0.envelope, at: UInt64(time(nil)) + 600), passphrase: $0.passphrase) }

    static func policy(_ limits: String, executable: String = me) throws -> AgentPolicy {
        try AgentPolicy(json: Array("""
            {"version": 1, "rules": [
              {"name": "payments", "identities": ["golden"], "callers": [{"executable": "\(executable)"}], "networks": ["testnet"],
               "kinds": ["transaction"], "operations": ["payment"], "limits": [\(limits)], "expiresWithin": "1h"}
            ]}
            """.utf8))
    }

    static func signTransaction(_ socket: UnixSocket, _ envelope: Envelope, id: Int) -> String? {
        _ = socket.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"signTransaction","params":{"xdr":"\#(envelope.envelope)","networkPassphrase":"\#(envelope.passphrase)"}}"# + "\n")
        return socket.line()
    }

    /// The native amount a payment moves, its fee included.
    static func moved(_ envelope: Envelope) throws -> Int64 {
        try #require(Outflow(of: try TransactionEnvelope(base64: envelope.envelope)).amounts["native"])
    }

    @Test func aCapHoldsAcrossARestartAndARefusalSaysWhy() throws {
        #expect(Self.payments.count == 3)
        let first = try Self.moved(Self.payments[0]), second = try Self.moved(Self.payments[1])
        let cap = AgentPolicy.units(first + second)
        let keystore = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: keystore.path, withIntermediateDirectories: true)
        let policy = try Self.policy(#"{"asset": "native", "perWindow": "\#(cap)", "window": "24h"}"#)
        var running: RunningAgent? = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: running!.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        var socket = try running!.connect()
        #expect(Self.signTransaction(socket, Self.payments[0], id: 1)?.contains("\"signedTxXdr\"") == true)
        // Not a transaction: no rule allows it.
        _ = socket.send(#"{"jsonrpc":"2.0","id":2,"method":"signPayload","params":{"payload":"AA=="}}"# + "\n")
        let payload = socket.line() ?? ""
        #expect(payload.contains(#""code":-4"#) && payload.contains("no rule allows payload requests for golden") && payload.contains(#""reason":"policy""#))
        running!.stop()
        running = nil

        // Another agent on the same keystore (the first one gone as a killed one would be): the window is on disk.
        running = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: running!.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        socket = try running!.connect()
        let third = Self.signTransaction(socket, Self.payments[2], id: 3) ?? ""
        #expect(third.contains(#""code":-4"#))
        #expect(third.contains("rule payments: over \(cap) XLM per 24h: \(AgentPolicy.units(first)) spent, this one \(AgentPolicy.units(try Self.moved(Self.payments[2])))"))
        // What fits is still signed: the last of the window.
        #expect(Self.signTransaction(socket, Self.payments[1], id: 4)?.contains("\"signedTxXdr\"") == true)
        #expect(Self.signTransaction(socket, Self.payments[0], id: 5)?.contains(#""code":-4"#) == true)
        running!.stop()
        #expect(running!.log.contains { $0.contains("signTransaction refused: The agent's policy refused it: rule payments: over") })
    }

    @Test func twentyClientsRacingForTheLastOfAWindowGetExactlyWhatFits() throws {
        let payment = Self.payments[0]
        let cap = AgentPolicy.units(try Self.moved(payment) * 7)
        let keystore = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: keystore.path, withIntermediateDirectories: true)
        let policy = try Self.policy(#"{"asset": "native", "perWindow": "\#(cap)", "window": "24h"}"#)
        let running = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let sockets = try (0..<20).map { _ in try running.connect() }
        let answers = RunningAgent.LockedLines()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            answers.append(Self.signTransaction(sockets[index], payment, id: index) ?? "")
        }
        #expect(answers.lines.count == 20)
        #expect(answers.lines.filter { $0.contains("\"signedTxXdr\"") }.count == 7)
        #expect(answers.lines.filter { $0.contains("rule payments: over") }.count == 13)
    }

    @Test func anotherExecutableIsAnotherCaller() throws {
        let keystore = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: keystore.path, withIntermediateDirectories: true)
        // A file that is there (an agent does not start with a rule naming one that is not), and not this process's.
        let policy = try Self.policy(#"{"asset": "native", "perRequest": "1000"}"#, executable: "/bin/sh")
        let running = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let answer = Self.signTransaction(try running.connect(), Self.payments[0], id: 1) ?? ""
        #expect(answer.contains("no rule allows transaction requests for golden from \(Self.me) on testnet"))
    }

    @Test func overASofterLimitThePersonIsAskedAndWithoutOneItIsRefused() throws {
        let keystore = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: keystore.path, withIntermediateDirectories: true)
        let policy = try Self.policy(#"{"asset": "native", "perRequest": "1", "ask": true}"#)
        let asked = RunningAgent.LockedLines()
        let asking = try RunningAgent(confirm: { question in asked.append(contentsOf: question.lines); return true },
                                      policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: asking.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        #expect(Self.signTransaction(try asking.connect(), Self.payments[1], id: 1)?.contains("\"signedTxXdr\"") == true)
        let shown = "The policy asks: rule payments: over 1 XLM per request: this one \(AgentPolicy.units(try Self.moved(Self.payments[1])))."
        #expect(asked.lines.first == shown)
        // Within the softer limit nobody is asked.
        let before = asked.lines.count
        let small = try #require(Self.payments.first)
        if try Self.moved(small) <= 10_000_000 {
            #expect(Self.signTransaction(try asking.connect(), small, id: 2)?.contains("\"signedTxXdr\"") == true)
            #expect(asked.lines.count == before)
        }
        let alone = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: alone.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        #expect(Self.signTransaction(try alone.connect(), Self.payments[1], id: 1)?.contains("nobody is asked at this agent") == true)
    }
}

/// Two copies of one client (a Python interpreter copied to two paths, running the same few lines) are two callers
/// to a policy: the kernel reports each copy's own path, which the client cannot change.
@Suite(.offThePool) struct AgentPolicyCallerTests {
    static let client = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"signPayload","params":{"payload":"AA=="}}\\n')
        print(s.makefile().readline().strip())
        """

    static func run(_ executable: String, _ socket: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", client, socket]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func twoCopiesOfOneClientGetDifferentAnswers() throws {
        let python = try #require(["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let directory = TemporaryDirectory()
        for copy in ["allowed", "other"] {
            try FileManager.default.createDirectory(atPath: "\(directory.path)/\(copy)", withIntermediateDirectories: true)
            try Program.copy(python, to: "\(directory.path)/\(copy)/python3")
        }
        let policy = try AgentPolicy(json: Array("""
            {"version": 1, "rules": [{"name": "raw", "callers": [{"executable": "\(directory.path)/allowed/python3"}], "kinds": ["payload"]}]}
            """.utf8))
        let running = try RunningAgent(policy: PolicyWindows(directory: directory.path, policy: policy))
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let allowed = try Self.run("\(directory.path)/allowed/python3", running.socketPath)
        let other = try Self.run("\(directory.path)/other/python3", running.socketPath)
        #expect(allowed.contains(#""signature""#))
        #expect(other.contains(#""code": -4"#) || other.contains(#""code":-4"#))
        #expect(other.contains("no rule allows payload requests for golden from \(directory.path)/other/python3"))
    }
}
