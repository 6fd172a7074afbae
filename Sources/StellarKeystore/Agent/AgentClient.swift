import StellarKeys
import StellarTransactions
import Synchronization
import Glibc
import StellarText

/// A connection to a signing agent (`KeystoreAgent`, or any server of docs/AGENT.md), made when first used and
/// kept for the calls after it. Calls from several threads take turns.
///
/// It talks only to an agent of its own user: before a byte is sent, the socket's directory must be the
/// effective uid's own (0700 or stricter, not a symlink), the socket file the effective uid's, and the server's
/// uid, as the kernel reports it, the effective uid (`AgentError.untrustedSocket` otherwise). Another local user
/// who made the directory first, or planted a socket, gets nothing, least of all a key.
public final class AgentClient: Sendable {
    public let socketPath: String
    private let state = Mutex(Channel())

    /// What a call needs of the connection: kept between calls, and replaced when it goes stale.
    private struct Channel: ~Copyable {
        var socket: UnixSocket?
        var received: [UInt8] = []
        var nextID = 1
        /// The process that wrote the last bytes read, as the kernel says (`UnixSocket.identifyWriters`).
        var writer: Int32 = 0

        mutating func disconnect() {
            socket?.close()
            socket = nil
            received.removeAll()
            writer = 0
        }
    }

    /// How long a call waits for its answer: longer than the longest an agent waits for a person's answer, so that
    /// its own answer (a timeout included) arrives first.
    public static let answerTimeout = AgentProtocol.longestConfirmationTimeout + 10

    /// `socketPath` must be absolute (`absolutePath(_:)` makes a relative one so); a relative one is refused at
    /// the first call.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// `agent.sock` in the private runtime directory sessions use (`$XDG_RUNTIME_DIR/keystore`, or its fallbacks).
    public static func defaultSocketPath(environment: [String: String]) -> String {
        SessionStore.defaultDirectory(environment: environment) + "/agent.sock"
    }

    /// `path` anchored to the working directory when it is relative, so that it names the same socket from
    /// anywhere; an empty path, or a relative one with no working directory to anchor it, is refused.
    public static func absolutePath(_ path: String) throws -> String {
        guard !path.isEmpty else { throw AgentError.socketPathTooLong(path) }
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil, buffer[0] == CChar(UInt8(ascii: "/")) else {
            throw AgentError.socketPathNotAbsolute(path)
        }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var relative = Substring(path)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        return (directory == "/" ? "" : directory) + "/" + relative
    }

    /// Whether an agent of this user answers at `path`; a socket it must not trust is an error, not a no.
    public static func isListening(at path: String) throws -> Bool {
        try UnixSocket.connectToOwnServer(at: path, timeout: 5) != nil
    }

    // MARK: Calls

    /// What `status` reports.
    public struct Status: Sendable {
        /// The agent's process, as the kernel reports the writer of the answer (not as the answer says; and not
        /// `SO_PEERCRED`, which names whoever listens: a service manager, for a socket it passed the agent).
        public let pid: Int
        public let keys: Int
        public let ttl: Int?
        public let idle: Int?
        public let confirms: Bool
        /// It signs V1 authorization preimages (`KeystoreAgent.Options.allowing`).
        public let allowsV1: Bool
        /// It serves a socket a service manager passed it (`KeystoreAgent.isSocketActivated`).
        public let isSocketActivated: Bool
        /// Each windowed limit of its policy's rules, with what was spent in it; nil when it has no policy.
        public let policyWindows: [PolicyWindow]?
    }

    /// One rule's rolling window for one asset, as `status` reports it: amounts in the asset's units, as decimal
    /// strings ("96.5"), the window in seconds.
    public struct PolicyWindow: Sendable, Equatable {
        public let rule, asset: String
        public let window: Int
        public let perWindow, spent: String
        /// Going over it asks the agent's person rather than refuses.
        public let asks: Bool
    }

