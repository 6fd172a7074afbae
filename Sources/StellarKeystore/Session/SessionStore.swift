import FoundationEssentials
import Glibc
import StellarKeys
import StellarTransactions
import StellarText

/// Signed-in sessions: an unlocked seed kept for a while, re-encrypted under a random key that only the
/// session token holds, in a private directory that is normally in memory (tmpfs).
///
/// A session file is JSON: `format` "keystore-session", `version` 1, `name`, `keystore` (the vault directory),
/// `publicKey`, `expiresAt` (seconds since 1970, shown by `status`), and `nonce` and `ciphertext` (base64): the
/// secretbox, under the token's key, of 8 bytes of big-endian expiry, SHA-256 of "keystore\nname\npublicKey",
/// and the 32-byte seed. Expiry and identity are checked from inside the box, so editing the clear copies
/// achieves nothing.
///
/// An expired session's file is deleted, seed and all, at its first use after expiry or when another session opens;
/// `ID.expired` (the expiry, in seconds since 1970, and nothing else) is left in its place for a day, so that a
/// token used after that is still told it expired, not that it was ended.
public struct SessionStore: Sendable {
    package static let longestTTL = 24 * 3600
    package static let defaultTTL = 15 * 60
    static let format = "keystore-session"

    public let directory: String
    let now: @Sendable () -> Date

    public init(directory: String, now: @escaping @Sendable () -> Date = { Date() }) {
        self.directory = directory
        self.now = now
    }

