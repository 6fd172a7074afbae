#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StellarKeys
import StellarTransactions

/// One keystore directory and every flow an app or the command line runs on it: sign up, sign in, change the
/// PIN, sessions, recovery phrases, export, removal. Each method is one use case, and every rule of it lives here
/// (which key a signing command uses, when a phrase is shown, what a replaced vault leaves behind), so that an app
/// and `keystore` behave alike and a library test pins each rule.
///
/// ```swift
/// let keystore = try Keystore(directory: path)
/// let created = try keystore.signUp(name: "alice", pin: PIN("493817"), kdf: .interactive)
/// let signer = try keystore.signIn(name: "alice", pin: PIN("493817"))
/// let signature = signer.signMessage(Array("hi".utf8))
/// ```
public struct Keystore: Sendable {
    /// The vault files.
    public let vaults: VaultStore
    /// The signed-in sessions of this user, ended by this keystore when a key or PIN changes.
    public let sessions: SessionStore
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

    /// An identity as `signUp`, `recover` and `derive` leave it.
    public struct Created: Sendable {
        public let name: IdentityName
        public let address: String
        public let path: String
        /// The vault it replaced, kept as a backup (`replacing`).
        public let backup: String?
        /// A new recovery phrase (`signUp(…, phraseWords:)`): returned only once the vault is safely written, so
        /// that a failure can never leave a person with a phrase for no key.
        public let phrase: Mnemonic?
    }

    /// Creates an identity under `pin` (checked for strength): a new random key, or `importing` an existing one.
    /// An existing identity is refused unless `replacing`, which keeps its vault as a backup and ends its sessions.
    /// `boundToTPM`: the vault opens only with this machine's TPM as well (`Keystore.tpmBindingNotice`).
    public func signUp(name: IdentityName, pin: PIN, kdf: KDFParameters.Level = .moderate, importing keyPair: KeyPair? = nil,
                       replacing: Bool = false, boundToTPM: Bool = false) throws -> Created {
        try refuseExisting(name, replacing: replacing)
        try pin.checkStrength()
        return try create(keyPair ?? .random(), root: nil, name: name, pin: pin, kdf: kdf.parameters, replacing: replacing,
                          boundToTPM: boundToTPM)
    }

    /// Creates an identity from a new SEP-5 recovery phrase of `phraseWords` words, at account `account`.
    public func signUp(name: IdentityName, pin: PIN, kdf: KDFParameters.Level = .moderate, phraseWords: Int,
                       account: UInt32 = 0, replacing: Bool = false, boundToTPM: Bool = false) throws -> Created {
        try refuseExisting(name, replacing: replacing)
        try pin.checkStrength()
        let phrase = try Mnemonic.generate(wordCount: phraseWords)
        let root = AccountRoot(bip39Seed: try phrase.seed())
        let created = try create(root.keyPair(account: account), root: (root, account), name: name, pin: pin,
                                 kdf: kdf.parameters, replacing: replacing, boundToTPM: boundToTPM)
        return Created(name: created.name, address: created.address, path: created.path, backup: created.backup, phrase: phrase)
    }

    /// Restores an identity from a recovery phrase (and BIP39 passphrase), at account `account`, under `pin`.
    public func recover(name: IdentityName, phrase: Mnemonic, passphrase: SecureBytes? = nil, account: UInt32 = 0,
                        pin: PIN, kdf: KDFParameters.Level = .moderate, replacing: Bool = false,
                        boundToTPM: Bool = false) throws -> Created {
        try refuseExisting(name, replacing: replacing)
        try pin.checkStrength()
        let root = AccountRoot(bip39Seed: try phrase.seed(passphrase: passphrase))
        return try create(root.keyPair(account: account), root: (root, account), name: name, pin: pin,
                          kdf: kdf.parameters, replacing: replacing, boundToTPM: boundToTPM)
    }

    /// Refuses an existing identity before anyone is asked for a PIN or a phrase it could not be used for.
    public func refuseExisting(_ name: IdentityName, replacing: Bool) throws {
        if !replacing && vaults.exists(name) { throw VaultError.alreadyExists(name: name.rawValue) }
    }

    /// `renewing`: the binding a new vault inherits (`derive`), whose primary key must still be the TPM's and
    /// whose consent to an open lockout, if it had one, stands.
    func create(_ keyPair: KeyPair, root: (root: AccountRoot, account: UInt32)?, name: IdentityName, pin: PIN,
                kdf: KDFParameters, replacing: Bool, boundToTPM: Bool = false, renewing: TPMSealedObject? = nil) throws -> Created {
        let vault = try Vault.seal(keyPair, root: root, name: name, pin: pin, kdf: kdf, tpm: boundToTPM ? tpm() : nil,
                                   renewing: renewing)
        let backup = try vaults.create(vault, replacing: replacing)
        warnAboutPermissions(name)
        return Created(name: name, address: keyPair.publicKey.accountID, path: vaults.path(of: name), backup: backup, phrase: nil)
    }

