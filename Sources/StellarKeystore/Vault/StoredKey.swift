import Glibc
import StellarKeys
import StellarTransactions

/// An identity's key as its vault keeps it, found but not opened: a sealed seed (`SealedSeed`, vault formats 1 to
/// 3), a key in a PKCS#11 token (`KeyInToken`, 4), a P-256 key resident in the TPM (`KeyInTPM`, 5). Whatever
/// differs between kinds is said here, by the kind, so that nothing else asks which kind a key is: a new kind is
/// its conformer, its vault format, and its name in `VaultStore.storedKeyKinds`.
///
/// ```swift
/// let key = try keystore.vaults.key(named: name)
/// try key.checkReadyForPIN(in: keystore)
/// let signer = try key.open(pin: pin, in: keystore)     // counted, as every PIN tried here is
/// ```
package protocol StoredKey: Sendable {
    /// The vault format versions this kind is kept in (docs/FORMAT.md).
    static var formatVersions: Set<Int> { get }
    /// The key a vault file of one of `formatVersions` keeps, checked in full without any secret. `path` is for
    /// messages; `stamp` is the file's as it was read, so that opening it later reads it again only if it changed.
    init(file bytes: [UInt8], path: String, stamp: AtomicFile.Stamp) throws

    var name: IdentityName { get }
    /// Its public key: an Ed25519 key (a Stellar account), or a P-256 key (a smart account's External signer).
    var key: AuthorizationSigner.Key { get }
    /// Whose PIN opens it.
    var pin: KeyPIN { get }
    /// Where a review says its key comes from.
    var source: KeySource { get }
    /// Whether its vault needs this machine's TPM besides the PIN (for a listing).
    var isTPMBound: Bool { get }
    /// The token that holds it, for a key in a token (for a listing).
    var token: PKCS11KeyReference? { get }

    /// The sealed vault, for `use`, which needs the seed or the PIN's encryption of it (export, a session, a PIN
    /// change, a TPM binding, re-encryption); what this kind cannot do is thrown, before any PIN, saying why.
    func vault(for use: KeyUse) throws -> Vault
    /// Its Stellar account's key; a kind without one throws why.
    func accountKey() throws -> PublicKey

    /// Refuses, before its PIN is asked, a PIN that could not be used: a wait after wrong PINs running, the TPM
    /// absent or in lockout, the token or its module missing or the token locked.
    func checkReadyForPIN(in keystore: Keystore) throws
    /// The key opened with `pin` to sign, the PIN counted (`PINAttempts`) as every PIN tried here is.
    func open(pin: PIN, in keystore: Keystore) throws -> any AuthorizationSigning
    /// Has the agent behind `client` hold the key for at most `ttl` seconds, opened with `pin`: a sealed seed
    /// opened here and sent, a token's or a TPM's key opened by the agent itself with the PIN.
    func hand(to client: AgentClient, ttl: Int?, pin: PIN, in keystore: Keystore) throws
    /// What a backup keeps of it: a sealed seed, opened with `pin` (counted); for a key that never leaves its
    /// hardware, its public part and what to do instead, without a PIN.
    func backupEntry(pin: () throws -> PIN, in keystore: Keystore) throws -> BackupBundle.Entry
    /// Deletes the identity after `pin` proved whatever its PIN proves here (see `VaultStore.remove`).
    func remove(pin: () throws -> PIN, includingBackups: Bool, in keystore: Keystore) throws -> VaultStore.Removal
}

/// Whose PIN opens a stored key: an app asks for the identity's own PIN, or for the token's.
public enum KeyPIN: Sendable, Equatable {
    /// The identity's own PIN, chosen at sign-up (a sealed seed's, a TPM key's authorisation).
    case vault
    /// The token's user PIN, which the token checks and counts.
    case token
    /// None: the key opens without one.
    case none
}

extension VaultStore {
    /// The kinds of stored key. A vault is read once, its format version found, and the kind that keeps that
    /// version reads it; one whose version no kind keeps is read as a sealed seed, whose reader says what is wrong
    /// with it (no version, a newer one).
    static let storedKeyKinds: [any StoredKey.Type] = [SealedSeed.self, KeyInToken.self, KeyInTPM.self]

    /// Identity `name`'s key, its vault read once and checked to be this identity's (a vault copied under another
    /// file name is refused rather than opened as the identity its name says).
    package func key(named name: IdentityName) throws -> any StoredKey {
        let path = path(of: name)
        let read: (bytes: [UInt8], status: stat)?
        do {
            read = try AtomicFile.readWithStatus(path, limit: Vault.maximumFileSize)
        } catch let error as FileError {
            throw VaultError.corrupt(path: path, reason: error.reason)
        }
        guard let read else { throw VaultError.notFound(name: name.rawValue, directory: directory) }
        let version = (try? Vault.members(of: read.bytes, path: path))?["version"]?.integer(as: Int.self)
        let kind = Self.storedKeyKinds.first { version.map($0.formatVersions.contains) ?? false } ?? SealedSeed.self
        let key = try kind.init(file: read.bytes, path: path, stamp: AtomicFile.Stamp(read.status))
        guard key.name == name else { throw VaultError.misnamed(path: path, inside: key.name.rawValue) }
        return key
    }
}
