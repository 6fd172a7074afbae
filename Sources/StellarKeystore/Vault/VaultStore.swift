import FoundationEssentials
import Glibc
import StellarKeys
import StellarTransactions

/// The keystore directory: one `NAME.vault` file per identity, each written atomically, every change made
/// under an advisory lock so that concurrent commands cannot both create an identity or interleave PIN changes.
///
/// Layout (all files 0600, the directory 0700):
/// - `NAME.vault`: the vault (docs/FORMAT.md);
/// - `NAME.vault.backup-TIMESTAMP-XXXX`: a vault replaced by `create(_:replacing:)`;
/// - `.NAME.throttle`: consecutive wrong PINs;
/// - `.lock`: the lock; `FILE.tmp-` and 12 hex digits: a write in progress or interrupted, never read as a vault.
///
/// Every file is opened without following symbolic links and refused unless it is a regular file.
public struct VaultStore: Sendable {

    package let directory: String
    /// The signed-in sessions to end when an identity's key or PIN changes, or when it is removed, so that no
    /// session outlives the vault it was opened from.
    package let sessions: SessionStore?
    /// The TPM that TPM-bound vaults (format version 3) are opened and sealed with; nil where this program has
    /// none (an app without the StellarKeystoreTPM product), and such vaults are `TPMError.notSupported`.
    package let tpm: TPMSealer?
    let now: @Sendable () -> Date

    /// Refuses an empty `directory`: every path is built as `directory/…`, and an empty one would put vaults
    /// in the filesystem root.
    package init(directory: String, sessions: SessionStore? = nil, tpm: TPMSealer? = nil,
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        guard !directory.isEmpty else {
            throw VaultError.io(operation: "use", path: "the directory of the vaults", reason: "its name is empty; give a directory")
        }
        self.directory = directory
        self.sessions = sessions
        self.tpm = tpm
        self.now = now
    }

    /// `$KEYSTORE_HOME`, else `$XDG_DATA_HOME/keystore`, else `~/.local/share/keystore`.
    package static func defaultDirectory(environment: [String: String]) throws -> String {
        if let home = environment["KEYSTORE_HOME"], !home.isEmpty { return home }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/keystore" }
        guard let home = environment["HOME"], !home.isEmpty else {
            throw VaultError.noHomeDirectory
        }
        return home + "/.local/share/keystore"
    }

    package func path(of name: IdentityName) -> String { "\(directory)/\(name.rawValue).vault" }

    /// The wrong-PIN counts of the identities in this directory.
    package var attempts: PINAttempts { PINAttempts(directory: directory, now: now) }
    /// The vaults kept by `create(_:replacing:)`.
    package var backups: Backups { Backups(directory: directory) }

    // MARK: Reading (no lock: writes are atomic renames, so a reader sees a whole old or a whole new file)

    package func exists(_ name: IdentityName) -> Bool {
        access(path(of: name), F_OK) == 0
    }

    /// The identity's vault, checked to be one (`Vault(file:path:)`) and to be this identity's: a vault copied
    /// under another file name is refused rather than opened as the identity its name says.
    package func vault(named name: IdentityName) throws -> Vault {
        let path = path(of: name)
        guard let vault = try Self.readVault(at: path, as: name) else {
            throw VaultError.notFound(name: name.rawValue, directory: directory)
        }
        return vault
    }

    /// The identities in the directory, by name. Temporary files, backups and hidden files are not identities.
    package func names() throws -> [IdentityName] {
        try fileNames().compactMap { file in
            file.hasSuffix(".vault") ? try? IdentityName(String(file.dropLast(".vault".count))) : nil
        }.sorted()
    }

    static func readVault(at path: String, as name: IdentityName) throws -> Vault? {
        try readStampedVault(at: path, as: name)?.vault
    }

    /// A vault as it was read, and the stamp of the file it came from: a later step that finds the same stamp
    /// at the path knows the file is unchanged without opening it again.
    package struct Reading: Sendable {
        package let vault: Vault
        let stamp: AtomicFile.Stamp
    }