    public func status() throws -> Status {
        // The writer of the answer, not the listener: a service manager listens on a socket it passed the agent.
        let (result, pid) = try call(.status, []) { $0.writer > 0 ? $0.writer : $0.socket?.peer()?.pid }
        guard let pid, let keys = result["keys"]?.integer(as: Int.self),
              case .boolean(let confirms)? = result["confirm"] else { throw AgentError.badAnswer("status lacks keys or confirm") }
        return Status(pid: Int(pid), keys: keys, ttl: result["ttl"]?.integer(as: Int.self), idle: result["idle"]?.integer(as: Int.self),
                      confirms: confirms, allowsV1: result["allowV1"] == .boolean(true),
                      isSocketActivated: result["socketActivated"] == .boolean(true), policyWindows: try Self.policyWindows(result["policy"]))
    }

    private static func policyWindows(_ value: StrictJSON.Value?) throws -> [PolicyWindow]? {
        guard case .array(let items)? = value else { return nil }
        return try items.map { item in
            guard let window = item.object, let rule = window["rule"]?.string, let asset = window["asset"]?.string,
                  let seconds = window["window"]?.integer(as: Int.self), let cap = window["perWindow"]?.string,
                  let spent = window["spent"]?.string else { throw AgentError.badAnswer("a policy window lacks one of rule, asset, window, perWindow, spent") }
            return PolicyWindow(rule: rule, asset: asset, window: seconds, perWindow: cap, spent: spent, asks: window["ask"] == .boolean(true))
        }
    }

    /// One key an agent holds, as `listKeys` reports it.
    public struct KeyInfo: Sendable, Equatable {
        public let name: String
        public let keystore: String
        public let address: String
        /// Seconds left before the TTL, and before the idle limit; nil where there is none.
        public let expiresIn: Int?
        public let idleExpiresIn: Int?

        package init(name: String, keystore: String, address: String, expiresIn: Int?, idleExpiresIn: Int?) {
            (self.name, self.keystore, self.address, self.expiresIn, self.idleExpiresIn) = (name, keystore, address, expiresIn, idleExpiresIn)
        }
    }

    public func keys() throws -> [KeyInfo] {
        guard case .array(let listed)? = try call(.listKeys, [])["keys"] else { throw AgentError.badAnswer("listKeys lacks keys") }
        return try listed.map { value in
            guard let key = value.object, let name = key["name"]?.string, let keystore = key["keystore"]?.string,
                  let address = key["address"]?.string else { throw AgentError.badAnswer("a listed key lacks one of name, address, keystore") }
            return KeyInfo(name: name, keystore: keystore, address: address,
                           expiresIn: key["expiresIn"]?.integer(as: Int.self),
                           idleExpiresIn: key["idleExpiresIn"]?.integer(as: Int.self))
        }
    }

    /// Drops every key the agent holds; returns how many.
    @discardableResult
    public func lock() throws -> Int { try count(try call(.lock, [])) }

    /// Drops the keys of identity `name` in `keystore`; returns how many.
    @discardableResult
    public func remove(name: IdentityName, keystore: String) throws -> Int {
        try count(try call(.removeKey, [("name", .string(name.rawValue)), ("keystore", .string(keystore))]))
    }

    /// What is at the agent's socket once it has stopped.
    public enum SocketAfterShutdown: Sendable, Equatable {
        /// The agent removed it: nothing answers there until an agent is started again.
        case removed
        /// It is a service manager's (`KeystoreAgent.isSocketActivated`), which keeps listening and starts an agent
        /// again at the next connection.
        case keptByServiceManager
    }

    /// Asks the agent to stop (it drops its keys and removes its socket, unless a service manager passed it), and
    /// waits up to 5 s until it has: `AgentError.didNotStop` if it still answers then. Nothing is signalled. For a
    /// socket that stays, the agent has stopped when it ends this connection, which it does after dropping every
    /// key: a new connection would only start another agent.
    @discardableResult
    public func shutdown() throws -> SocketAfterShutdown {
        let kept = try state.withLock { channel -> Bool in
            defer { channel.disconnect() }
            let result = try exchange(&channel, .shutdown, [])
            guard case .boolean(true)? = result["stopping"] else { throw AgentError.badAnswer("shutdown did not say it is stopping") }
            guard case .boolean(true)? = result["socketKept"] else { return false }
            guard let socket = channel.socket, channel.received.isEmpty,
                  let waited = UnixSocket.waitForInput([socket.fd], milliseconds: 5000), waited[0] else {
                throw AgentError.didNotStop(socketPath)
            }
            // The end of the stream, or a reset: either way the connection is over.
            var byte: UInt8 = 0
            if let count = withUnsafeMutableBytes(of: &byte, { socket.read(into: $0) }), count > 0 {
                throw AgentError.badAnswer("the agent sent more after its answer to shutdown")
            }
            return true
        }
        if kept { return .keptByServiceManager }
        for _ in 0..<500 {
            guard try Self.isListening(at: socketPath) else { return .removed }
            usleep(10_000)
        }
        throw AgentError.didNotStop(socketPath)
    }

