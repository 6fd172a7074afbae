#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One identity's vault: its public address in the clear, its Ed25519 seed encrypted under a key that Argon2id
/// derives from the PIN. docs/FORMAT.md describes the file byte for byte.
public struct Vault: Sendable {
    public static let formatName = "stellar-keystore-vault"
    public static let currentVersion = 1
    static let kdfAlgorithm = "argon2id13"
    static let cipherAlgorithm = "xsalsa20poly1305"
    /// No vault is near this size; anything larger is refused before it is parsed.
    public static let maximumFileSize = 64 * 1024

    public let name: IdentityName
    public let publicKey: PublicKey
    public let kdf: KDFParameters
    public let createdAt: String
    let salt: [UInt8]
    let nonce: [UInt8]
    let ciphertext: [UInt8]

    /// Encrypts `keyPair`'s seed under `pin` with fresh random salt and nonce.
    public static func seal(
        _ keyPair: KeyPair, name: IdentityName, pin: PIN, kdf: KDFParameters = .default, createdAt: Date = Date()
    ) throws -> Vault {
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltBytes)
        let nonce = Sodium.randomBytes(count: Sodium.secretBoxNonceBytes)
        let key = try kdf.deriveKey(pin: pin, salt: salt)
        let ciphertext = keyPair.seed.withUnsafeBytes { seed in
            key.withUnsafeBytes { Sodium.secretBoxSeal(plaintext: seed, nonce: nonce, key: $0) }
        }
        return Vault(
            name: name, publicKey: keyPair.publicKey, kdf: kdf,
            createdAt: createdAt.formatted(.iso8601), salt: salt, nonce: nonce, ciphertext: ciphertext)
    }

    /// Decrypts the seed with `pin` and checks that it belongs to the stored address.
    ///
    /// A wrong PIN and a modified salt, nonce or ciphertext look the same to the cipher; `init(file:path:)` has
    /// already told damage apart with the file's check digest, so a failure here is reported as a wrong PIN.
    public func open(pin: PIN, path: String = "vault") throws -> KeyPair {
        let key = try kdf.deriveKey(pin: pin, salt: salt)
        var opened = false
        let seed = SecureBytes(count: ciphertext.count - Sodium.secretBoxMACBytes) { seed in
            opened = key.withUnsafeBytes {
                Sodium.secretBoxOpen(ciphertext: ciphertext, nonce: nonce, key: $0, plaintext: seed)
            }
        }
        guard opened else { throw VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 0) }
        let keyPair = try KeyPair(seed: seed)
        guard keyPair.publicKey == publicKey else {
            throw VaultError.tampered(path: path, reason: "its address does not match its key")
        }
        return keyPair
    }

    // MARK: The file

    private struct File: Codable {
        struct KDF: Codable {
            var algorithm: String
            var opsLimit: UInt64
            var memLimit: UInt64
            var salt: String
        }
        struct Cipher: Codable {
            var algorithm: String
            var nonce: String
            var ciphertext: String
        }
        var format: String
        var version: Int
        var name: String
        var publicKey: String
        var kdf: KDF
        var cipher: Cipher
        var createdAt: String
        var check: String

        /// SHA-256 over every other field, one per line, as they are written in the file (docs/FORMAT.md).
        /// Not a secret MAC (anyone can recompute it): it tells accidental damage and naive edits apart from a
        /// wrong PIN. Authenticity comes from the cipher's MAC and the address check after decryption.
        var expectedCheck: String {
            let fields = [format, String(version), name, publicKey, kdf.algorithm, String(kdf.opsLimit),
                          String(kdf.memLimit), kdf.salt, cipher.algorithm, cipher.nonce, cipher.ciphertext, createdAt]
            let text = Array(fields.map { $0 + "\n" }.joined().utf8)
            return Data(text.withUnsafeBytes { Sodium.sha256($0) }).base64EncodedString()
        }
    }

    private struct VersionProbe: Decodable {
        var format: String?
        var version: Int?
    }

    /// The vault as the JSON bytes of format version 1.
    public func encoded() -> [UInt8] {
        var file = File(
            format: Self.formatName, version: Self.currentVersion, name: name.rawValue, publicKey: publicKey.accountID,
            kdf: .init(algorithm: Self.kdfAlgorithm, opsLimit: kdf.opsLimit, memLimit: kdf.memLimit,
                       salt: Data(salt).base64EncodedString()),
            cipher: .init(algorithm: Self.cipherAlgorithm, nonce: Data(nonce).base64EncodedString(),
                          ciphertext: Data(ciphertext).base64EncodedString()),
            createdAt: createdAt, check: "")
        file.check = file.expectedCheck
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try! encoder.encode(file)) + [UInt8(ascii: "\n")]
    }

    /// Parses and checks a vault file without decrypting it. `path` is only for messages.
    public init(file bytes: [UInt8], path: String) throws {
        func corrupt(_ reason: String) -> VaultError { .corrupt(path: path, reason: reason) }
        guard bytes.count <= Self.maximumFileSize else { throw corrupt("it is \(bytes.count) bytes, far too large for a vault") }
        let data = Data(bytes)
        guard let probe = try? JSONDecoder().decode(VersionProbe.self, from: data) else { throw corrupt("it is not valid JSON") }
        guard probe.format == Self.formatName else { throw corrupt("it is not a keystore vault") }
        guard let version = probe.version else { throw corrupt("it has no format version") }
        guard version <= Self.currentVersion else { throw VaultError.unsupportedVersion(path: path, version: version) }
        guard version == 1 else { throw corrupt("format version \(version) does not exist") }
        guard let file = try? JSONDecoder().decode(File.self, from: data) else { throw corrupt("a field is missing or of the wrong type") }
        let kdf = KDFParameters(opsLimit: file.kdf.opsLimit, memLimit: file.kdf.memLimit)
        guard kdf.isWithinAcceptedBounds else { throw VaultError.unsafeParameters(path: path) }
        guard file.check == file.expectedCheck else { throw VaultError.tampered(path: path, reason: "its check digest does not match its contents") }
        guard file.kdf.algorithm == Self.kdfAlgorithm else { throw corrupt("unknown key derivation '\(file.kdf.algorithm.prefix(40))'") }
        guard file.cipher.algorithm == Self.cipherAlgorithm else { throw corrupt("unknown cipher '\(file.cipher.algorithm.prefix(40))'") }
        guard let salt = Data(base64Encoded: file.kdf.salt), salt.count == Sodium.pwhashSaltBytes else { throw corrupt("the salt is not 16 bytes of base64") }
        guard let nonce = Data(base64Encoded: file.cipher.nonce), nonce.count == Sodium.secretBoxNonceBytes else { throw corrupt("the nonce is not 24 bytes of base64") }
        guard let ciphertext = Data(base64Encoded: file.cipher.ciphertext),
              ciphertext.count == Sodium.signSeedBytes + Sodium.secretBoxMACBytes
        else { throw corrupt("the ciphertext is not 48 bytes of base64") }
        guard let publicKey = try? PublicKey(accountID: file.publicKey) else { throw corrupt("the address is not a valid G… account ID") }
        guard let name = try? IdentityName(file.name) else { throw corrupt("the identity name is not valid") }
        self.init(name: name, publicKey: publicKey, kdf: kdf, createdAt: file.createdAt,
                  salt: Array(salt), nonce: Array(nonce), ciphertext: Array(ciphertext))
    }

    private init(name: IdentityName, publicKey: PublicKey, kdf: KDFParameters, createdAt: String,
                 salt: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
        self.kdf = kdf
        self.createdAt = createdAt
        self.salt = salt
        self.nonce = nonce
        self.ciphertext = ciphertext
    }
}