    /// Account `account` of an identity made from a recovery phrase, after its PIN; with `addingAs`, also kept as
    /// a new identity under the same PIN and cost.
    public func derive(name: IdentityName, account: UInt32, addingAs newName: IdentityName? = nil,
                       pin: () throws -> PIN) throws -> Created {
        if let newName, vaults.exists(newName) { throw VaultError.alreadyExists(name: newName.rawValue, canReplace: false) }
        let vault = try vaultReadyForPIN(name)
        guard vault.account != nil else { throw KeystoreUseError.notFromPhrase(name.rawValue) }
        let pin = try pin()
        guard let root = try vaults.unlockWithRoot(name, pin: pin).root else { throw KeystoreUseError.notFromPhrase(name.rawValue) }
        let keyPair = try root.keyPair(account: account)
        guard let newName else {
            return Created(name: name, address: keyPair.publicKey.accountID, path: vaults.path(of: name), backup: nil, phrase: nil)
        }
        do {
            // A key from a TPM-bound phrase stays bound: deriving must not make an easier copy of it.
            return try create(keyPair, root: (root, account), name: newName, pin: pin, kdf: vault.kdf, replacing: false,
                              boundToTPM: vault.isTPMBound, renewing: vault.tpmObject)
        } catch VaultError.alreadyExists(let existing, _) {
            throw VaultError.alreadyExists(name: existing, canReplace: false)  // created meanwhile
        }
    }

    /// One identity as a listing shows it, without a PIN.
    public struct Entry: Sendable {
        public let name: IdentityName
        /// Nil when the vault cannot be read (`problem` says why) or only backups are left.
        public let address: String?
        public let problem: String?
        /// Whether the vault needs this machine's TPM as well as the PIN (format version 3).
        public let isTPMBound: Bool
        /// Old vaults kept by `--replace`: each an old key under an old PIN.
        public let backups: [Backup]

        public struct Backup: Sendable {
            public let fileName: String
            public let address: String?
            public let problem: String?
        }
    }

    /// Every identity in the keystore, damaged vaults included with their problem, and their backups.
    public func identities() throws -> [Entry] {
        warnAboutPermissions(nil)
        let backups = try vaults.backups()
        let names = Set(try vaults.names()).union(backups.map(\.name)).sorted()
        return names.map { name in
            var address: String?
            var problem: String?
            var isTPMBound = false
            do {
                let vault = try vaults.vault(named: name)
                address = vault.publicKey.accountID
                isTPMBound = vault.isTPMBound
            } catch VaultError.notFound {
                problem = "removed; only its backups remain"
            } catch {
                problem = Self.message(of: error)
            }
            let own = backups.filter { $0.name == name }.map { backup in
                do {
                    return Entry.Backup(fileName: backup.fileName, address: try vaults.vault(in: backup).publicKey.accountID, problem: nil)
                } catch {
                    return Entry.Backup(fileName: backup.fileName, address: nil, problem: Self.message(of: error))
                }
            }
            return Entry(name: name, address: address, problem: problem, isTPMBound: isTPMBound, backups: own)
        }
    }

    /// The address of an identity, without a PIN.
    public func address(of name: IdentityName) throws -> String {
        try vaults.vault(named: name).publicKey.accountID
    }

    /// Deletes an identity after its PIN (nil: without one, an explicit choice) and ends its sessions; see
    /// `VaultStore.remove` for its backups.
    public func remove(name: IdentityName, pin: (() throws -> PIN)?, includingBackups: Bool = false) throws -> VaultStore.Removal {
        guard let pin else { return try vaults.remove(name, pin: nil, includingBackups: includingBackups) }
        _ = try vaultReadyForPIN(name)
        return try vaults.remove(name, pin: pin(), includingBackups: includingBackups)
    }

    // MARK: Signing in

    /// Opens an identity with its PIN. `pin` is asked only once the vault is known to be readable and no wait
    /// after wrong PINs is running, so that nobody types a PIN that could not be used.
    public func signIn(name: IdentityName, pin: () throws -> PIN) throws -> Signer {
        _ = try vaultReadyForPIN(name)
        let (keyPair, root) = try vaults.unlockWithRoot(name, pin: pin())
        return Signer(name: name, keyPair: keyPair, isFromPhrase: root != nil)
    }

    public func signIn(name: IdentityName, pin: PIN) throws -> Signer {
        try signIn(name: name) { pin }
    }