    /// The identity's vault (`vault(named:)`), with its file's stamp.
    package func reading(_ name: IdentityName) throws -> Reading {
        guard let reading = try Self.readStampedVault(at: path(of: name), as: name) else {
            throw VaultError.notFound(name: name.rawValue, directory: directory)
        }
        return reading
    }

    private static func readStampedVault(at path: String, as name: IdentityName) throws -> Reading? {
        let read: (bytes: [UInt8], status: stat)?
        do {
            read = try AtomicFile.readWithStatus(path, limit: Vault.maximumFileSize)
        } catch let error as FileError {
            throw VaultError.corrupt(path: path, reason: error.reason)
        }
        guard let read else { return nil }
        let vault = try Vault(file: read.bytes, path: path)
        guard vault.name == name else { throw VaultError.misnamed(path: path, inside: vault.name.rawValue) }
        return Reading(vault: vault, stamp: AtomicFile.Stamp(read.status))
    }

    private func fileNames() throws -> [String] {
        guard let files = AtomicFile.fileNames(in: directory) else {
            if errno == ENOENT { return [] }
            throw AtomicFile.ioError("list", directory)
        }
        return files
    }

    /// Warnings for a directory or vault that others can read: the seed is encrypted, but a copy lets them
    /// guess PINs offline.
    package func permissionWarnings(for name: IdentityName?) -> [String] {
        var warnings: [String] = []
        var info = stat()
        if stat(directory, &info) == 0, info.st_mode & 0o077 != 0 {
            warnings.append("\(directory) is accessible to other users; run: chmod 700 '\(directory)'")
        }
        if let name, stat(path(of: name), &info) == 0, info.st_mode & 0o077 != 0 {
            warnings.append("\(path(of: name)) is readable by other users; run: chmod 600 '\(path(of: name))'")
        }
        return warnings
    }

    // MARK: Changing

    /// Writes a new vault. An existing identity is refused unless `replacing`, in which case the old file is
    /// first kept as a backup (by hard link, so the identity is never without a vault) and the identity's
    /// sessions end. Returns the backup path.
    @discardableResult
    package func create(_ vault: Vault, replacing: Bool = false) throws -> String? {
        try create(vault.encoded(), name: vault.name, replacing: replacing)
    }

    /// A P-256 key in the TPM, kept as `create(_:replacing:)` keeps a vault.
    package func create(_ vault: TPMKeyVault, replacing: Bool = false) throws -> String? {
        try create(vault.encoded(), name: vault.name, replacing: replacing)
    }

    private func create(_ encoded: [UInt8], name: IdentityName, replacing: Bool) throws -> String? {
        try createDirectory()
        return try withLock(writing: true) {
            let path = path(of: name)
            var backup: String?
            if exists(name) {
                guard replacing else { throw VaultError.alreadyExists(name: name.rawValue) }
                backup = try backups.keep(path, at: now())
                CrashPoint.reached("backup linked")
            }
            do {
                try AtomicFile.write(encoded, to: path, directory: directory)
            } catch {
                // The old vault is still in place (same inode as its backup link): the backup would only be a
                // second copy of the old seed, left for nobody.
                if let backup, Self.sameFile(path, backup) { unlink(backup) }
                throw error
            }
            try attempts.clear(name)
            CrashPoint.reached("wrong-PIN count cleared")
            if backup != nil { endSessions(of: name) }
            return backup
        }
    }

    /// Opens an identity with its PIN, counting wrong PINs and refusing attempts while a wait is running.
    package func unlock(_ name: IdentityName, pin: PIN) throws -> KeyPair {
        try unlockWithRoot(name, pin: pin).keyPair
    }

    /// Opens an identity with its PIN, also returning its SEP-5 account root if it was made from a phrase.
    package func unlockWithRoot(_ name: IdentityName, pin: PIN) throws -> (keyPair: KeyPair, root: AccountRoot?) {
        try withLock(writing: false) {
            let unlocked = try unlockHoldingLock(name, pin: pin)
            return (unlocked.keyPair, unlocked.root)
        }
    }

