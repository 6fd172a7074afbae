import Glibc
import StellarKeys
import StellarKeystore
import StellarText

/// A key the agent holds: whose it is, where it came from, and when it goes.
struct HeldKey {
    let name: IdentityName
    let keystore: String
    /// The key itself, a session logged in to the token that holds it, or a P-256 key in the TPM with its
    /// authorisation value.
    let signer: any AuthorizationSigning
    /// The `G…` address, encoded once: every request looks keys up by it.
    let address: String
    let expiresAt: Double?
    var lastUsed: Double


    /// When it goes unless used again: the earlier of its TTL and `idle` seconds after its last use.
    func idleDeadline(_ idle: Int?) -> Double? { idle.map { lastUsed + Double($0) } }
    func deadline(idle: Int?) -> Double? { [expiresAt, idleDeadline(idle)].compactMap { $0 }.min() }
}

/// The keys an agent holds: added, listed, looked up for a request, and dropped.
extension KeystoreAgent {
    /// Holds `signer`'s key, for at most `ttl` seconds as well as the agent's own limit; a key it holds already
    /// (same address) is replaced, with the new limits.
    public func add(_ signer: Signer, keystore: String, ttl: Int? = nil) { hold(signer, keystore: keystore, ttl: ttl) }

    /// The kinds of key `addKey` hands over, by what follows its request.
    enum KeyKind {
        /// The 32 bytes of an Ed25519 seed.
        case seed
        /// The PIN of the PKCS#11 token that holds the identity's key.
        case token
        /// The PIN of a P-256 key in the agent's TPM.
        case tpmKey

        /// What the log adds after the address.
        var logged: String {
            switch self {
            case .seed: ""
            case .token: " (token)"
            case .tpmKey: " (TPM)"
            }
        }
    }

    /// Opens identity `name`'s key in `keystore` with `secret` and holds it, for `addKey`: the one place the
    /// agent opens keys, so that a connection only frames bytes. The key must be that of `address`, so that one
    /// that arrived damaged, or a vault replaced since the client read it, is never held.
    ///
    /// A seed gives its key. A token's PIN logs in to the token that the identity's vault (read here) names, the
    /// PIN counted as every PIN tried is: the agent then holds the logged-in session, never a key. A TPM key's PIN
    /// opens it in the TPM the agent was given (`Options.tpm`), counted by the TPM and here: the agent holds it with
    /// its authorisation value.
    func holdKey(_ name: IdentityName, in keystore: String, address: String, kind: KeyKind, secret: SecureBytes, ttl: Int?) throws {
        switch kind {
        case .tpmKey, .token:
            // The stored key opens itself, whatever its kind: the agent checks only that it is the key the client
            // named (a P-256 key's agent address is never a `G…` one) and, for a token's PIN, that a token holds it.
            let store: Keystore
            if kind == .tpmKey {
                guard let tpm = options.tpm else { throw AgentError.seedRefused("this agent was started without a TPM") }
                store = try Keystore(directory: keystore, tpm: tpm)
            } else {
                store = try Keystore(directory: keystore)
            }
            let key = try store.vaults.key(named: name)
            guard key.key.agentAddress == address, (key.pin == .token) == (kind == .token) else {
                let what = kind == .token ? "the token key of" : "the TPM key"
                throw AgentError.seedRefused("\(name.rawValue) in \(TerminalText.escaped(keystore, limit: 200)) is not \(what) \(TerminalText.escaped(address, limit: kind == .token ? 60 : 160))")
            }
            try key.checkReadyForPIN(in: store)
            hold(try key.open(pin: kind == .token ? PIN(token: secret) : PIN(secret), in: store), keystore: keystore, ttl: ttl)
        case .seed:
            let keyPair = try KeyPair(seed: secret)
            guard keyPair.publicKey.accountID == address else {
                throw AgentError.seedRefused("the seed is not the key of \(TerminalText.escaped(address, limit: 60))")
            }
            add(Signer(name: name, keyPair: keyPair, isFromPhrase: nil), keystore: keystore, ttl: ttl)
        }
    }

    /// The same for any key this process opened: a seed, or a token's key through its logged-in session.
    func hold(_ signer: any AuthorizationSigning, keystore: String, ttl: Int?) {
        let now = options.now()
        let limit = [ttl, options.ttl].compactMap { $0 }.min()
        state.withLock { state in
            state.keys.removeAll { $0.signer.signerKey == signer.signerKey }
            state.keys.append(HeldKey(name: signer.name, keystore: keystore, signer: signer, address: signer.signerKey.agentAddress,
                                expiresAt: limit.map { now + Double($0) }, lastUsed: now))
        }
        wake()
    }

    /// What `listKeys` reports of one key: the client's type, which reads the answer.
    package typealias KeyInfo = AgentClient.KeyInfo

    package func heldKeys() -> [KeyInfo] {
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
    package func lockAll() -> Int {
        state.withLock { state in
            defer {
                state.keys.removeAll()
                state.withdrawQuestionsWithoutKeys()
            }
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
            state.withdrawQuestionsWithoutKeys()
            return before - state.keys.count
        }
    }

    /// Drops the keys whose time is up, and says when the next one is due to go, so that the accept loop wakes
    /// for it.
    func expireKeys() -> Double? {
        let now = options.now()
        return state.withLock { state in
            state.dropExpired(now, idle: options.idle)
            return state.keys.compactMap { $0.deadline(idle: options.idle) }.min()
        }
    }

    /// The key a request names (by `address`), or the only one held; marked used when it is to sign (`idle` is
    /// time unused for signing: asking for an address does not keep a key).
    func key(for address: String?, signing: Bool) throws(AgentError) -> HeldKey {
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
}