    /// `signIn` off the caller's actor: Argon2id takes a noticeable fraction of a second, which an app's main
    /// thread must not wait for.
    @concurrent
    public func signIn(name: IdentityName, pin: PIN) async throws -> Signer {
        try signIn(name: name) { pin }
    }

    /// `signUp` off the caller's actor, for the same reason.
    @concurrent
    public func signUp(name: IdentityName, pin: PIN, kdf: KDFParameters.Level = .moderate, replacing: Bool = false) async throws -> Created {
        try signUp(name: name, pin: pin, kdf: kdf, importing: nil, replacing: replacing)
    }

    /// Re-encrypts an identity under a new PIN (checked for strength) and ends its sessions. `current` is asked
    /// when the identity is ready. With `checkingCurrentFirst` (a person choosing the new PIN), `new` is asked
    /// only after `current` proved right, so that whoever mistyped the current PIN hears so before choosing a new
    /// one; a script saves that second key derivation. A PIN change that loses a race with another is not counted
    /// as a wrong PIN (`VaultError.changedWhileWaiting`).
    @discardableResult
    public func changePIN(name: IdentityName, from current: () throws -> PIN, to new: () throws -> PIN,
                          kdf: KDFParameters.Level? = nil, checkingCurrentFirst: Bool = true) throws -> Vault {
        let seen = try vaultReadyForPIN(name)
        let currentPIN = try current()
        if checkingCurrentFirst { _ = try vaults.unlock(name, pin: currentPIN) }
        let newPIN = try new()
        try newPIN.checkStrength()
        return try vaults.changePIN(name, from: currentPIN, to: newPIN, kdf: kdf?.parameters, expecting: seen)
    }

    @discardableResult
    public func changePIN(name: IdentityName, from current: PIN, to new: PIN, kdf: KDFParameters.Level? = nil) throws -> Vault {
        try changePIN(name: name, from: { current }, to: { new }, kdf: kdf, checkingCurrentFirst: false)
    }

    // MARK: The TPM

    /// What a person must hear before choosing a TPM-bound vault, and again when it is made.
    public static let tpmBindingNotice = """
        this vault can only ever be opened on this machine, with its TPM: if the machine dies, is replaced or its \
        TPM is cleared, the key is gone unless you have its recovery phrase or an offline export. With the TPM \
        limiting guesses, the lightest Argon2id cost is enough; it is now defence in depth.
        """

    /// Binds an identity's vault to this machine's TPM, under the same PIN and cost (a fresh salt, nonce and
    /// TPM secret), atomically; its sessions end. Refused when it is bound already.
    @discardableResult
    public func bindToTPM(name: IdentityName, pin: () throws -> PIN) throws -> Vault {
        let seen = try vaultReadyForPIN(name)
        if seen.isTPMBound { throw KeystoreUseError.alreadyBound(name.rawValue) }
        try checkTPMReadyToBind()
        let current = try pin()
        return try vaults.changePIN(name, from: current, to: current, boundToTPM: true, expecting: seen)
    }

    /// Converts a TPM-bound vault back to one that the PIN alone opens (to move it to another machine), after the
    /// PIN, which the TPM checks; its sessions end.
    @discardableResult
    public func unbindFromTPM(name: IdentityName, pin: () throws -> PIN) throws -> Vault {
        let seen = try vaultReadyForPIN(name)
        if !seen.isTPMBound { throw KeystoreUseError.notBound(name.rawValue) }
        let current = try pin()
        return try vaults.changePIN(name, from: current, to: current, boundToTPM: false, expecting: seen)
    }

    /// Refuses, before any PIN is asked, a binding that cannot happen: no TPM, no permission on it, or an owner
    /// hierarchy with a password; and one whose guess limit would not hold, on a TPM whose lockout authorization
    /// is empty (`TPMError.lockoutOpen`), unless the keystore's `TPM` allows it. Returns the TPM's state, so that
    /// an allowed open lockout can be said.
    @discardableResult
    public func checkTPMReadyToBind() throws -> TPMDictionaryAttackState {
        try tpm().checkReadyToSeal()
        return try tpm().dictionaryAttackState()
    }

    /// The keystore's TPM, where it has one.
    func tpm() throws -> TPMSealer {
        guard let tpm = vaults.tpm else { throw TPMError.notSupported }
        return tpm
    }

    /// The TPM's dictionary-attack state: how many wrong PINs it has counted and allows, and whether its lockout
    /// authorization is set.
    public func tpmStatus() throws -> TPMDictionaryAttackState {
        try tpm().dictionaryAttackState()
    }