    /// Opens the vault read as `seen` with its PIN. Under the lock, a file whose stamp is still `seen`'s is not
    /// read again; one that changed since is read again and must still be `seen`'s vault
    /// (`VaultError.changedWhileWaiting` before any attempt is counted, as for `changePIN`).
    package func unlock(_ seen: Reading, pin: PIN) throws -> (keyPair: KeyPair, root: AccountRoot?) {
        try withLock(writing: false) {
            let unlocked = try unlockHoldingLock(seen.vault.name, pin: pin, expecting: seen.vault, stamp: seen.stamp)
            return (unlocked.keyPair, unlocked.root)
        }
    }

    /// Re-encrypts an identity under a new PIN, with new salt and nonce, and `kdf` or the vault's current cost,
    /// and ends its sessions. `kdfChosen` says whether that cost was named (`Vault.isKDFChosen`); nil keeps what
    /// the vault says. `boundToTPM` true binds the vault to `tpm` (with a fresh TPM secret), false unbinds it; nil
    /// keeps it as it is (a bound vault gets a fresh TPM secret under the new PIN).
    ///
    /// `expecting` is the vault as the caller read it before asking for the PINs. If another command changed it
    /// meanwhile (two PIN changes racing for the lock), the PIN is not tried at all: the loser would otherwise be
    /// told "incorrect PIN" and charged a failure for a PIN that was right when it was typed.
    package func changePIN(_ name: IdentityName, from current: PIN, to new: PIN, kdf: KDFParameters? = nil, kdfChosen: Bool? = nil,
                          boundToTPM: Bool? = nil, expecting seen: Vault? = nil) throws -> Vault {
        try withLock(writing: true) {
            let (vault, keyPair, root) = try unlockHoldingLock(name, pin: current, expecting: seen)
            guard let currentKDF = vault.kdf else { throw KeystoreUseError.keyInToken(name.rawValue, .changePIN) }
            let bound = boundToTPM ?? vault.isTPMBound
            if bound && tpm == nil { throw TPMError.notSupported }
            let resealed = try Vault.seal(
                keyPair, root: root.map { ($0, vault.account ?? 0) }, name: name, pin: new, kdf: kdf ?? currentKDF,
                kdfChosen: kdfChosen ?? vault.isKDFChosen, tpm: bound ? tpm : nil, renewing: vault.tpmObject, createdAt: Date())
            try AtomicFile.write(resealed.encoded(), to: path(of: name), directory: directory)
            endSessions(of: name)
            return resealed
        }
    }

    /// What `remove` did with the identity's backups.
    public struct Removal: Sendable {
        /// The key removed: nil when only backups were left to remove.
        public let key: AuthorizationSigner.Key?
        public let removedBackups: [Backup]
        public let keptBackups: [Backup]
    }

    /// Deletes an identity, after checking its PIN unless `pin` is nil (the caller's explicit choice, or a kind of
    /// key whose PIN is not this vault's to check), and ends its sessions. Its backups (old seeds under old PINs) are deleted too with `includingBackups`, else kept and
    /// named in the result, so that nobody believes the key gone while a copy remains. Once the identity is
    /// gone, `pin` nil and `includingBackups` remove the backups it left.
    @discardableResult
    package func remove(_ name: IdentityName, pin: PIN?, includingBackups: Bool = false) throws -> Removal {
        try withLock(writing: true) {
            let backups = try self.backups.list(of: name)
            var removed: AuthorizationSigner.Key?
            if pin == nil && includingBackups && !backups.isEmpty && !exists(name) {
                removed = nil
            } else {
                // The PIN is tried on the vault as it is under the lock, which is the one removed.
                removed = try pin.map { .ed25519(try unlockHoldingLock(name, pin: $0).vault.publicKey) } ?? key(named: name).key
                guard unlink(path(of: name)) == 0 else { throw AtomicFile.ioError("remove", path(of: name)) }
                CrashPoint.reached("vault unlinked")
                try attempts.clear(name)
                CrashPoint.reached("wrong-PIN count cleared")
            }
            if includingBackups {
                for backup in backups where unlink("\(directory)/\(backup.fileName)") != 0 && errno != ENOENT {
                    throw AtomicFile.ioError("remove", "\(directory)/\(backup.fileName)")
                }
            }
            try AtomicFile.syncDirectory(directory)
            CrashPoint.reached("directory flushed")
            endSessions(of: name)
            return Removal(key: removed, removedBackups: includingBackups ? backups : [],
                           keptBackups: includingBackups ? [] : backups)
        }
    }

