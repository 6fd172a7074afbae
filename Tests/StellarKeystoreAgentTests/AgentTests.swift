import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
@testable import StellarKeystoreAgent
import TestFixtures

/// A clock in seconds the agent tests move by hand.
final class AgentClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 1000.0
    var now: Double { lock.withLock { current } }
    func advance(_ seconds: Double) { lock.withLock { current += seconds } }
}

/// An agent of the test's own, in its own directory, running on its own thread until the test ends.
final class RunningAgent: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let agent: KeystoreAgent
    let clock = AgentClock()
    let done = DispatchSemaphore(value: 0)
    private let logLines = LockedLines()
    var socketPath: String { agent.socketPath }
    var log: [String] { logLines.lines }

    final class LockedLines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        var lines: [String] { lock.withLock { stored } }
        func append(_ line: String) { lock.withLock { stored.append(line) } }
        func append(contentsOf lines: [String]) { lock.withLock { stored += lines } }
    }

    init(ttl: Int? = nil, idle: Int? = nil, confirm: (@Sendable (AgentConfirmation) -> Bool)? = nil,
         confirmationScope: ConfirmationScope = .everyRequest, confirmationTimeout: Int = 120, allowing: AuthorizationRisks = [],
         policy: PolicyWindows? = nil) throws {
        let clock = clock, lines = logLines
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        var options = KeystoreAgent.Options(
            ttl: ttl, idle: idle, confirm: confirm, confirmationScope: confirmationScope, confirmationTimeout: confirmationTimeout,
            log: { lines.append($0) }, now: { clock.now }, requestTimeout: 1, allowing: allowing)
        options.policy = policy
        agent = try KeystoreAgent(socketPath: directory.path + "/run/agent.sock", options: options)
        let agent = agent, done = done
        Thread.detachNewThread {
            agent.run()
            done.signal()
        }
    }

    func stop() {
        agent.stop()
        done.wait()
    }

    deinit { if FileManager.default.fileExists(atPath: agent.socketPath) { stop() } }

    /// A raw connection, for what a well-behaved client never sends.
    func connect() throws -> UnixSocket { try #require(try UnixSocket.connect(to: socketPath)) }
}

extension UnixSocket {
    /// The next answer line, as text (without its newline); nil at the end of the stream.
    func line() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = withUnsafeMutableBytes(of: &byte) { read(into: $0) } ?? 0
            guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    func send(_ text: String) -> Bool { write(Array(text.utf8)) }
}

@Suite(.offThePool) struct AgentTests {
    static let seed = "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO"
    static let address = "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR"

    static func signer(_ name: String = "golden", seed: String = seed) throws -> Signer {
        Signer(name: try IdentityName(name), keyPair: try KeyPair(secretSeed: seed), isFromPhrase: nil)
    }

    /// Issue 30, item 5: `signAuthEntry` with `contextRuleIds` signs as a smart account's signer, the same bytes
    /// as the key here; a count of rule ids that is not one per context is refused.
    @Test func smartAccountRuleIDsGoThroughTheAgent() throws {
        struct Delegates: Decodable { struct Entry: Decodable { let name, preimage: String }; let entries: [Entry] }
        let fixture = try #require(try Fixtures.load(Delegates.self, "delegates.json").entries.first { $0.name == "a delegate of a contract account" })
        let preimage = try AuthorizationPreimage(base64: fixture.preimage)
        #expect(preimage.contextCount == 2)
        let running = try RunningAgent()
        let local = try Self.signer()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(local, keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: local.name)
        let payload = AuthorizationPayload(preimage: preimage, contextRuleIDs: [0, 3])
        #expect(payload.digest != preimage.hash)
        #expect(try remote.signAuthorization(payload, on: .testnet) == local.signAuthorization(payload, on: .testnet))
        #expect(throws: AgentError.self) { try remote.signAuthorization(AuthorizationPayload(preimage: preimage, contextRuleIDs: [0]), on: .testnet) }
        running.agent.waitForLog()
    }

