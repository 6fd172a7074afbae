#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The keystore directory: one `NAME.vault` file per identity, each written atomically, every change made
/// under an advisory lock so that concurrent commands cannot both create an identity or interleave PIN changes.
///
/// Layout (all files 0600, the directory 0700):
/// - `NAME.vault`: the vault (docs/FORMAT.md);
/// - `NAME.vault.backup-TIMESTAMP`: a vault replaced by `signup --replace`;
/// - `.NAME.throttle`: consecutive wrong PINs;
/// - `.lock`: the lock; `*.tmp-*`: a write in progress or interrupted, never read as a vault.
public struct VaultStore: Sendable {
    public let directory: String
    let now: @Sendable () -> Date

    public init(directory: String, now: @escaping @Sendable () -> Date = { Date() }) {
        self.directory = directory
        self.now = now
    }

    /// `$KEYSTORE_HOME`, else `$XDG_DATA_HOME/keystore`, else `~/.local/share/keystore`.
    public static func defaultDirectory(environment: [String: String]) throws -> String {
        if let home = environment["KEYSTORE_HOME"], !home.isEmpty { return home }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/keystore" }
        guard let home = environment["HOME"], !home.isEmpty else {
            throw VaultError.io(operation: "find", path: "the keystore directory",
                                reason: "HOME is not set; set KEYSTORE_HOME or pass --home")
        }
        return home + "/.local/share/keystore"
    }

    public func path(of name: IdentityName) -> String { "\(directory)/\(name.rawValue).vault" }
    func throttlePath(of name: IdentityName) -> String { "\(directory)/.\(name.rawValue).throttle" }

    // MARK: Reading (no lock: writes are atomic renames, so a reader sees a whole old or a whole new file)

    public func exists(_ name: IdentityName) -> Bool {
        access(path(of: name), F_OK) == 0
    }

    public func vault(named name: IdentityName) throws -> Vault {
        let path = path(of: name)
        guard let bytes = try AtomicFile.read(path, limit: Vault.maximumFileSize) else {
            throw VaultError.notFound(name: name.rawValue, directory: directory)
        }
        return try Vault(file: bytes, path: path)
    }

    /// The identities in the directory, by name. Temporary files, backups and hidden files are not identities.
    public func names() throws -> [IdentityName] {
        guard let files = AtomicFile.fileNames(in: directory) else {
            if errno == ENOENT { return [] }
            throw AtomicFile.ioError("list", directory)
        }
        return files.compactMap { file in
            file.hasSuffix(".vault") ? try? IdentityName(String(file.dropLast(".vault".count))) : nil
        }.sorted()
    }

