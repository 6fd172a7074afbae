import FoundationEssentials
import StellarKeys
import StellarText
import StellarTransactions

/// An identity whose key is a NIST P-256 signing key resident in this machine's TPM (vault format version 5;
/// docs/FORMAT.md): the TPM's wrapped key, its public key, and the salt and cost that turn the PIN into the key's
/// authorisation value (the same Argon2id and `TPMBoundKeys.authValue` as a version 3 vault). Nothing in it is
/// secret without this TPM, which counts every wrong PIN. The key has no Stellar account: it signs only as an
/// OpenZeppelin smart account's External signer.
package struct TPMKeyVault: Sendable, Equatable {
    package static let version = 5
    package let name: IdentityName
    package let publicKey: P256PublicKey
    package let key: TPMSigningKey
    package let kdf: KDFParameters
    package let createdAt: String
    let salt: [UInt8]

    /// A new key in `tpm`, whose authorisation value comes from `pin` at cost `kdf` with a fresh salt. A TPM whose
    /// guess limit would not hold is refused (`TPMError.lockoutOpen`) unless the person allowed it.
    static func create(name: IdentityName, pin: PIN, kdf: KDFParameters, tpm: TPMSealer, createdAt: Date = Date()) throws -> TPMKeyVault {
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltBytes)
        let authValue = TPMBoundKeys(pinDerived: try kdf.deriveKey(pin: pin, salt: salt)).authValue
        let key = try tpm.createSigningKey(authValue: authValue)
        return TPMKeyVault(name: name, publicKey: try P256PublicKey(point: key.publicKey), key: key, kdf: kdf,
                           createdAt: createdAt.formatted(.iso8601), salt: salt)
    }

    /// The key's authorisation value for `pin`: right or wrong, only the TPM can tell, and it counts.
    func authValue(pin: PIN) throws -> SecureBytes {
        TPMBoundKeys(pinDerived: try kdf.deriveKey(pin: pin, salt: salt)).authValue
    }

    // MARK: The file

    struct File: Codable, CheckedFile {
        struct KDF: Codable {
            var algorithm: String
            var opsLimit: UInt64
            var memLimit: UInt64
            var salt: String
        }
        var format: String
        var version: Int
        var name: String
        var p256PublicKey: String
        var kdf: KDF
        var createdAt: String
        var tpm: Vault.File.TPMObject
        var check: String

        /// SHA-256 over every other field, one per line, as Vault.File's digest is made (docs/FORMAT.md).
        var expectedCheck: String {
            let fields = [format, String(version), name, p256PublicKey, kdf.algorithm, String(kdf.opsLimit), String(kdf.memLimit),
                          kdf.salt, createdAt, tpm.template, tpm.primary, tpm.public, tpm.private]
            return Vault.checkDigest(fields)
        }
    }

    package func encoded() -> [UInt8] {
        let file = File(format: Vault.formatName, version: Self.version, name: name.rawValue, p256PublicKey: Base64.string(publicKey.point),
                        kdf: .init(algorithm: Vault.kdfAlgorithm, opsLimit: kdf.opsLimit, memLimit: kdf.memLimit, salt: Base64.string(salt)),
                        createdAt: createdAt,
                        tpm: .init(primaryName: key.primaryName, publicArea: key.publicArea, privateArea: key.privateArea),
                        check: "")
        return Vault.fileBytes(file)
    }

    /// Parses and checks a version 5 vault without the TPM. `path` is only for messages.
    package init(file bytes: [UInt8], path: String) throws {
        func corrupt(_ reason: String) -> VaultError { .corrupt(path: path, reason: reason) }
        let members = try Vault.members(of: bytes, path: path)
        guard members["version"]?.integer(as: Int.self) == Self.version else { throw corrupt("it is not a version \(Self.version) vault") }
        for field in ["publicKey", "cipher", "account", "pkcs11"] where members[field] != nil && members[field] != .null {
            throw corrupt("a version 5 vault has no '\(field)'")
        }
        guard let name = members["name"]?.string, let publicKey = members["p256PublicKey"]?.string,
              let kdf = members["kdf"]?.object, let algorithm = kdf["algorithm"]?.string,
              let opsLimit = kdf["opsLimit"]?.integer(as: UInt64.self), let memLimit = kdf["memLimit"]?.integer(as: UInt64.self),
              let salt = kdf["salt"]?.string, let createdAt = members["createdAt"]?.string,
              let tpm = members["tpm"]?.object, let template = tpm["template"]?.string, let primary = tpm["primary"]?.string,
              let publicArea = tpm["public"]?.string, let privateArea = tpm["private"]?.string,
              let check = members["check"]?.string
        else { throw corrupt("a field is missing or of the wrong type") }
        let file = File(format: Vault.formatName, version: Self.version, name: name, p256PublicKey: publicKey,
                        kdf: .init(algorithm: algorithm, opsLimit: opsLimit, memLimit: memLimit, salt: salt), createdAt: createdAt,
                        tpm: .init(template: template, primary: primary, public: publicArea, private: privateArea), check: check)
        let parameters = KDFParameters(opsLimit: opsLimit, memLimit: memLimit)
        guard parameters.isWithinAcceptedBounds else { throw VaultError.unsafeParameters(path: path) }
        guard file.check == file.expectedCheck else { throw VaultError.tampered(path: path, reason: "its check digest does not match its contents") }
        guard algorithm == Vault.kdfAlgorithm else { throw corrupt("unknown key derivation '\(TerminalText.escaped(algorithm))'") }
        guard template == Vault.tpmPrimaryTemplate else { throw corrupt("unknown TPM primary template '\(TerminalText.escaped(template))'") }
        guard let saltBytes = Base64.decode(salt), saltBytes.count == Sodium.pwhashSaltBytes else { throw corrupt("the salt is not 16 bytes of base64") }
        guard let point = Base64.decode(publicKey), let p256 = try? P256PublicKey(point: point) else {
            throw corrupt("its public key is not an uncompressed P-256 point in base64")
        }
        guard let primaryName = Base64.decode(primary), let publicBytes = Base64.decode(publicArea), let privateBytes = Base64.decode(privateArea),
              let key = TPMSigningKey(primaryName: primaryName, publicArea: publicBytes, privateArea: privateBytes, publicKey: point)
        else { throw corrupt("its TPM key is not a primary key's Name, a TPM2B_PUBLIC and a TPM2B_PRIVATE in base64") }
        guard let identity = try? IdentityName(name) else { throw corrupt("the identity name is not valid") }
        self.init(name: identity, publicKey: p256, key: key, kdf: parameters, createdAt: createdAt, salt: saltBytes)
    }

    private init(name: IdentityName, publicKey: P256PublicKey, key: TPMSigningKey, kdf: KDFParameters, createdAt: String, salt: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
        self.key = key
        self.kdf = kdf
        self.createdAt = createdAt
        self.salt = salt
    }
}