    /// Issue 32, item 3: a key the agent holds signs a multisig account's entry as one of its signers, its map
    /// added beside the others' (fixtures/multisig-entries.json: B and C signed, A through the agent).
    @Test func aMultisigAccountsSignerSignsThroughTheAgent() throws {
        struct Multisig: Decodable { struct Case: Decodable { let expiration: UInt32; let signed: [String: String] }; let account: String; let signers: [String: String]; let envelopes: [Case] }
        let file = try Fixtures.load(Multisig.self, "multisig-entries.json")
        let fixture = try #require(file.envelopes.first)
        let hex = try #require(file.signers["A"])
        var seed = try #require(Hex.bytes(hex))
        let local = Signer(name: "alice", keyPair: try KeyPair(seed: SecureBytes(consuming: &seed)), isFromPhrase: nil)
        let running = try RunningAgent()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(local, keystore: "/keys")
        let remote = try client.signer(for: local.keyPair.publicKey.accountID, name: local.name)
        let envelope = try TransactionEnvelope(base64: try #require(fixture.signed["BC"]))
        let plan = try envelope.authorizationPlan(for: try .multisigAccount(file.account, key: local.keyPair.publicKey),
                                                  expirationLedger: fixture.expiration)
        let signed = try envelope.signing(plan, on: .testnet, expirationLedger: fixture.expiration) { try remote.signAuthorization($0, on: .testnet) }
        #expect(signed.base64 == fixture.signed["ABC"])
        running.agent.waitForLog()
    }

    /// Issue 30, item 2: an agent not started to allow them refuses V1 preimages (`signAuthEntry`), which bind no
    /// address, and signs V2 ones. (Failed first: it signed both.)
    @Test func v1PreimagesAreRefusedUnlessAllowed() throws {
        struct Preimages: Decodable { struct Case: Decodable { let name, network, preimage: String }; let cases: [Case] }
        let cases = try Fixtures.load(Preimages.self, "auth-preimages.json").cases
        let running = try RunningAgent()
        let local = try Self.signer()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(local, keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: local.name)
        for fixture in cases {
            let payload = AuthorizationPayload(preimage: try AuthorizationPreimage(base64: fixture.preimage))
            let network = try StellarNetwork(named: fixture.network)
            if fixture.name.hasPrefix("v1") {
                #expect(throws: AgentError.self, "\(fixture.name)") { try remote.signAuthorization(payload, on: network) }
            } else {
                #expect(try remote.signAuthorization(payload, on: network) == local.signAuthorization(payload, on: network), "\(fixture.name)")
            }
        }
        running.agent.waitForLog()
    }

    /// Each method through the agent gives the bytes the key gives here: payload, SEP-53 message, every envelope
    /// of fixtures/tx-envelopes.json, and every authorization preimage and envelope of fixtures/auth-preimages.json.
    @Test func everySignatureThroughTheAgentIsTheLocalOne() throws {
        // Started to sign V1 preimages too, so that every fixture goes through it.
        let running = try RunningAgent(allowing: .notAddressBound)
        let local = try Self.signer()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(local, keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: local.name)
        for payload in [[], [0], Array(0..<200)] as [[UInt8]] {
            #expect(try remote.sign(payload) == local.sign(payload))
            #expect(try remote.signMessage(payload) == local.signMessage(payload))
        }
        struct Envelopes: Decodable {
            struct Entry: Decodable { let name, envelope, passphrase: String }
            let envelopes: [Entry]
        }
        for entry in try Fixtures.load(Envelopes.self, "tx-envelopes.json").envelopes {
            let envelope = try TransactionEnvelope(base64: entry.envelope)
            let network = try StellarNetwork(passphrase: entry.passphrase)
            let mine = try local.signTransaction(envelope, on: network), theirs = try remote.signTransaction(envelope, on: network)
            #expect(mine.envelope == theirs.envelope && mine.hash == theirs.hash && mine.wasAlreadySigned == theirs.wasAlreadySigned, "\(entry.name)")
        }
        struct Authorizations: Decodable {
            struct Case: Decodable { let name, network, preimage: String }
            struct Envelope: Decodable { let name, network, envelope: String; let expiration: UInt32 }
            let cases: [Case]
            let envelopes: [Envelope]
        }
        let authorizations = try Fixtures.load(Authorizations.self, "auth-preimages.json")
        for entry in authorizations.cases {
            let preimage = try AuthorizationPreimage(base64: entry.preimage)
            let network = try StellarNetwork(named: entry.network)
            let payload = AuthorizationPayload(preimage: preimage)
            #expect(try remote.signAuthorization(payload, on: network) == local.signAuthorization(payload, on: network))
        }
        func outcome(_ sign: () throws -> SignedAuthorizations) -> String {
            do { return Base64.string(try sign().envelope) } catch { return "refused: \(error)" }
        }
        var signed = 0
        for entry in authorizations.envelopes {
            let envelope = try TransactionEnvelope(base64: entry.envelope)
            let network = try StellarNetwork(named: entry.network)
            func signEntries(by key: any Signing) throws -> SignedAuthorizations {
                let plan = try envelope.authorizationPlan(for: .account(key.publicKey), expirationLedger: entry.expiration)
                return try key.signAuthorizations(plan, in: envelope, on: network, expirationLedger: entry.expiration)
            }
            let mine = outcome { try signEntries(by: local) }
            let theirs = outcome { try signEntries(by: remote) }
            #expect(mine == theirs, "\(entry.name)")
            if !mine.hasPrefix("refused") { signed += 1 }
        }
        #expect(signed > 0)
        running.agent.waitForLog()
        #expect(running.log.contains { $0.contains("signTransaction golden \(Self.address) ok") })
    }

    /// A key is dropped at its TTL: the smaller of the agent's and its own.
    @Test func aKeyIsDroppedAtItsTTL() throws {
        let running = try RunningAgent(ttl: 100)
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try Self.signer(), keystore: "/keys", ttl: 50)
        let remote = try client.signer(for: Self.address, name: .default)
        #expect(try client.keys().map(\.expiresIn) == [50])
        running.clock.advance(49)
        #expect(try remote.sign([1]).count == 64)
        #expect(try client.keys().map(\.expiresIn) == [1])
        running.clock.advance(1)
        #expect(throws: AgentError.keyNotHeld(Self.address)) { try remote.sign([1]) }
        #expect(try client.keys().isEmpty)
        // Without a TTL of its own, the agent's.
        try client.add(try Self.signer(), keystore: "/keys")
        #expect(try client.keys().map(\.expiresIn) == [100])
    }