    private func count(_ result: [String: StrictJSON.Value]) throws -> Int {
        guard let removed = result["removed"]?.integer(as: Int.self) else { throw AgentError.badAnswer("no count of keys removed") }
        return removed
    }

    /// Hands `signer`'s key to the agent, to hold for at most `ttl` seconds (and the agent's own limits). The seed
    /// goes as 32 raw bytes after the agent's go-ahead, from guarded memory to the socket: never in JSON, never
    /// in a string.
    package func add(_ signer: Signer, keystore: String, ttl: Int? = nil) throws {
        try state.withLock { channel in
            let params: [(String, AgentJSON)] = [("name", .string(signer.name.rawValue)), ("keystore", .string(keystore)),
                                                 ("address", .string(signer.address))] + (ttl.map { [("ttl", .integer($0))] } ?? [])
            // The agent closes the connection after an addKey, whatever happens.
            defer { channel.disconnect() }
            let goAhead = try exchange(&channel, .addKey, params)
            guard goAhead["send"]?.integer(as: Int.self) == 32 else { throw AgentError.badAnswer("addKey did not ask for the seed") }
            guard let socket = channel.socket, socket.write(signer.keyPair.seed) else { throw AgentError.connectionLost(Self.closed) }
            guard try answer(&channel, to: channel.nextID - 1)["address"]?.string == signer.address else {
                throw AgentError.badAnswer("addKey did not confirm the address")
            }
        }
    }

    /// Has the agent log in to the token of identity `name` of `keystore` (a key in a PKCS#11 token, whose
    /// address is `address`) with `pin`, and hold that session for at most `ttl` seconds. The PIN goes as raw bytes
    /// after the agent's go-ahead, as a seed does; the agent reads the vault itself and checks the key.
    package func addToken(name: IdentityName, address: String, keystore: String, pin: PIN, ttl: Int? = nil) throws {
        try add(name: name, address: address, keystore: keystore, pin: pin, kind: "token", ttl: ttl)
    }

    /// Has the agent open identity `name`'s P-256 key in its TPM with `pin` (the TPM counts a wrong one), and
    /// hold it for at most `ttl` seconds; `address` is the key's name in the protocol (`p256:` and its hex).
    package func addTPMKey(name: IdentityName, address: String, keystore: String, pin: PIN, ttl: Int? = nil) throws {
        try add(name: name, address: address, keystore: keystore, pin: pin, kind: "tpmKey", ttl: ttl)
    }

    private func add(name: IdentityName, address: String, keystore: String, pin: PIN, kind: String, ttl: Int?) throws {
        try state.withLock { channel in
            let count = pin.bytes.count
            let params: [(String, AgentJSON)] = [("name", .string(name.rawValue)), ("keystore", .string(keystore)),
                                                 ("address", .string(address)), (kind, .boolean(true)), ("pinLength", .integer(count))]
                + (ttl.map { [("ttl", .integer($0))] } ?? [])
            defer { channel.disconnect() }
            let goAhead = try exchange(&channel, .addKey, params)
            guard goAhead["send"]?.integer(as: Int.self) == count else { throw AgentError.badAnswer("addKey did not ask for the PIN") }
            guard let socket = channel.socket, socket.write(pin.bytes) else { throw AgentError.connectionLost(Self.closed) }
            guard try answer(&channel, to: channel.nextID - 1)["address"]?.string == address else {
                throw AgentError.badAnswer("addKey did not confirm the address")
            }
        }
    }