    /// Gives the TPM a random lockout authorization, so that only whoever holds the code can reset its wrong-PIN
    /// counter, and hands the code to `deliver` (to show a person), once: it is stored nowhere. If `deliver`
    /// throws, the authorization is set back to empty with that same code and the error rethrown, so that the
    /// TPM never keeps a code nobody saw. False, with nothing changed, when the lockout authorization is set
    /// already. This changes the TPM for every program on the machine.
    public func protectTPMLockout(deliver: (LockoutCode) throws -> Void) throws -> Bool {
        guard let code = try tpm().protectLockout() else { return false }
        do {
            try deliver(code)
        } catch {
            do {
                try tpm().unprotectLockout(code: code)
            } catch let undo as KeystoreError {
                throw TPMError.lockoutCodeLost(detail: undo.message)
            }
            throw error
        }
        return true
    }

    /// How `resetTPMLockout` ended the lockout.
    public enum LockoutReset: Sendable, Equatable {
        /// With the lockout code.
        case withCode
        /// Without one: the lockout authorization is empty, so no code was needed (nor asked), as for anybody.
        case withoutCode
    }

    /// Ends the TPM's dictionary-attack lockout and resets its wrong-PIN counter. `code` is asked only when the
    /// TPM's lockout authorization is set; a malformed code is refused before the TPM sees it, and a wrong one is
    /// counted by the TPM against its lockout hierarchy (`TPMError.wrongLockoutCode`).
    public func resetTPMLockout(code: () throws -> LockoutCode) throws -> LockoutReset {
        let tpm = try tpm()
        let state = try tpm.dictionaryAttackState()
        guard state.lockoutAuthSet else {
            try tpm.resetLockout(code: nil)
            return .withoutCode
        }
        try tpm.resetLockout(code: code())
        return .withCode
    }

    // MARK: By name as text, as an app holds it

    /// `signUp` for a name as typed; an invalid name is `VaultError.invalidName`.
    public func signUp(name: String, pin: PIN, kdf: KDFParameters.Level = .moderate, replacing: Bool = false,
                       boundToTPM: Bool = false) throws -> Created {
        try signUp(name: IdentityName(name), pin: pin, kdf: kdf, importing: nil, replacing: replacing, boundToTPM: boundToTPM)
    }

    @concurrent
    public func signUp(name: String, pin: PIN, kdf: KDFParameters.Level = .moderate, replacing: Bool = false,
                       boundToTPM: Bool = false) async throws -> Created {
        try signUp(name: IdentityName(name), pin: pin, kdf: kdf, importing: nil, replacing: replacing, boundToTPM: boundToTPM)
    }

    public func signUp(name: String, pin: PIN, kdf: KDFParameters.Level = .moderate, phraseWords: Int, account: UInt32 = 0,
                       replacing: Bool = false, boundToTPM: Bool = false) throws -> Created {
        try signUp(name: IdentityName(name), pin: pin, kdf: kdf, phraseWords: phraseWords, account: account, replacing: replacing,
                   boundToTPM: boundToTPM)
    }

    public func signIn(name: String, pin: PIN) throws -> Signer {
        try signIn(name: IdentityName(name), pin: pin)
    }

    @concurrent
    public func signIn(name: String, pin: PIN) async throws -> Signer {
        try signIn(name: IdentityName(name)) { pin }
    }

    @discardableResult
    public func changePIN(name: String, from current: PIN, to new: PIN, kdf: KDFParameters.Level? = nil) throws -> Vault {
        try changePIN(name: IdentityName(name), from: current, to: new, kdf: kdf)
    }

    // MARK: Internals

    func identity(_ name: IdentityName) -> SessionStore.Owner {
        SessionStore.Owner(keystore: vaults.directory, name: name)
    }

    /// The vault's header, the wait still running after wrong PINs, and for a TPM-bound vault the TPM (there, and
    /// not in lockout): all checked before anyone is asked for a PIN that could not be used.
    @discardableResult
    func vaultReadyForPIN(_ name: IdentityName) throws -> Vault {
        let vault = try vaults.vault(named: name)
        if let wait = vaults.secondsUntilNextAttempt(name) { throw VaultError.throttled(secondsLeft: wait) }
        if vault.isTPMBound {
            let tpm = try tpm()
            let state = try tpm.dictionaryAttackState()
            if state.inLockout { throw TPMError.lockedOut(state: state, tcti: tpm.name) }
        }
        warnAboutPermissions(name)
        return vault
    }

    /// Warns about a keystore that others can read. Warnings only: refusing would lock a person out of their own
    /// key over a chmod, and the seed inside stays encrypted.
    private func warnAboutPermissions(_ name: IdentityName?) {
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

    public var message: String {
        switch self {
        case .notFromPhrase(let name):
            "Identity '\(name)' was not made from a recovery phrase, so it has no other accounts."
        case .alreadyBound(let name):
            "Identity '\(name)' is already bound to this machine's TPM; nothing was changed."
        case .notBound(let name):
            "Identity '\(name)' is not bound to a TPM; nothing was changed."
        }
    }

}
