import FoundationEssentials
import StellarKeys
import StellarTransactions

/// The key a request will be signed with, found but not opened: whose it is, and where it comes from. Finding it
/// reads the vault's header (and a session, or asks an agent whether it holds it); it asks for nothing and signs
/// nothing. `review(_:)` makes a review of one request with it.
public struct SigningKey: Sendable {
    /// The identity whose key it is.
    public let name: IdentityName
    /// Its key: an Ed25519 key, or a P-256 key in the TPM, which signs only smart-account authorizations.
    public let key: AuthorizationSigner.Key
    /// The Ed25519 key; nil for a P-256 key.
    public var publicKey: PublicKey? { if case .ed25519(let key) = key { key } else { nil } }
    /// The Ed25519 key, for what only one signs (`ReviewError.onlySmartAccounts` for a P-256 key).
    public func ed25519Key() throws -> PublicKey {
        guard let publicKey else { throw ReviewError.onlySmartAccounts }
        return publicKey
    }
    /// The `G…` address of an Ed25519 key; "P-256 key" and the hex of a P-256 key.
    public var address: String { key.description }
    public var source: KeySource {
        switch holder {
        case .agent, .agentP256: .agent
        case .session: .session
        case .stored(let key): key.source
        case .held: .held
        }
    }

    enum Holder: Sendable {
        case agent(AgentSigner)
        case agentP256(AgentP256Signer)
        case session(SessionToken, SessionStore.Owner)
        /// The key as its vault keeps it, opened with its PIN on approval.
        case stored(any StoredKey)
        case held(any AuthorizationSigning)
    }

    let holder: Holder
    let keystore: Keystore?

    /// A key this process holds open already (a signing agent's): its reviews sign without asking for anything.
    package init(holding signer: any AuthorizationSigning) {
        name = signer.name
        key = signer.signerKey
        holder = .held(signer)
        keystore = nil
    }

    init(name: IdentityName, publicKey: PublicKey, holder: Holder, keystore: Keystore) {
        self.init(name: name, key: .ed25519(publicKey), holder: holder, keystore: keystore)
    }

    init(name: IdentityName, key: AuthorizationSigner.Key, holder: Holder, keystore: Keystore) {
        self.name = name
        self.key = key
        self.holder = holder
        self.keystore = keystore
    }

    /// `request` reviewed for this key: decoded and checked in full, its summary made. Touches no secret and asks
    /// for nothing; the review is approved once, or dropped.
    public func review<Signed>(_ request: SigningRequest<Signed>, now: Date = Date()) throws -> SigningReview<Signed> {
        try SigningReview(request, key: self, now: now)
    }

    /// `request` reviewed and approved at once, for a key held open here with nobody to show a summary to (a
    /// signing agent that asks nobody): every check of the review runs, and the summary is not made.
    package func approveUnshown<Signed>(_ request: SigningRequest<Signed>) throws -> Signed {
        try SigningReview(request, key: self, now: Date(), summarizing: false).approve { throw ReviewError.noPIN }.signed
    }
}