    /// Warnings for a directory or vault that others can read: the seed is encrypted, but a copy lets them
    /// guess PINs offline.
    public func permissionWarnings(for name: IdentityName?) -> [String] {
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

    /// Seconds before the next PIN attempt is accepted, so that a person is told before typing one.
    public func secondsUntilNextAttempt(_ name: IdentityName) -> Int? {
        (try? Throttle.load(throttlePath(of: name)))?.secondsLeft(now: now())
    }

    // MARK: Changing

    /// Writes a new vault. An existing identity is refused unless `replacing`, in which case the old file is
    /// first kept as a backup (by hard link, so the identity is never without a vault). Returns the backup path.
    @discardableResult
    public func create(_ vault: Vault, replacing: Bool = false) throws -> String? {
        try createDirectory()
        return try withLock(writing: true) {
            let path = path(of: vault.name)
            var backup: String?
            if exists(vault.name) {
                guard replacing else { throw VaultError.alreadyExists(name: vault.name.rawValue) }
                let stamp = String(now().formatted(.iso8601)).filter { (c: Character) in c != ":" && c != "-" }
                // The random tail keeps two replacements within one second from colliding.
                let backupPath = "\(path).backup-\(stamp)-\(Hex.string(Sodium.randomBytes(count: 2)))"
                guard link(path, backupPath) == 0 else { throw AtomicFile.ioError("back up", path) }
                backup = backupPath
                CrashPoint.reached("backup linked")
            }
            try AtomicFile.write(vault.encoded(), to: path, directory: directory)
            try clearThrottle(vault.name)
            CrashPoint.reached("wrong-PIN count cleared")
            return backup
        }
    }

    /// Opens an identity with its PIN, counting wrong PINs and refusing attempts while a wait is running.
    public func unlock(_ name: IdentityName, pin: PIN) throws -> KeyPair {
        try unlockWithRoot(name, pin: pin).keyPair
    }

    /// Opens an identity with its PIN, also returning its SEP-5 account root if it was made from a phrase.
    public func unlockWithRoot(_ name: IdentityName, pin: PIN) throws -> (keyPair: KeyPair, root: AccountRoot?) {
        try withLock(writing: false) {
            let unlocked = try unlockHoldingLock(name, pin: pin)
            return (unlocked.keyPair, unlocked.root)
        }
    }

    /// Re-encrypts an identity under a new PIN, with new salt and nonce, and `kdf` or the vault's current cost.
    public func changePIN(_ name: IdentityName, from current: PIN, to new: PIN, kdf: KDFParameters? = nil) throws -> Vault {
        try withLock(writing: true) {
            let (vault, keyPair, root) = try unlockHoldingLock(name, pin: current)
            let resealed = try Vault.seal(
                keyPair, root: root.map { ($0, vault.account ?? 0) }, name: name, pin: new, kdf: kdf ?? vault.kdf,
                createdAt: Date())
            try AtomicFile.write(resealed.encoded(), to: path(of: name), directory: directory)
            return resealed
        }
    }

    /// Deletes an identity, after checking its PIN unless `pin` is nil (an explicit `--force`).
    public func remove(_ name: IdentityName, pin: PIN?) throws {
        try withLock(writing: true) {
            if let pin {
                _ = try unlockHoldingLock(name, pin: pin)
            } else {
                _ = try vault(named: name)
            }
            guard unlink(path(of: name)) == 0 else { throw AtomicFile.ioError("remove", path(of: name)) }
            CrashPoint.reached("vault unlinked")
            try clearThrottle(name)
            CrashPoint.reached("wrong-PIN count cleared")
            try AtomicFile.syncDirectory(directory)
            CrashPoint.reached("directory flushed")
        }
    }

    // MARK: Internals

    private func unlockHoldingLock(_ name: IdentityName, pin: PIN) throws -> (vault: Vault, keyPair: KeyPair, root: AccountRoot?) {
        let vault = try vault(named: name)
        let throttlePath = throttlePath(of: name)
        var throttle = try Throttle.load(throttlePath)
        if let wait = throttle.secondsLeft(now: now()) { throw VaultError.throttled(secondsLeft: wait) }
        do {
            let (keyPair, root) = try vault.openWithRoot(pin: pin, path: path(of: name))
            if throttle.failures > 0 { try clearThrottle(name) }
            return (vault, keyPair, root)
        } catch VaultError.incorrectPIN {
            throttle.recordFailure(now: now())
            // Where the count cannot be written (a read-only directory) the answer is still "incorrect PIN":
            // whoever can make the directory read-only can delete the count anyway.
            try? throttle.save(throttlePath, directory: directory)
            throw VaultError.incorrectPIN(
                triesBeforeWait: throttle.triesBeforeWait, waitSeconds: throttle.secondsLeft(now: now()) ?? 0)
        }
    }

    private func clearThrottle(_ name: IdentityName) throws {
        if unlink(throttlePath(of: name)) != 0 && errno != ENOENT {
            throw AtomicFile.ioError("reset", throttlePath(of: name))
        }
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
    private func withLock<Result>(writing: Bool, _ body: () throws -> Result) throws -> Result {
        let lockPath = directory + "/.lock"
        var fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 && !writing && (errno == EACCES || errno == EROFS) { fd = open(lockPath, O_RDONLY | O_CLOEXEC) }
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
        for name in AtomicFile.fileNames(in: directory) ?? [] where name.contains(AtomicFile.temporaryMarker) {
            unlink("\(directory)/\(name)")
        }
    }
}