    /// With `idle`, a key unused that long is dropped; each use starts the wait again.
    @Test func aKeyUnusedForTheIdleTimeIsDropped() throws {
        let running = try RunningAgent(idle: 30)
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try Self.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)
        running.clock.advance(29)
        #expect(try remote.sign([1]).count == 64)
        running.clock.advance(29)
        #expect(try client.keys().map(\.idleExpiresIn) == [1] && client.keys().map(\.expiresIn) == [nil])
        running.clock.advance(1)
        #expect(throws: AgentError.keyNotHeld(Self.address)) { try remote.sign([1]) }
    }

    /// `lock` drops every key; `removeKey` one identity's; the agent keeps running.
    @Test func lockAndRemoveDropKeys() throws {
        let running = try RunningAgent()
        let client = AgentClient(socketPath: running.socketPath)
        let other = try Self.signer("other", seed: KeyPair.random().secretSeedStrKey().withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        try client.add(try Self.signer(), keystore: "/keys")
        try client.add(other, keystore: "/keys")
        #expect(Set(try client.keys().map(\.name)) == ["golden", "other"])
        #expect(throws: AgentError.refused(code: -3, message: "The agent holds 2 keys; say which address signs.")) {
            try client.call(.getAddress, [])
        }
        #expect(try client.remove(name: other.name, keystore: "/elsewhere") == 0)
        #expect(try client.remove(name: other.name, keystore: "/keys") == 1)
        #expect(try client.call(.getAddress, [])["address"] == .string(Self.address))
        try client.add(other, keystore: "/keys")
        #expect(try client.lock() == 2)
        #expect(try client.keys().isEmpty && client.status().keys == 0)
        #expect(throws: AgentError.noKeys) { try client.call(.signPayload, [("payload", .string("AA=="))]) }
    }

    /// Eight clients at once, each on its own connection, each checking every signature it gets.
    @Test func eightClientsAtOnceEachGetTheirOwnSignatures() throws {
        let running = try RunningAgent()
        let local = try Self.signer()
        try AgentClient(socketPath: running.socketPath).add(local, keystore: "/keys")
        let good = RunningAgent.LockedLines()
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            guard let remote = try? AgentClient(socketPath: running.socketPath).signer(for: Self.address, name: .default) else { return }
            for index in 0..<200 {
                let payload = Array("client \(client) request \(index)".utf8)
                if (try? remote.sign(payload)) == local.sign(payload) { good.append("\(client)") }
            }
        }
        #expect(good.lines.count == 1600)
        #expect(Set(good.lines).count == 8)
    }

    /// Requests and answers on the wire, exactly: ids echoed as given, SEP-43's error codes.
    @Test func theWireFormatIsJSONRPC() throws {
        let running = try RunningAgent()
        try AgentClient(socketPath: running.socketPath).add(try Self.signer(), keystore: "/keys")
        let socket = try running.connect()
        let exchanges: [(String, String)] = [
            (#"{"jsonrpc":"2.0","id":7,"method":"getAddress","params":{}}"#,
             #"{"jsonrpc":"2.0","id":7,"result":{"address":"\#(Self.address)"}}"#),
            (#"{"jsonrpc":"2.0","id":"a\"b","method":"getAddress"}"#,
             #"{"jsonrpc":"2.0","id":"a\"b","result":{"address":"\#(Self.address)"}}"#),
            (#"{"jsonrpc":"2.0","id":null,"method":"fly"}"#,
             #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"there is no method 'fly'"}}"#),
            (#"{"jsonrpc":"1.0","id":1,"method":"getAddress"}"#,
             #"{"jsonrpc":"2.0","id":1,"error":{"code":-3,"message":"'jsonrpc' must be \"2.0\""}}"#),
            (#"{"jsonrpc":"2.0","id":2,"method":"signPayload","params":{"payload":"AA==","payload":"AQ=="}}"#,
             #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"the request is not a JSON object: the key 'payload' appears twice"}}"#),
            (#"{"jsonrpc":"2.0","id":3,"method":"signPayload","params":{"payload":"%%"}}"#,
             #"{"jsonrpc":"2.0","id":3,"error":{"code":-3,"message":"'payload' is not valid base64"}}"#),
            (#"{"jsonrpc":"2.0","id":4,"method":"signPayload","params":{"payload":"AA==","address":"GB"}}"#,
             #"{"jsonrpc":"2.0","id":4,"error":{"code":-3,"message":"The agent holds no key for GB.","data":{"reason":"no-key"}}}"#),
            (#"{"jsonrpc":"2.0","id":5,"method":"signTransaction","params":{"xdr":"AAAA"}}"#,
             #"{"jsonrpc":"2.0","id":5,"error":{"code":-3,"message":"'networkPassphrase' is missing"}}"#),
            ("[1,2]", #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"the request is not a JSON object: it is not a JSON object"}}"#),
            (#"{"jsonrpc":"2.0","id":1.5,"method":"status"}"#,
             #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"'id' is a fraction or exponent number, not a string, an integer or null"}}"#),
        ]
        for (request, answer) in exchanges {
            #expect(socket.send(request + "\n"))
            #expect(socket.line() == answer, "\(request)")
        }
        // After all of those, the same connection still signs.
        #expect(socket.send(#"{"jsonrpc":"2.0","id":9,"method":"signPayload","params":{"payload":"AA=="}}"# + "\n"))
        let signature = Base64.string(try Self.signer().sign([0]))
        #expect(socket.line() == #"{"jsonrpc":"2.0","id":9,"result":{"signature":"\#(signature)","signerAddress":"\#(Self.address)"}}"#)
    }

    /// A request over 1 MiB, one left unfinished, and one cut off before its newline each get an error and lose
    /// their connection; a client waiting meanwhile is answered throughout.
    @Test func hugeHalfAndSilentRequestsDisturbNoOne() throws {
        let running = try RunningAgent()
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try Self.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)

        let silent = try running.connect()
        #expect(silent.send(#"{"jsonrpc":"2.0","id":1,"#))
        #expect(try remote.sign([1]).count == 64)  // not held up by the silent one

        let huge = try running.connect()
        let chunk = [UInt8](repeating: 0x20, count: 64 * 1024)
        for _ in 0..<17 { guard huge.write(chunk) else { break } }
        #expect(huge.line() == #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"the request is longer than 1 MiB"}}"#)
        #expect(huge.line() == nil)

        let half = try running.connect()
        #expect(half.send(#"{"jsonrpc":"2.0","id":1,"method":"status"}"#))
        shutdown(half.fd, Int32(SHUT_WR))
        #expect(half.line() == #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"the request ended before its newline"}}"#)

        // The silent one is told after the request timeout (1 s here), and closed.
        #expect(silent.line() == #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"the request was not finished within 1 s"}}"#)
        #expect(silent.line() == nil)
        #expect(try remote.sign([2]).count == 64)
    }

    /// A request sent a byte at a time, each before the timeout, still has to be finished within it.
    @Test func aTrickledRequestTimesOutFromItsFirstByte() throws {
        let running = try RunningAgent()
        let socket = try running.connect()
        let started = Date()
        for byte in Array(#"{"jsonrpc":"2.0","id":1,"method":"status"}"#.utf8).prefix(8) {
            guard socket.write([byte]) else { break }
            usleep(300_000)
        }
        #expect(socket.line() == #"{"jsonrpc":"2.0","id":null,"error":{"code":-3,"message":"the request was not finished within 1 s"}}"#)
        #expect(Date().timeIntervalSince(started) < 2.5)
    }

    /// The seed follows the go-ahead, and must be the key of the address announced; sent early or wrong, it is
    /// refused and nothing is held.
    @Test func aSeedSentEarlyOrForAnotherAddressIsRefused() throws {
        let running = try RunningAgent()
        let seed = try KeyPair(secretSeed: Self.seed).seed.withUnsafeBytes { Array($0) }
        let add = #"{"jsonrpc":"2.0","id":1,"method":"addKey","params":{"name":"golden","keystore":"/k","address":"\#(Self.address)"}}"#

        let early = try running.connect()
        #expect(early.write(Array((add + "\n").utf8) + seed))
        #expect(early.line()?.contains("the seed was sent before the agent asked for it") == true)

        let wrong = try running.connect()
        #expect(wrong.send(add + "\n"))
        #expect(wrong.line() == #"{"jsonrpc":"2.0","id":1,"result":{"send":32}}"#)
        #expect(wrong.write([UInt8](repeating: 7, count: 32)))
        #expect(wrong.line()?.contains("the seed is not the key of \(Self.address)") == true)

        let short = try running.connect()
        #expect(short.send(add + "\n"))
        _ = short.line()
        #expect(short.write(Array(seed.prefix(31))))
        shutdown(short.fd, Int32(SHUT_WR))
        #expect(short.line()?.contains("the connection ended before the whole seed arrived") == true)

        #expect(try AgentClient(socketPath: running.socketPath).keys().isEmpty)
    }

    /// With a confirmation callback, each signature waits for it, with the caller and the summary; a no is −4.
    @Test func aDeclinedConfirmationIsMinusFourAndSignsNothing() throws {
        let asked = RunningAgent.LockedLines()
        let running = try RunningAgent(confirm: { request in
            asked.append(request.caller.text)
            asked.append(contentsOf: request.lines)
            return !request.lines.contains("  message     \"no thanks\"")
        })
        let client = AgentClient(socketPath: running.socketPath)
        try client.add(try Self.signer(), keystore: "/keys")
        let remote = try client.signer(for: Self.address, name: .default)
        #expect(try remote.signMessage(Array("fine".utf8)).count == 64)
        #expect(throws: AgentError.rejected(.declined)) { try remote.signMessage(Array("no thanks".utf8)) }
        let socket = try running.connect()
        #expect(socket.send(#"{"jsonrpc":"2.0","id":1,"method":"signMessage","params":{"message":"no thanks"}}"# + "\n"))
        #expect(socket.line() == #"{"jsonrpc":"2.0","id":1,"error":{"code":-4,"message":"The request was declined at the agent.","data":{"reason":"declined"}}}"#)
        #expect(asked.lines.contains("  message     \"no thanks\""))
        #expect(asked.lines.contains { $0.hasPrefix("/") && $0.contains(" (\(getpid()))") })
    }

    /// One agent per socket; a socket left by a dead agent is taken over; one that is not a socket is not touched.
    @Test func oneAgentPerSocket() throws {
        let running = try RunningAgent()
        #expect(throws: AgentError.socketInUse(running.socketPath)) {
            try KeystoreAgent(socketPath: running.socketPath)
        }
        running.stop()
        #expect(!FileManager.default.fileExists(atPath: running.socketPath))
        #expect(throws: AgentError.notRunning(running.socketPath)) { try AgentClient(socketPath: running.socketPath).status() }

        let stale = running.directory.path + "/run/stale.sock"
        _ = try UnixSocket.listen(at: stale)  // closed at once: a socket file nobody listens on
        let again = try KeystoreAgent(socketPath: stale)
        var info = stat()
        #expect(lstat(stale, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK)
        _ = again
        let file = running.directory.path + "/run/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("keep".utf8)))
        #expect(throws: AgentError.notASocket(file)) { try KeystoreAgent(socketPath: file) }
        #expect(FileManager.default.contents(atPath: file) == Data("keep".utf8))
    }
}

/// The rule for which key a signing command uses, with the agent first.
@Suite(.offThePool) struct AgentSignerChoiceTests {
    let directory = TemporaryDirectory()

    func keystore(warnings: RunningAgent.LockedLines) throws -> Keystore {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let keystore = try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore",
                                    warnings: { warnings.append($0) })
        _ = try keystore.signUp(name: .default, kdf: .interactive, key: .imported(try KeyPair(secretSeed: AgentTests.seed))) { _ in try PIN("270419") }
        return keystore
    }

    @Test func theAgentFirstThenTheSessionThenThePIN() throws {
        let warnings = RunningAgent.LockedLines()
        let keystore = try keystore(warnings: warnings)
        let running = try RunningAgent()
        let client = AgentClient(socketPath: running.socketPath)
        let pin = { try PIN("270419") }

        // Not in the agent, no PIN to be had: the agent's error stands, naming the identity.
        #expect(throws: AgentError.identityNotHeld(name: IdentityName.default.rawValue, address: AgentTests.address)) {
            try keystore.signingKey(keys: .automatic(agent: client, session: nil, pinAvailable: false))
        }
        // With a PIN: the vault, without a warning: an identity not handed to the agent is no fault (issue 41, 7.4).
        #expect(try keystore.signingKey(keys: .automatic(agent: client, session: nil, pinAvailable: true)).source == .vault(needsPIN: true))
        #expect(warnings.lines.isEmpty, "\(warnings.lines)")

        try keystore.addToAgent(name: .default, client: client) { _ in try pin() }
        #expect(try keystore.signingKey(keys: .automatic(agent: client, session: nil, pinAvailable: false)).source == .agent)
        // A sign-in never through the agent, which could show it only as a hash: the vault, without a warning.
        #expect(try keystore.signInKey(keys: .automatic(agent: client, session: nil, pinAvailable: false)).source == .vault(needsPIN: true))
        // With a session and no name, the identity is the session's: the agent is not asked.
        let early = try keystore.startSession(name: .default, ttl: .seconds(60), pin: pin)
        #expect(try keystore.signingKey(keys: .automatic(agent: client, session: early.stringValue, pinAvailable: false)).source == .session)
        #expect(try keystore.signingKey(as: .default, keys: .automatic(agent: client, session: early.stringValue, pinAvailable: false)).source == .agent)
        #expect(warnings.lines.isEmpty)

        // A key replaced in the vault since: the agent's copy is not used.
        _ = try keystore.signUp(name: .default, kdf: .interactive, key: .random, replacing: true) { _ in try PIN("270419") }
        #expect(throws: AgentError.self) {
            try keystore.signingKey(keys: .automatic(agent: client, session: nil, pinAvailable: false))
        }

        // A dead agent: its error, or the session.
        running.stop()
        let token = try keystore.startSession(name: .default, ttl: .seconds(60), pin: pin)
        #expect(throws: AgentError.notRunning(running.socketPath)) {
            try keystore.signingKey(keys: .automatic(agent: client, session: nil, pinAvailable: false))
        }
        #expect(try keystore.signingKey(as: .default, keys: .automatic(agent: client, session: token.stringValue, pinAvailable: false)).source == .session)
        #expect(warnings.lines.last == "No agent is running at \(running.socketPath). Using the session instead.")
    }
}
