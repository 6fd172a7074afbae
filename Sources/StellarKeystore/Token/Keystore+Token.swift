import StellarKeys
import StellarTransactions

extension Keystore {
    // MARK: Keys in PKCS#11 tokens

    /// A session logged in to one token, to make or choose the key a new identity will be (`signUp` with
    /// `NewKey.inToken`, which alone records it: a key made here for no vault is destroyed there).
    struct TokenLogin: Sendable {
        let module: String
        let token: PKCS11Token
        let session: PKCS11Session

        /// A new Ed25519 key pair made inside the token: its private key sensitive, never extractable, kept on
        /// the token. `label` must not name a key there already.
        func generateKey(label: String) throws -> PKCS11KeyReference {
            // Checked before the key is made: a label the vault cannot record would leave a key in the token for
            // no identity.
            guard label.utf8.count <= PKCS11KeyReference.longestKeyLabel else {
                throw TokenError.invalidKeyName(reason: "a label is at most \(PKCS11KeyReference.longestKeyLabel) bytes")
            }
            let made = try session.generateEd25519Key(label: label, id: Sodium.randomBytes(count: 16))
            do {
                return try reference(to: made)
            } catch {
                session.destroyKeyPair(id: made.id)
                throw error
            }
        }

        /// The Ed25519 key already in the token that `label` or `id` (or both) name: exactly one must match.
        func existingKey(label: String?, id: [UInt8]?) throws -> PKCS11KeyReference {
            let found = try session.keys(label: label, id: id)
            guard let key = found.first else { throw TokenError.noKeyNamed(label: label, id: id) }
            guard found.count == 1 else { throw TokenError.severalKeys(label: label, id: id, count: found.count) }
            // A key the token would let out is not a key that never leaves hardware.
            guard key.sensitive && !key.extractable else { throw TokenError.keyCanLeave(id: key.id) }
            return try reference(to: key)
        }

        private func reference(to key: PKCS11KeyInfo) throws -> PKCS11KeyReference {
            do {
                return try PKCS11KeyReference(module: module, tokenSerial: token.serial, tokenLabel: token.label, keyID: key.id,
                                              keyLabel: key.label, publicKey: key.publicKey)
            } catch let invalid as PKCS11KeyReference.Invalid {
                throw TokenError.unusableKey(reason: invalid.reason)
            }
        }
    }

    /// Logs in to the token of module `file` named `label`, or its only token that signs Ed25519, with the
    /// token's user PIN, asked only once the token is found, signs Ed25519 and is not locked. The identity records
    /// the file loaded, every link followed, not the path given: a link that is changed later changes nothing.
    func logInToToken(_ file: ModuleFile, label: String?, pin: () throws -> PIN) throws -> TokenLogin {
        let module = try PKCS11Module(file)
        let tokens = try module.tokens().filter(\.isInitialized)
        let named = label.map { label in tokens.filter { $0.label == label } } ?? tokens
        guard !named.isEmpty else { throw TokenError.noTokenLabelled(label) }
        let usable = named.filter(\.supportsEdDSA)
        guard let token = usable.first else { throw TokenError.noEdDSA(token: named[0].label) }
        guard usable.count == 1 else { throw TokenError.severalTokens(labels: usable.map(\.label)) }
        if token.pinLocked { throw TokenError.pinLocked(token: token.label) }
        let session = try PKCS11Session(module: module, token: token.serial, label: token.label)
        try session.login(pin: try pin().bytes)
        return TokenLogin(module: module.path, token: token, session: session)
    }

    /// The key a new identity in a token is.
    public enum TokenKeyChoice: Sendable, Equatable {
        /// A new Ed25519 key pair, made in the token with this label.
        case new(label: String)
        /// The Ed25519 key already in the token that this label or ID (or both) name; never destroyed here.
        case existing(label: String?, id: [UInt8]?)
    }

    /// `signUp` with `NewKey.inToken`: identity `name` made a key in the token of module `path` named `label` (or
    /// the module's only token that signs Ed25519), a new key pair or one already there. What can be checked
    /// comes before any key is made:
    /// the name is free (unless `replacing`), the vaults' directory takes a file, and the module's path (every
    /// link followed) is one a vault can record; the name is then held against any other sign-up of it until
    /// its vault is written. A key pair made here that no vault records, whatever fails after it, is destroyed.
    func signUpInToken(name: IdentityName, module path: String, token label: String?, key choice: TokenKeyChoice,
                       replacing: Bool, pin: () throws -> PIN) throws -> Created {
        if !replacing && vaults.exists(name) { throw VaultError.alreadyExists(name: name.rawValue) }
        if case .new(let keyLabel) = choice, keyLabel.utf8.count > PKCS11KeyReference.longestKeyLabel {
            throw TokenError.invalidKeyName(reason: "a label is at most \(PKCS11KeyReference.longestKeyLabel) bytes")
        }
        let file = try ModuleFile(path: path)
        if let unusable = PKCS11KeyReference.whyNotRecordable(module: file.path) {
            throw TokenError.moduleNotLoadable(path: path, reason: unusable)
        }
        let reservation = try vaults.reserve(name, replacing: replacing)
        defer { withExtendedLifetime(reservation) {} }
        let login = try logInToToken(file, label: label, pin: pin)
        let key: PKCS11KeyReference
        switch choice {
        case .existing(let keyLabel, let id):
            key = try login.existingKey(label: keyLabel, id: id)
        case .new(let keyLabel):
            key = try login.generateKey(label: keyLabel)
        }
        do {
            let created = try record(key, as: name, replacing: replacing)
            if case .new = choice { return created }
            return created.with(token: key, foundInToken: true)
        } catch {
            // Destroyed only while no vault names it: a step after the vault was written (clearing its wrong-PIN
            // count) can fail too, and the identity written then needs its key.
            if case .new = choice, (try? vaults.vault(named: name))?.token?.keyID != key.keyID {
                login.session.destroyKeyPair(id: key.keyID)
            }
            throw error
        }
    }

    /// Records a new identity `name` that is `key` in its token: a version 4 vault, holding no secret. An
    /// existing identity is refused unless `replacing`, which keeps its vault as a backup and ends its sessions.
    func record(_ key: PKCS11KeyReference, as name: IdentityName, replacing: Bool = false) throws -> Created {
        let backup = try vaults.create(Vault.naming(key, name: name), replacing: replacing)
        warnAboutPermissions(name)
        return Created(name: name, key: .ed25519(key.publicKey), path: vaults.path(of: name), backup: backup, token: key)
    }
}