extension Keystore {
    /// The key that signs for identity `name` (nil: the session's identity when a session is given, else the
    /// default identity), found in this order:
    ///
    /// 1. the agent's, when `keys` names one and it holds the identity's current key (its address read from the
    ///    vault, so that a key replaced since it was added is never used). With a session and no `name`, the
    ///    identity is the session's, which only the session knows: the agent is not asked;
    /// 2. the session's, when `keys` names one and it is alive and its vault still holds its key;
    /// 3. the vault's, opened with its PIN on approval; the vault must be readable, no wait after wrong PINs
    ///    running, and a TPM it is bound to not in lockout, all before anyone is asked for a PIN.
    ///
    /// An agent or session that cannot sign (not running, not holding the key, expired, ended) falls through to
    /// the next with a warning saying why, only where the next can be had: otherwise its error stands, so that
    /// a script never waits on a PIN prompt nobody sees. An agent that runs but does not hold the identity's key
    /// falls through without a warning (most identities are never handed to it); where nothing follows, the
    /// error is `AgentError.identityNotHeld`, which names the identity.
    public func signingKey(as name: IdentityName? = nil, keys: KeySources = .vault) throws -> SigningKey {
        var read: (any StoredKey)?
        func stored(_ identity: IdentityName) throws -> any StoredKey {
            if let read, read.name == identity { return read }
            let fresh = try vaults.key(named: identity)
            read = fresh
            return fresh
        }
        // A P-256 key (in the TPM; it has no Stellar account): the agent's when it holds it, else opened with its
        // PIN. A session never holds one.
        if name != nil || keys.sessionToken == nil, let key = try? stored(name ?? .default), case .p256(let publicKey) = key.key {
            return try p256Key(key, publicKey, keys: keys)
        }
        // Any other error is reported below, where a session may still name another identity.
        if let agent = keys.agent, name != nil || keys.sessionToken == nil {
            let identity = name ?? .default
            let address = try stored(identity).accountKey().accountID
            do {
                let signer = try agent.signer(for: address, name: identity)
                return SigningKey(name: identity, publicKey: signer.publicKey, holder: .agent(signer), keystore: self)
            } catch AgentError.keyNotHeld {
                // An identity not handed to the agent is no fault: the session or the PIN signs without a word.
                guard keys.sessionToken != nil || keys.pinAvailable else {
                    throw AgentError.identityNotHeld(name: identity.rawValue, address: address)
                }
            } catch let error as AgentError {
                guard keys.sessionToken != nil || keys.pinAvailable else { throw error }
                warn("\(error.message) Using \(keys.sessionToken != nil ? "the session" : "the PIN") instead.")
            }
        }
        if let text = keys.sessionToken {
            do {
                let token = try SessionToken(text)
                // Its key pair is derived only at approval, which reads the session again.
                let session = try sessions.publicKey(of: token, identity: name.map(identity))
                // The session must still match its vault: one opened before the identity was replaced holds the
                // old key, and signing with it while the address shows the new one signs for an account the
                // person no longer means.
                let current = session.identity == identity(session.identity.name)
                    ? try stored(session.identity.name).accountKey()
                    : try VaultStore(directory: session.identity.keystore).key(named: session.identity.name).accountKey()
                guard current == session.publicKey else {
                    throw SessionError.vaultChanged(name: session.identity.name.rawValue)
                }
                return SigningKey(name: session.identity.name, publicKey: session.publicKey, holder: .session(token, session.identity), keystore: self)
            } catch let error as SessionError {
                guard keys.pinAvailable else { throw error }
                warn("\(error.message) Using the PIN instead.")
            }
        }
        let key = try stored(name ?? .default)
        try key.checkReadyForPIN(in: self)
        return SigningKey(name: key.name, key: key.key, holder: .stored(key), keystore: self)
    }

    /// A P-256 key: the agent's when it holds it, else opened with its PIN (a session never holds one), on the
    /// same rule as an Ed25519 key's agent.
    private func p256Key(_ key: any StoredKey, _ publicKey: P256PublicKey, keys: KeySources) throws -> SigningKey {
        if let agent = keys.agent {
            do {
                let signer = try agent.signer(for: publicKey, name: key.name)
                return SigningKey(name: key.name, key: key.key, holder: .agentP256(signer), keystore: self)
            } catch AgentError.keyNotHeld(let address) {
                guard keys.pinAvailable else { throw AgentError.identityNotHeld(name: key.name.rawValue, address: address) }
            } catch let error as AgentError {
                guard keys.pinAvailable else { throw error }
                warn("\(error.message) Using the PIN instead.")
            }
        }
        try key.checkReadyForPIN(in: self)
        return SigningKey(name: key.name, key: key.key, holder: .stored(key), keystore: self)
    }

    /// The key that signs a SEP-10 sign-in for identity `name`: `signingKey(as:keys:)`'s rule without the agent,
    /// whose protocol could show a sign-in only as the hash it signs. Its address is the account a challenge is
    /// asked for, before the challenge can be reviewed.
    public func signInKey(as name: IdentityName? = nil, keys: KeySources = .vault) throws -> SigningKey {
        try signingKey(as: name, keys: KeySources(agent: nil, sessionToken: keys.sessionToken, isPINAvailable: keys.isPINAvailable))
    }

    /// `request` reviewed for the key `signingKey(as:keys:)` finds (`signInKey(as:keys:)` for a sign-in): the one
    /// call an app makes before it shows `summary` and asks `approve`.
    public func review<Signed>(_ request: SigningRequest<Signed>, as name: IdentityName? = nil, keys: KeySources = .vault,
                               now: Date = Date()) throws -> SigningReview<Signed> {
        let key = request.content.isSignIn ? try signInKey(as: name, keys: keys) : try signingKey(as: name, keys: keys)
        return try key.review(request, now: now)
    }
}