    /// A signer for the P-256 key `key` if the agent holds it, as identity `name`.
    package func signer(for key: P256PublicKey, name: IdentityName) throws -> AgentP256Signer {
        let address = AuthorizationSigner.Key.p256(key).agentAddress
        let result = try call(.getAddress, [("address", .string(address))])
        guard result["address"]?.string == address else { throw AgentError.badAnswer("getAddress gave another key") }
        return AgentP256Signer(client: self, name: name, publicKey: key)
    }

    /// A signer for `address` if the agent holds its key (`AgentError.keyNotHeld` if not), as identity `name`.
    package func signer(for address: String, name: IdentityName) throws -> AgentSigner {
        let result = try call(.getAddress, [("address", .string(address))])
        guard result["address"]?.string == address else { throw AgentError.badAnswer("getAddress gave another address") }
        return AgentSigner(client: self, name: name, publicKey: try PublicKey(accountID: address))
    }

    /// One request, and its result object. Errors in the answer become `AgentError`s.
    package func call(_ method: AgentProtocol.Method, _ params: [(String, AgentJSON)]) throws -> [String: StrictJSON.Value] {
        try call(method, params) { _ in () }.0
    }

    /// The same, with what `alsoRead` reads of the connection that answered, while it is still this call's.
    private func call<Extra>(_ method: AgentProtocol.Method, _ params: [(String, AgentJSON)],
                             alsoRead: (borrowing Channel) -> Extra) throws -> ([String: StrictJSON.Value], Extra) {
        try state.withLock { channel in
            do {
                let result = try exchange(&channel, method, params)
                return (result, alsoRead(channel))
            } catch let error as AgentError {
                // Whatever was half-read is no longer in step with the requests: start afresh next time.
                if case .connectionLost = error { channel.disconnect() }
                if case .badAnswer = error { channel.disconnect() }
                throw error
            }
        }
    }

    /// A kept connection the agent has closed since (it restarted, or ended a connection left unused) is
    /// replaced by a new one before the request is sent. One that ends unanswered just as the request goes out is
    /// replaced once too. The agent ends a connection without answering in two cases only: it had begun no request
    /// on it (so this one was never read, and sending it again cannot make it happen twice), or the agent is
    /// stopping (and then no agent takes the second try).
    private func exchange(_ channel: inout Channel, _ method: AgentProtocol.Method,
                          _ params: [(String, AgentJSON)]) throws -> [String: StrictJSON.Value] {
        if channel.socket?.isStale == true { channel.disconnect() }
        guard channel.socket != nil else { return try exchangeOnce(&channel, method, params) }
        do {
            return try exchangeOnce(&channel, method, params)
        } catch AgentError.connectionLost(let reason) where reason == Self.closed || reason == Self.closedUnanswered {
            channel.disconnect()
            return try exchangeOnce(&channel, method, params)
        }
    }

    private static let closed = "closed the connection"
    private static let closedUnanswered = "closed the connection without answering (it may have stopped)"

    private func exchangeOnce(_ channel: inout Channel, _ method: AgentProtocol.Method,
                              _ params: [(String, AgentJSON)]) throws -> [String: StrictJSON.Value] {
        let socket = try connected(&channel)
        let id = channel.nextID
        channel.nextID += 1
        let request = AgentJSON.object([("jsonrpc", .string("2.0")), ("id", .integer(id)), ("method", .string(method.rawValue)),
                                        ("params", .object(params))])
        guard socket.write(Array(request.text.utf8) + [0x0A]) else {
            channel.disconnect()
            throw AgentError.connectionLost(Self.closed)
        }
        let address: String? = params.first { $0.0 == "address" }.flatMap { if case .string(let text) = $0.1 { text } else { nil } }
        return try answer(&channel, to: id, address: address)
    }

    private func connected(_ channel: inout Channel) throws -> UnixSocket {
        if let socket = channel.socket { return socket }
        guard let socket = try UnixSocket.connectToOwnServer(at: socketPath, timeout: Self.answerTimeout) else {
            throw AgentError.notRunning(socketPath)
        }
        socket.identifyWriters()
        channel.socket = socket
        return socket
    }