    /// `$XDG_RUNTIME_DIR/keystore` (per-user tmpfs under systemd), else `/dev/shm/keystore-UID` (tmpfs on Linux),
    /// else `/tmp/keystore-UID`.
    package static func defaultDirectory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/keystore" }
        var info = stat()
        let base = stat("/dev/shm", &info) == 0 && info.st_mode & S_IFMT == S_IFDIR ? "/dev/shm" : "/tmp"
        return "\(base)/keystore-\(geteuid())"
    }

    /// The identity a session belongs to, by its keystore directory and name ("identity" alone always means a
    /// named key in a keystore: `IdentityName`).
    public struct Owner: Sendable, Equatable {
        public let keystore: String
        public let name: IdentityName

        /// `keystore` is made absolute and free of symlinks where it exists, so that two spellings of one
        /// directory are one identity.
        public init(keystore: String, name: IdentityName) {
            var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            self.keystore = realpath(keystore, &resolved) != nil
                ? String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                : keystore
            self.name = name
        }
    }

    /// What `status` can say without the token, from the clear part of the session files.
    public struct Summary: Sendable {
        public let id: String
        public let name: String
        public let keystore: String
        public let publicKey: String
        package let expiresAt: Date
    }

    fileprivate struct File: Codable {
        var format: String
        var version: Int
        var name: String
        var keystore: String
        var publicKey: String
        var expiresAt: Int64
        var nonce: String
        var ciphertext: String
    }

    // MARK: Opening and closing

    /// Starts a session for `keyPair` lasting `ttl` seconds (1 s to 24 h) and returns its token.
    package func open(_ keyPair: KeyPair, for identity: Owner, ttl: Int) throws -> SessionToken {
        guard (1...Self.longestTTL).contains(ttl) else { throw SessionError.invalidTTL }
        try preparePrivateDirectory()
        removeExpired()
        let token = SessionToken.random()
        let expiresAt = Int64(now().timeIntervalSince1970) + Int64(ttl)
        let nonce = Sodium.randomBytes(count: Sodium.secretBoxNonceBytes)
        let plaintext = SecureBytes(count: 72) { out in
            withUnsafeBytes(of: UInt64(expiresAt).bigEndian) { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 8) }
            let binding = Self.binding(identity, keyPair.publicKey)
            UnsafeMutableRawBufferPointer(rebasing: out[8..<40]).copyBytes(from: binding)
            keyPair.seed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[40..<72]).copyMemory(from: $0) }
        }
        let ciphertext = plaintext.sealed(nonce: nonce, key: token.key)
        let file = File(format: Self.format, version: 1, name: identity.name.rawValue, keystore: identity.keystore,
                        publicKey: keyPair.publicKey.accountID, expiresAt: expiresAt,
                        nonce: Base64.string(nonce), ciphertext: Base64.string(ciphertext))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try AtomicFile.write(Array(try encoder.encode(file)) + [0x0A], to: path(of: token), directory: directory)
        return token
    }

    /// The key pair of a live session of `identity`, or of whichever identity the session is for when `identity`
    /// is nil. Expired sessions are deleted on the way. Whether the vault still holds that key is the caller's
    /// to check (`Keystore.signer(session:name:)`): this store knows nothing of vaults.
    package func keyPair(for token: SessionToken, identity: Owner?) throws -> KeyPair {
        try session(for: token, identity: identity).keyPair
    }

    /// `keyPair(for:identity:)`, with the identity the session belongs to.
    package func session(for token: SessionToken, identity: Owner?) throws -> (keyPair: KeyPair, identity: Owner) {
        let session = try Self.unseal(try bytes(of: token), with: token)
        try checkLive(token, expiresAt: session.expiresAt, owner: session.identity, wanted: identity)
        return (session.keyPair, session.identity)
    }

    /// `session(for:identity:)` without the key pair: the session's public key and owner, checked as fully (the
    /// token opens it, the key and owner are the ones sealed in it, it has not expired). A review needs only these,
    /// and deriving the key pair costs a guarded allocation and a scalar multiplication that a session `sign`, once
    /// per signature, would make twice: the approval reads the session again for its key (`SigningKey.opened`).
    package func publicKey(of token: SessionToken, identity: Owner?) throws -> (publicKey: PublicKey, identity: Owner) {
        let session = try Self.unsealPublicKey(try bytes(of: token), with: token)
        try checkLive(token, expiresAt: session.expiresAt, owner: session.identity, wanted: identity)
        return (session.publicKey, session.identity)
    }

    /// The session file of `token`: ended when there is none, expired when its mark is left in its place.
    private func bytes(of token: SessionToken) throws -> [UInt8] {
        guard let bytes = try Self.read(path(of: token)) else {
            throw access(tombstonePath(of: Hex.string(token.id)), F_OK) == 0 ? SessionError.expired : SessionError.ended
        }
        return bytes
    }

    /// Refuses an expired session (deleting it) and one of another identity than `wanted`.
    private func checkLive(_ token: SessionToken, expiresAt: Int64, owner: Owner, wanted: Owner?) throws {
        let left = expiresAt - Int64(now().timeIntervalSince1970)
        // A clock set back must not stretch a session beyond the longest one.
        guard left > 0, left <= Self.longestTTL else {
            retire(id: Hex.string(token.id), expiresAt: expiresAt)
            throw SessionError.expired
        }
        guard wanted == nil || wanted == owner else {
            throw SessionError.otherIdentity(name: owner.name.rawValue)
        }
    }

    /// A session file's bytes; one that is not a regular file, or too large, is not a session keystore wrote.
    private static func read(_ path: String) throws -> [UInt8]? {
        do {
            return try AtomicFile.read(path, limit: 4096)
        } catch is FileError {
            throw SessionError.forged
        }
    }

    /// Parses a session file and opens it with `token`'s key. The clear name and directory are only trusted once
    /// they hash to the binding inside the box.
    package static func unseal(_ bytes: [UInt8], with token: SessionToken) throws
        -> (keyPair: KeyPair, identity: Owner, expiresAt: Int64)
    {
        let opened = try open(bytes, with: token)
        let keyPair = try KeyPair(seedAt: 40..<72, of: opened.plaintext)
        return (keyPair, try opened.owner(boundTo: keyPair.publicKey), opened.expiresAt)
    }

    /// `unseal(_:with:)` without deriving the key pair from the seed: the clear public key is trusted, as the clear
    /// name and directory are, once the three hash to the binding inside the box (which was made from the key
    /// pair's own public key).
    static func unsealPublicKey(_ bytes: [UInt8], with token: SessionToken) throws
        -> (publicKey: PublicKey, identity: Owner, expiresAt: Int64)
    {
        let opened = try open(bytes, with: token)
        guard let publicKey = try? PublicKey(accountID: opened.file.publicKey) else { throw SessionError.forged }
        return (publicKey, try opened.owner(boundTo: publicKey), opened.expiresAt)
    }

    /// A session file, parsed and its box opened with `token`'s key; nothing in the clear part checked yet.
    private static func open(_ bytes: [UInt8], with token: SessionToken) throws -> Opened {
        guard let file = File(bytes), file.format == Self.format,
              file.version == 1,
              let nonce = Base64.decode(file.nonce), nonce.count == Sodium.secretBoxNonceBytes,
              let ciphertext = Base64.decode(file.ciphertext), ciphertext.count == 72 + Sodium.secretBoxMACBytes
        else { throw SessionError.forged }
        guard let plaintext = SecureBytes.opening(ciphertext, nonce: nonce, key: token.key) else {
            throw SessionError.forged
        }
        return Opened(file: file, plaintext: plaintext)
    }

    /// A session file's box, opened: 8 bytes of expiry, the binding, the seed.
    private struct Opened {
        let file: File
        let plaintext: SecureBytes

        var expiresAt: Int64 { plaintext.withUnsafeBytes { Int64(bitPattern: $0.loadUnaligned(as: UInt64.self).bigEndian) } }

        /// The identity the clear part names, if it and `publicKey` hash to the binding sealed in the box.
        func owner(boundTo publicKey: PublicKey) throws -> Owner {
            let binding = plaintext.withUnsafeBytes { Array($0[8..<40]) }
            let claimed = (try? IdentityName(file.name)).map { Owner(keystore: file.keystore, name: $0) }
            guard let claimed, binding == SessionStore.binding(claimed, publicKey) else { throw SessionError.forged }
            return claimed
        }
    }

    /// Ends a session by deleting its file, which kills the token with it. Returns whether there was one.
    @discardableResult
    public func close(_ token: SessionToken) throws -> Bool {
        if unlink(path(of: token)) == 0 { return true }
        if errno == ENOENT { return false }
        throw AtomicFile.ioError("remove", path(of: token))
    }

    /// Ends every session of `identity`; returns how many there were.
    @discardableResult
    package func closeAll(for identity: Owner) throws -> Int {
        let sessions = summaries().filter { $0.name == identity.name.rawValue && $0.keystore == identity.keystore }
        for session in sessions where unlink("\(directory)/\(session.id).session") != 0 && errno != ENOENT {
            throw AtomicFile.ioError("remove", "\(directory)/\(session.id).session")
        }
        return sessions.count
    }

    /// The unexpired sessions in the directory, as their clear parts say (unauthenticated: for display only).
    public func summaries() -> [Summary] {
        var found: [Summary] = []
        let nowSeconds = Int64(now().timeIntervalSince1970)
        for name in AtomicFile.fileNames(in: directory) ?? [] {
            guard name.hasSuffix(".session"),
                  let bytes = try? AtomicFile.read("\(directory)/\(name)", limit: 4096),
                  let file = File(bytes),
                  file.expiresAt > nowSeconds
            else { continue }
            found.append(Summary(id: String(name.dropLast(".session".count)), name: file.name, keystore: file.keystore,
                                 publicKey: file.publicKey, expiresAt: Date(timeIntervalSince1970: Double(file.expiresAt))))
        }
        return found.sorted { $0.expiresAt < $1.expiresAt }
    }

    // MARK: Internals

    package func path(of token: SessionToken) -> String { "\(directory)/\(token.fileName)" }

    static func binding(_ identity: Owner, _ publicKey: PublicKey) -> [UInt8] {
        let text = Array("\(identity.keystore)\n\(identity.name.rawValue)\n\(publicKey.accountID)".utf8)
        return text.withUnsafeBytes { Sodium.sha256($0) }
    }

    /// Deletes expired session files, so that encrypted seeds do not pile up (each leaves its `.expired` mark), and
    /// the marks a day after their expiry.
    private func removeExpired() {
        let nowSeconds = Int64(now().timeIntervalSince1970)
        for name in AtomicFile.fileNames(in: directory) ?? [] {
            let path = "\(directory)/\(name)"
            if name.hasSuffix(".expired") {
                let expiresAt = (try? AtomicFile.read(path, limit: 64)).flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
                if expiresAt.map({ $0 + Int64(Self.longestTTL) < nowSeconds }) ?? true { unlink(path) }
                continue
            }
            guard name.hasSuffix(".session"), let bytes = try? AtomicFile.read(path, limit: 4096) else { continue }
            guard let file = File(bytes) else {
                unlink(path)
                continue
            }
            if file.expiresAt > nowSeconds { continue }
            retire(id: String(name.dropLast(".session".count)), expiresAt: file.expiresAt)
        }
    }

    /// Where the mark of an expired session is: no secret, only its expiry.
    private func tombstonePath(of id: String) -> String { "\(directory)/\(id).expired" }

    /// Deletes an expired session's file, leaving its mark. The mark comes first: if it cannot be written, the
    /// session is still deleted, and a later use is told it ended.
    private func retire(id: String, expiresAt: Int64) {
        try? AtomicFile.write(Array(String(expiresAt).utf8), to: tombstonePath(of: id), directory: directory)
        unlink("\(directory)/\(id).session")
    }

    /// Creates the directory 0700 if needed, and refuses one that is not ours alone: in a shared /tmp, someone
    /// else could have created it first to read or plant sessions.
    private func preparePrivateDirectory() throws { try Self.preparePrivateDirectory(directory) }

    /// The same for any directory of the runtime area (the agent's socket lives in this one).
    package static func preparePrivateDirectory(_ directory: String) throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw AtomicFile.ioError("create", directory) }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw AtomicFile.ioError("open", directory) }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw SessionError.unsafeDirectory(directory)
        }
    }
}

extension SessionStore.File {
    /// A session file, read strictly (`StrictJSON`: no repeated key, integers as digits); nil if it is not one.
    init?(_ bytes: [UInt8]) {
        guard let members = try? StrictJSON.parse(bytes, integersOnly: true),
              let format = members["format"]?.string, let version = members["version"]?.integer(as: Int.self),
              let name = members["name"]?.string, let keystore = members["keystore"]?.string,
              let publicKey = members["publicKey"]?.string, let expiresAt = members["expiresAt"]?.integer(as: Int64.self),
              let nonce = members["nonce"]?.string, let ciphertext = members["ciphertext"]?.string
        else { return nil }
        self.init(format: format, version: version, name: name, keystore: keystore, publicKey: publicKey,
                  expiresAt: expiresAt, nonce: nonce, ciphertext: ciphertext)
    }
}
