import FoundationEssentials
import StellarKeys
import StellarTransactions

/// One keystore directory and every flow an app or the command line runs on it: sign up, sign in, change the
/// PIN, sessions, recovery phrases, signing (review, then approve), export, removal. Each method is one use case,
/// and every rule of it lives here (which key signs, when a phrase is shown, what a replaced vault leaves
/// behind), so that every app behaves alike and a library test pins each rule.
///
/// ```swift
/// let keystore = try Keystore(directory: path)
/// let created = try await keystore.signUp(name: "alice", pin: PIN("493817"), kdf: .interactive)
/// let review = try keystore.review(.message(Array("hi".utf8)), as: "alice")
/// show(review.summary.text)
/// let signature = try await review.approve(pin: PIN("493817"))
/// ```
public struct Keystore: Sendable {
    /// The vault files. Not public: every use of them goes through a use case here, so that an app cannot skip
    /// a rule (the wait after wrong PINs, a review before a signature).
    package let vaults: VaultStore
    /// The signed-in sessions of this user, ended by this keystore when a key or PIN changes.
    package let sessions: SessionStore
    /// Where warnings go (a directory others can read, a replaced vault kept as a backup): they never stop a use
    /// case, but a person should see them.
    let warn: @Sendable (String) -> Void

    /// The keystore in `directory`, with sessions in `sessionDirectory` (default: as `SessionStore` finds it in
    /// `environment`) and TPM-bound vaults opened with `tpm` (StellarKeystoreTPM's `TPM`; without one, such
    /// vaults are `TPMError.notSupported` and the others work as ever).
    public init(directory: String, sessionDirectory: String? = nil, environment: [String: String] = [:], tpm: TPMSealer? = nil,
                warnings: @escaping @Sendable (String) -> Void = { _ in }) throws {
        sessions = SessionStore(directory: sessionDirectory ?? SessionStore.defaultDirectory(environment: environment))
        vaults = try VaultStore(directory: directory, sessions: sessions, tpm: tpm)
        warn = warnings
    }