    /// Reads the answer line to request `id`, made for `address` (to name it in "no such key").
    private func answer(_ channel: inout Channel, to id: Int, address: String? = nil) throws -> [String: StrictJSON.Value] {
        guard let socket = channel.socket else { throw AgentError.connectionLost(Self.closed) }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while !channel.received.contains(0x0A) {
            guard channel.received.count <= AgentProtocol.largestRequest else { throw AgentError.badAnswer("an answer over 1 MiB") }
            var writer: Int32 = 0
            guard let count = chunk.withUnsafeMutableBytes({ socket.read(into: $0, sender: &writer) }) else {
                // A reset (the agent closed the connection unread, as it does for another user) or the timeout.
                throw AgentError.connectionLost(UnixSocket.timedOut ? "did not answer within \(Self.answerTimeout) s" : Self.closedUnanswered)
            }
            guard count > 0 else { throw AgentError.connectionLost(Self.closedUnanswered) }
            channel.received.append(contentsOf: chunk[..<count])
            channel.writer = writer
        }
        let newline = channel.received.firstIndex(of: 0x0A)!
        let line = Array(channel.received[..<newline])
        channel.received.removeFirst(newline + 1)
        let members: [String: StrictJSON.Value]
        do {
            members = try StrictJSON.parse(line, integersOnly: false)
        } catch {
            throw AgentError.badAnswer("it is not a JSON object")
        }
        guard members["jsonrpc"] == .string("2.0"), members["id"]?.integer(as: Int.self) == id else {
            throw AgentError.badAnswer("it is not the answer to this request")
        }
        if let error = members["error"]?.object {
            let code = error["code"]?.integer(as: Int.self) ?? AgentProtocol.ErrorCode.internal.rawValue
            let message = error["message"]?.string ?? "no message"
            if error["data"]?.object?["reason"]?.string == "no-key" { throw address.map(AgentError.keyNotHeld) ?? AgentError.noKeys }
            if code == AgentProtocol.ErrorCode.rejected.rawValue, error["data"]?.object?["reason"]?.string == "policy" {
                // The agent's own words, "The agent's policy refused it: <reason>.", said once.
                var reason = Substring(message)
                if reason.hasPrefix(AgentError.policyRefusalPrefix) { reason = reason.dropFirst(AgentError.policyRefusalPrefix.count) }
                if reason.hasSuffix(".") { reason = reason.dropLast() }
                throw AgentError.refusedByPolicy(String(reason))
            }
            if code == AgentProtocol.ErrorCode.rejected.rawValue {
                throw AgentError.rejected(AgentError.Rejection(wireReason: error["data"]?.object?["reason"]?.string))
            }
            throw AgentError.refused(code: code, message: message)
        }
        guard let result = members["result"]?.object else { throw AgentError.badAnswer("it has neither a result object nor an error") }
        return result
    }
}