    // MARK: Internals

    /// Opens the vault under the lock already held; with `seen`, refuses (before any attempt is counted) a vault
    /// that is no longer the one the caller read.
    private func unlockHoldingLock(_ name: IdentityName, pin: PIN, expecting seen: Vault? = nil, stamp: AtomicFile.Stamp? = nil) throws
        -> (vault: Vault, keyPair: KeyPair, root: AccountRoot?)
    {
        let vault: Vault
        if let seen, let stamp, AtomicFile.Stamp(of: path(of: name)) == stamp {
            vault = seen
        } else {
            vault = try self.vault(named: name)
        }
        if let seen, vault != seen { throw VaultError.changedWhileWaiting(name: name.rawValue) }
        let (before, after) = try attempts.record(name)
        do {
            let (keyPair, root) = try vault.openWithRoot(pin: pin, path: path(of: name), tpm: tpm)
            try? attempts.clear(name)
            return (vault, keyPair, root)
        } catch VaultError.incorrectPIN {
            throw VaultError.incorrectPIN(triesBeforeWait: after.triesBeforeWait, waitSeconds: after.secondsLeft(now: now()) ?? 0)
        } catch let error as TPMError where error.isWrongPIN {
            throw error  // counted here too, and the TPM's own count is the one the message gives
        } catch {
            // Not a wrong PIN (no memory for the key derivation, a damaged key): the attempt does not count.
            try? attempts.restore(name, to: before)
            throw error
        }
    }

    private func endSessions(of name: IdentityName) {
        _ = try? sessions?.closeAll(for: SessionStore.Owner(keystore: directory, name: name))
    }

    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Creates the directory (and missing parents) with mode 0700.
    func createDirectory() throws {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) == 0 {
                chmod(prefix, 0o700)  // the umask may have taken bits away; say exactly what we mean
            } else if errno != EEXIST {
                throw AtomicFile.ioError("create", prefix)
            }
        }
    }

    /// Runs `body` holding an exclusive flock on the directory's `.lock`. A read-only directory can still be
    /// read under a lock opened read-only; without any lock file, reading goes ahead unlocked.
    func withLock<Result>(writing: Bool, _ body: () throws -> Result) throws -> Result {
        let lockPath = directory + "/.lock"
        let fd: Int32
        do {
            fd = try AtomicFile.openLock(lockPath, writing: writing)
        } catch let error as FileError {
            throw VaultError.io(operation: "lock", path: directory, reason: "\(lockPath) is not a lock file (\(error.reason)); remove it")
        }
        if fd < 0 {
            if errno == ENOENT {
                // No directory yet: for a read this means no identity either.
                if !writing { return try body() }
            }
            if !writing && (errno == EACCES || errno == EROFS) { return try body() }
            throw AtomicFile.ioError("lock", directory)
        }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw AtomicFile.ioError("lock", lockPath) }
        }
        if writing { removeAbandonedTemporaryFiles() }
        return try body()
    }

    /// Deletes the temporary files of writes that were killed before their rename. Every write holds the lock,
    /// so while we hold it none of them is in progress.
    private func removeAbandonedTemporaryFiles() {
        for name in AtomicFile.fileNames(in: directory) ?? [] where AtomicFile.isTemporaryName(name) {
            unlink("\(directory)/\(name)")
        }
    }
}