    /// The keystore the command line uses: `$KEYSTORE_HOME`, else `$XDG_DATA_HOME/keystore`, else
    /// `~/.local/share/keystore`, with sessions in `$XDG_RUNTIME_DIR/keystore` or its fallbacks.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, tpm: TPMSealer? = nil,
                warnings: @escaping @Sendable (String) -> Void = { _ in }) throws {
        try self.init(directory: VaultStore.defaultDirectory(environment: environment), environment: environment,
                      tpm: tpm, warnings: warnings)
    }

    public var directory: String { vaults.directory }

    // MARK: Identities

    /// One identity as a listing shows it, without a PIN.
    public struct Entry: Sendable {
        public let name: IdentityName
        /// Nil when the vault cannot be read (`problem` says why) or only backups are left.
        public let address: String?
        public let problem: String?
        /// Whether the vault needs this machine's TPM as well as the PIN (format version 3).
        public let isTPMBound: Bool
        /// The token that holds the key, for a key in a PKCS#11 token (format version 4).
        public let token: PKCS11KeyReference?
        /// The public key of a P-256 key in this machine's TPM (format version 5), which has no address.
        public let p256PublicKey: P256PublicKey?
        /// Old vaults kept when the identity was replaced: each an old key under an old PIN.
        public let backups: [Backup]
        /// Whether a backup (`backUp`) made since its key last changed holds it (for a key that never leaves its
        /// hardware, its public part and what to do instead), as the backup record beside the vaults says.
        public let isInBackup: Bool

        public struct Backup: Sendable {
            public let fileName: String
            public let address: String?
            public let problem: String?
        }
    }

    /// Every identity in the keystore, damaged vaults included with their problem, and their backups.
    public func identities() throws -> [Entry] {
        warnAboutPermissions(nil)
        let backups = try vaults.backups.list()
        let names = Set(try vaults.names()).union(backups.map(\.name)).sorted()
        let record = BackupRecord.read(in: vaults)
        return names.map { name in
            var address: String?
            var problem: String?
            var isTPMBound = false
            var token: PKCS11KeyReference?
            var p256PublicKey: P256PublicKey?
            var isInBackup = false
            do {
                let key = try vaults.key(named: name)
                isInBackup = BackupRecord.isBackedUp(name, key: key.key, in: record)
                switch key.key {
                case .ed25519(let publicKey): address = publicKey.accountID
                case .p256(let publicKey): p256PublicKey = publicKey
                }
                isTPMBound = key.isTPMBound
                token = key.token
            } catch VaultError.notFound {
                problem = "removed; only its backups remain"
            } catch {
                problem = Self.message(of: error)
            }
            let own = backups.filter { $0.name == name }.map { backup in
                do {
                    return Entry.Backup(fileName: backup.fileName, address: try vaults.backups.vault(in: backup).publicKey.accountID, problem: nil)
                } catch {
                    return Entry.Backup(fileName: backup.fileName, address: nil, problem: Self.message(of: error))
                }
            }
            return Entry(name: name, address: address, problem: problem, isTPMBound: isTPMBound, token: token, p256PublicKey: p256PublicKey, backups: own,
                         isInBackup: isInBackup)
        }
    }

    /// The address of an identity, without a PIN.
    public func address(of name: IdentityName) throws -> String {
        try vaults.key(named: name).accountKey().accountID
    }

    /// Deletes an identity after its PIN (nil: without one, an explicit choice) and ends its sessions; see
    /// `VaultStore.remove` for its backups. A token's key needs no PIN to forget: it stays in the token.
    public func remove(name: IdentityName, pin: (() throws -> PIN)?, includingBackups: Bool = false) throws -> VaultStore.Removal {
        guard let pin else { return try vaults.remove(name, pin: nil, includingBackups: includingBackups) }
        // What the PIN proves (and whether one is asked) is the key's kind's to say.
        return try vaults.key(named: name).remove(pin: pin, includingBackups: includingBackups, in: self)
    }

    // MARK: Internals

    func identity(_ name: IdentityName) -> SessionStore.Owner {
        SessionStore.Owner(keystore: vaults.directory, name: name)
    }

    /// The sealed vault of identity `name`, for `use` (what its key's kind cannot do is refused first), ready for
    /// its PIN (`StoredKey.checkReadyForPIN`): all read from one reading of the file, before any PIN is asked.
    func vaultReadyForPIN(_ name: IdentityName, for use: KeyUse) throws -> Vault {
        let key = try vaults.key(named: name)
        let vault = try key.vault(for: use)
        try key.checkReadyForPIN(in: self)
        return vault
    }

    /// What every kind of key checks before its PIN is asked: no wait after wrong PINs still running, and where the
    /// key needs this machine's TPM, the TPM there and not in lockout. A kind adds its own (a token's presence).
    func checkReadyForPIN(_ name: IdentityName, needsTPM: Bool) throws {
        if let wait = vaults.attempts.secondsUntilNextAttempt(name) { throw VaultError.throttled(secondsLeft: wait) }
        if needsTPM {
            let tpm = try tpm()
            let state = try tpm.dictionaryAttackState()
            if state.inLockout { throw TPMError.lockedOut(state: state, tcti: tpm.name) }
        }
        warnAboutPermissions(name)
    }

    /// Warns about a keystore that others can read. Warnings only: refusing would lock a person out of their own
    /// key over a chmod, and the seed inside stays encrypted.
    func warnAboutPermissions(_ name: IdentityName?) {
        for warning in vaults.permissionWarnings(for: name) { warn(warning) }
    }

    /// An error as one line for a listing or an import report.
    static func message(of error: Error) -> String {
        if let error = error as? FileError { return error.reason }
        return (error as? KeystoreError)?.message ?? "\(error)"
    }
}

/// Use cases asked of an identity that cannot do them.
public enum KeystoreUseError: KeystoreError, Equatable {
    case notFromPhrase(String)
    case alreadyBound(String)
    case notBound(String)
    /// What was asked needs the key's secret or its PIN-derived encryption, and the key is in a token, which never
    /// lets it out and keeps its own PIN.
    case keyInToken(String, KeyUse)

    public var message: String {
        switch self {
        case .notFromPhrase(let name):
            "Identity '\(name)' was not made from a recovery phrase, so it has no other accounts."
        case .alreadyBound(let name):
            "Identity '\(name)' is already bound to this machine's TPM; nothing was changed."
        case .notBound(let name):
            "Identity '\(name)' is not bound to a TPM; nothing was changed."
        case .keyInToken(let name, let refusal):
            "Identity '\(name)' is a key in a PKCS#11 token, \(refusal.reason); nothing was changed."
        }
    }

}

/// What a use case needs of a stored key's vault (its seed, or the PIN's encryption of it), which a key in a token,
/// or in the TPM, refuses (`StoredKey.vault(for:)`); the reasons here are a token's.
public enum KeyUse: String, Sendable, Equatable {
    case export, changePIN, bindTPM, unbindTPM, open, reencrypt, session, derive, moveToTPM

    var reason: String {
        switch self {
        case .export: "which never lets its secret out, so it cannot be exported"
        case .changePIN: "whose PIN is the token's own: its tools change it"
        case .bindTPM, .unbindTPM: "which guards it with its own PIN and hardware: a TPM adds nothing to it"
        case .open: "which signs inside the token and never lets it out"
        case .reencrypt: "which is not encrypted here: there is no cost to raise"
        case .session: "which a session cannot hold: each signature asks the token's PIN, or the signing agent holds a session with the token"
        case .derive: "which holds one key and no recovery phrase to derive others from"
        case .moveToTPM: "which never lets it out, so it cannot move to another machine: add a second signer there instead"
        }
    }
}
