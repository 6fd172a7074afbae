import StellarKeys
import StellarTransactions
extension Keystore {
    // MARK: Sessions

    /// Opens identity `name` with its PIN (counted, as every PIN tried here is) and starts a session holding its
    /// key, lasting `ttl` (1 s to 24 h). A session holds a sealed seed: a key in a token or in the TPM, which has
    /// none to hold, is refused before `pin` is asked, saying why, as is a PIN that could not be used (a wait
    /// after wrong PINs, a TPM lockout).
    public func startSession(name: IdentityName, ttl: Duration, pin: () throws -> PIN) throws -> SessionToken {
        try startSession(signIn(name: name, for: .session, pin: pin), ttl: ttl)
    }

    /// Starts a session for `signer`, lasting `ttl` (1 s to 24 h).
    package func startSession(_ signer: Signer, ttl: Duration) throws -> SessionToken {
        try sessions.open(signer.keyPair, for: identity(signer.name), ttl: Int(ttl.components.seconds))
    }

    /// The signer of a live session; with `name`, the session must be that identity's.
    ///
    /// The session must still match its vault: a session opened before the identity was replaced holds the old key,
    /// and signing with it while `address` shows the new one would sign for an account the user no longer means.
    func signer(session token: SessionToken, name: IdentityName? = nil) throws -> Signer {
        let session = try sessions.session(for: token, identity: name.map(identity))
        let vault = try VaultStore(directory: session.identity.keystore).vault(named: session.identity.name)
        guard vault.publicKey == session.keyPair.publicKey else { throw SessionError.vaultChanged(name: vault.name.rawValue) }
        return Signer(name: session.identity.name, keyPair: session.keyPair, isFromPhrase: nil)
    }

    /// Ends a session; returns whether there was one.
    @discardableResult
    public func endSession(_ token: SessionToken) throws -> Bool { try sessions.close(token) }

    /// Ends every session of an identity; returns how many there were.
    @discardableResult
    public func endSessions(of name: IdentityName) throws -> Int { try sessions.closeAll(for: identity(name)) }

    /// The open sessions: with `token`, that session alone, checked in full (it must open,
    /// and belong to `name` when one is given); without, every unexpired session of `name`. `SessionError.none`
    /// when there is none.
    public func openSessions(token: SessionToken?, name: IdentityName?) throws -> [SessionStore.Summary] {
        var open = sessions.summaries()
        if let token {
            let signer = try signer(session: token, name: name)
            open = open.filter { $0.id == Hex.string(token.id) && $0.publicKey == signer.address }
        } else {
            let wanted = identity(name ?? .default)
            open = open.filter { $0.name == wanted.name.rawValue && $0.keystore == wanted.keystore }
        }
        guard !open.isEmpty else { throw SessionError.none(name: (name ?? .default).rawValue) }
        return open
    }
}