/// An identity's key held by a signing agent. Every signature it returns is checked against the identity's
/// public key before it is used: an agent that answers with someone else's key, or garbage, signs nothing.
package struct AgentSigner: Signing {
    package let client: AgentClient
    package let name: IdentityName
    package let publicKey: PublicKey

    private var address: String { publicKey.accountID }

    private func signature(_ result: [String: StrictJSON.Value], _ field: String, valid: ([UInt8]) -> Bool) throws -> [UInt8] {
        guard let text = result[field]?.string, let signature = Base64.decode(text), signature.count == 64 else {
            throw AgentError.badAnswer("\(field) is not 64 bytes of base64")
        }
        guard valid(signature) else { throw AgentError.wrongSignature(address) }
        return signature
    }

    package func sign(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        let payload = Array(bytes)
        let result = try client.call(.signPayload, [("payload", .string(Base64.string(payload))), ("address", .string(address))])
        return try signature(result, "signature") { publicKey.isValidSignature($0, for: payload) }
    }

    /// A message that is UTF-8 goes as text, so that an agent that asks its person shows it as such; the agent signs its UTF-8,
    /// which is these same bytes.
    package func signMessage(_ message: UnsafeRawBufferPointer) throws -> [UInt8] {
        let bytes = Array(message)
        let text = String(validating: bytes, as: UTF8.self).map { ("message", AgentJSON.string($0)) }
        let result = try client.call(.signMessage, [text ?? ("messageBase64", .string(Base64.string(bytes))), ("address", .string(address))])
        return try signature(result, "signedMessage") { publicKey.isValidMessageSignature($0, for: bytes) }
    }

    /// The agent signs (and, when it asks its person, shows the summary of) the whole envelope; its signature is taken
    /// from its answer, checked, and spliced into the envelope given here, so the bytes are those `Signer` makes.
    package func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        try envelope.signed(by: publicKey, on: network) { hash in
            let result = try client.call(.signTransaction, [("xdr", .string(Base64.string(envelope.bytes))),
                                                            ("networkPassphrase", .string(network.passphrase)),
                                                            ("address", .string(address))])
            guard let text = result["signedTxXdr"]?.string, let signed = try? TransactionEnvelope(base64: text) else {
                throw AgentError.badAnswer("signedTxXdr is not a transaction envelope")
            }
            let hint = Array(publicKey.rawRepresentation.suffix(4))
            guard let found = signed.signatures.first(where: { $0.hint == hint && publicKey.isValidSignature($0.signature, for: hash) }) else {
                throw AgentError.wrongSignature(address)
            }
            return found.signature
        }
    }

    /// SEP-43's `signAuthEntry`, with `contextRuleIds` when the key signs for a smart account: the agent shows
    /// the preimage and signs its digest; the signature is checked against that digest here.
    package func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8] {
        try payload.preimage.check(on: network)
        var parameters: [(String, AgentJSON)] = [("authEntry", .string(Base64.string(payload.preimage.bytes))),
                                                 ("networkPassphrase", .string(network.passphrase)), ("address", .string(address))]
        if let ids = payload.contextRuleIDs { parameters.append(("contextRuleIds", .array(ids.map { .integer(Int($0)) }))) }
        let result = try client.call(.signAuthEntry, parameters)
        return try signature(result, "signedAuthEntry") { publicKey.isValidSignature($0, for: payload.digest) }
    }
}

/// A P-256 key in the TPM held by a signing agent: it signs authorization payloads for smart accounts, in the
/// form asked (`signatureForm`). Its signatures are not checked here (no P-256 verifier is linked, as for the key
/// opened in this process).
package struct AgentP256Signer: P256Signing {
    package let client: AgentClient
    package let name: IdentityName
    let publicKey: P256PublicKey
    var form: P256SignatureForm = .webAuthn

    package var signerKey: AuthorizationSigner.Key { .p256(publicKey) }

    package func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8] {
        try payload.preimage.check(on: network)
        guard let ids = payload.contextRuleIDs else { throw ReviewError.onlySmartAccounts }
        let result = try client.call(.signAuthEntry, [("authEntry", .string(Base64.string(payload.preimage.bytes))),
                                                       ("networkPassphrase", .string(network.passphrase)),
                                                       ("address", .string(signerKey.agentAddress)),
                                                       ("contextRuleIds", .array(ids.map { .integer(Int($0)) })),
                                                       ("signatureForm", .string(form.argument))])
        guard let text = result["signedAuthEntry"]?.string, let signature = Base64.decode(text),
              (1...P256SignatureForm.largestCredentialSignature).contains(signature.count)
        else { throw AgentError.badAnswer("signedAuthEntry is not a P-256 credential signature in base64") }
        return signature
    }
}

extension AuthorizationSigner.Key {
    /// How the agent protocol names a key: an Ed25519 key by its `G…` address, a P-256 key by `p256:` and the hex
    /// of its key data (docs/AGENT.md).
    package var agentAddress: String {
        switch self {
        case .ed25519(let key): key.accountID
        case .p256(let key): "p256:" + Hex.string(key.keyData)
        }
    }
}

extension P256SignatureForm {
    /// Its name in the agent protocol and on the command line.
    package var argument: String { self == .webAuthn ? "webauthn" : "secp256r1" }

    package init?(argument: String) {
        switch argument {
        case "webauthn": self = .webAuthn
        case "secp256r1": self = .secp256r1
        default: return nil
        }
    }
}
