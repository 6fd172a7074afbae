import FoundationEssentials
import StellarKeys
import StellarTransactions
import StellarText

/// One identity's vault: its public address in the clear, its Ed25519 seed encrypted under a key that Argon2id
/// derives from the PIN, and for an identity made from a recovery phrase (format version 2) the SEP-5 account
/// root encrypted with it. In a TPM-bound vault (format version 3) the key also needs a secret that only this
/// machine's TPM gives back, and only for the right PIN. A version 4 vault holds no secret at all: it names the
/// PKCS#11 token whose key the identity is (`token`), and the token asks its own PIN. docs/FORMAT.md describes
/// the file byte for byte.
public struct Vault: Sendable, Equatable {
    public static let formatName = "stellar-keystore-vault"
    /// The newest version this program reads. Version 5 (a P-256 key in the TPM) is `TPMKeyVault`'s.
    public static let currentVersion = 5
    static let kdfAlgorithm = "argon2id13"
    static let cipherAlgorithm = "xsalsa20poly1305"
    /// No vault is near this size; anything larger is refused before it is parsed.
    public static let maximumFileSize = 64 * 1024
    /// The primary key's template a version 3 vault names, so that another template can come later: the TCG
    /// "Storage Root Key" template for ECC NIST P-256 (`TPMSealer` implementations regenerate it from this).
    public static let tpmPrimaryTemplate = "tcg-srk-ecc-p256"

    public let name: IdentityName
    public let publicKey: PublicKey
    public let createdAt: String
    /// The sealed seed of versions 1 to 3; nil in a version 4 vault, whose key is in a token.
    let sealed: Encryption?
    /// The token key a version 4 vault names; nil for a vault that holds its seed.
    public let token: PKCS11KeyReference?

    /// The seed's encryption: the PIN's key derivation, the cipher's nonce and ciphertext, and what else the
    /// vault's key needs.
    struct Encryption: Sendable, Equatable {
        let kdf: KDFParameters
        let isKDFChosen: Bool
        let account: UInt32?
        let tpmObject: TPMSealedObject?
        let salt: [UInt8]
        let nonce: [UInt8]
        let ciphertext: [UInt8]
    }

    /// The PIN's key derivation; nil for a token's key, which has none.
    public var kdf: KDFParameters? { sealed?.kdf }
    /// Whether `kdf` is a level that whoever made the vault named (an app's `.interactive`, a person's choice on
    /// the command line), rather than one `KDFChoice.auto` picked: a cost chosen on purpose is never called too
    /// cheap for the machine (`Keystore.isWeakerThanThisMachineAffords`). Recorded as `kdf.chosen`, which
    /// readers that do not know it ignore (docs/FORMAT.md).
    public var isKDFChosen: Bool { sealed?.isKDFChosen ?? false }
    /// The SEP-5 account number of this identity's key, for a vault made from a recovery phrase (version 2).
    public var account: UInt32? { sealed?.account }
    /// The TPM object a version 3 vault's key needs; nil for a vault that the PIN alone opens.
    public var tpmObject: TPMSealedObject? { sealed?.tpmObject }
    var salt: [UInt8] { sealed?.salt ?? [] }

    public var isTPMBound: Bool { tpmObject != nil }

    /// Encrypts `keyPair`'s seed under `pin` with fresh random salt and nonce; with `root`, also the SEP-5 account
    /// root that `keyPair` is account `root.account` of (format version 2). With `tpm`, the key also needs a
    /// fresh secret sealed in that TPM (format version 3). `renewing` is the sealed object of the binding this
    /// vault replaces, if any: its primary key's Name must still be the TPM's, so that nothing between here and
    /// the TPM can pose as it now (`TPM.seal`). `kdfChosen`: `kdf` was named, not picked by `auto` (`isKDFChosen`).
    package static func seal(
        _ keyPair: KeyPair, root: (root: AccountRoot, account: UInt32)? = nil, name: IdentityName, pin: PIN,
        kdf: KDFParameters = .default, kdfChosen: Bool = false, tpm: TPMSealer? = nil, renewing previous: TPMSealedObject? = nil,
        createdAt: Date = Date()
    ) throws -> Vault {
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltBytes)
        let nonce = Sodium.randomBytes(count: Sodium.secretBoxNonceBytes)
        let pinDerived = try kdf.deriveKey(pin: pin, salt: salt)
        var key = pinDerived
        var tpmObject: TPMSealedObject?
        if let tpm {
            let keys = TPMBoundKeys(pinDerived: pinDerived)
            let tpmSecret = SecureBytes.random(count: TPMBoundKeys.secretBytes)
            tpmObject = try tpm.seal(tpmSecret, authValue: keys.authValue, primaryName: previous?.primaryName)
            key = keys.vaultKey(tpmSecret: tpmSecret)
        }
        let plaintext = SecureBytes(count: root == nil ? 32 : 96) { out in
            keyPair.seed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[0..<32]).copyMemory(from: $0) }
            root?.root.node.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[32..<96]).copyMemory(from: $0) }
        }
        let ciphertext = plaintext.sealed(nonce: nonce, key: key)
        return Vault(
            name: name, publicKey: keyPair.publicKey, createdAt: createdAt.formatted(.iso8601),
            sealed: Encryption(kdf: kdf, isKDFChosen: kdfChosen, account: root?.account, tpmObject: tpmObject, salt: salt,
                               nonce: nonce, ciphertext: ciphertext),
            token: nil)
    }

    /// A version 4 vault: identity `name` is the key `reference` names in a PKCS#11 token. It holds no secret.
    public static func naming(_ reference: PKCS11KeyReference, name: IdentityName, createdAt: Date = Date()) -> Vault {
        Vault(name: name, publicKey: reference.publicKey, createdAt: createdAt.formatted(.iso8601), sealed: nil, token: reference)
    }

    /// Decrypts the seed with `pin` and checks that it belongs to the stored address.
    ///
    /// A wrong PIN and a modified salt, nonce or ciphertext look the same to the cipher; `init(file:path:)` has
    /// already told damage apart with the file's check digest, so a failure here is reported as a wrong PIN.
    package func open(pin: PIN, path: String = "vault", tpm: TPMSealer? = nil) throws -> KeyPair {
        try openWithRoot(pin: pin, path: path, tpm: tpm).keyPair
    }

    /// Like `open`, and also the SEP-5 account root of a vault made from a recovery phrase.
    /// A TPM-bound vault is opened through `tpm`: a wrong PIN is then counted by the TPM (`TPMError.wrongPIN`).
    package func openWithRoot(pin: PIN, path: String = "vault", tpm: TPMSealer? = nil) throws -> (keyPair: KeyPair, root: AccountRoot?) {
        guard let sealed else { throw KeystoreUseError.keyInToken(name.rawValue, .open) }
        if tpmObject != nil && tpm == nil { throw TPMError.notSupported }
        var key = try sealed.kdf.deriveKey(pin: pin, salt: sealed.salt)
        if let tpmObject, let tpm {
            let keys = TPMBoundKeys(pinDerived: key)
            key = keys.vaultKey(tpmSecret: try tpm.unseal(tpmObject, authValue: keys.authValue))
        }
        guard let plaintext = SecureBytes.opening(sealed.ciphertext, nonce: sealed.nonce, key: key) else {
            // With a TPM the PIN has already proved right (the TPM released its secret), so only damage is left.
            if tpmObject != nil { throw VaultError.tampered(path: path, reason: "its key does not open its ciphertext") }
            throw VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 0)
        }
        let keyPair = try KeyPair(seedAt: 0..<32, of: plaintext)
        guard keyPair.publicKey == publicKey else {
            throw VaultError.tampered(path: path, reason: "its address does not match its key")
        }
        guard let account else { return (keyPair, nil) }
        let root = AccountRoot(node: plaintext.slice(32..<96))
        guard try root.keyPair(account: account) == keyPair else {
            throw VaultError.tampered(path: path, reason: "its key is not account \(account) of its recovery phrase")
        }
        return (keyPair, root)
    }

    // MARK: The file

    /// The JSON form, field for field (package-visible so that the fuzzer can re-seal its check digest).
    package struct File: Codable {
        struct KDF: Codable {
            var algorithm: String
            /// Written only as `true`; outside the check digest, so that readers that do not know it open the
            /// vault alike (docs/FORMAT.md).
            var chosen: Bool?
            var opsLimit: UInt64
            var memLimit: UInt64
            var salt: String
        }
        struct Cipher: Codable {
            var algorithm: String
            var nonce: String
            var ciphertext: String
        }
        struct TPMObject: Codable {
            var template: String
            var primary: String
            var `public`: String
            var `private`: String

            init(template: String, primary: String, public: String, private: String) {
                self.template = template
                self.primary = primary
                self.public = `public`
                self.private = `private`
            }

            /// An object a TPM made under keystore's primary (a sealed seed or a signing key), as a vault keeps it.
            init(primaryName: [UInt8], publicArea: [UInt8], privateArea: [UInt8]) {
                self.init(template: Vault.tpmPrimaryTemplate, primary: Base64.string(primaryName),
                          public: Base64.string(publicArea), private: Base64.string(privateArea))
            }
        }
        struct PKCS11: Codable {
            var module: String
            var tokenSerial: String
            var tokenLabel: String
            var keyId: String
            var keyLabel: String
        }
        var format: String
        var version: Int
        var name: String
        var publicKey: String
        /// Versions 1 to 3.
        var kdf: KDF?
        var cipher: Cipher?
        var createdAt: String
        /// Version 2, and version 3 made from a recovery phrase.
        var account: UInt32?
        /// Version 3 only.
        var tpm: TPMObject?
        /// Version 4 only.
        var pkcs11: PKCS11?
        package var check: String

        /// SHA-256 over every other field, one per line, as they are written in the file (docs/FORMAT.md).
        /// Not a secret MAC (anyone can recompute it): it tells accidental damage and naive edits apart from a
        /// wrong PIN. Authenticity comes from the cipher's MAC and the address check after decryption (for a
        /// token's key, from the token's signatures, each checked against `publicKey`).
        package var expectedCheck: String {
            var fields = [format, String(version), name, publicKey]
            if let kdf, let cipher {
                fields += [kdf.algorithm, String(kdf.opsLimit), String(kdf.memLimit), kdf.salt, cipher.algorithm, cipher.nonce,
                           cipher.ciphertext]
            }
            fields += [createdAt] + (account.map { [String($0)] } ?? [])
                + (tpm.map { [$0.template, $0.primary, $0.public, $0.private] } ?? [])
                + (pkcs11.map { [$0.module, $0.tokenSerial, $0.tokenLabel, $0.keyId, $0.keyLabel] } ?? [])
            return Vault.checkDigest(fields)
        }
    }

    /// base64(SHA-256) of `fields`, each followed by a newline: every version's check digest (docs/FORMAT.md).
    static func checkDigest(_ fields: [String]) -> String {
        let text = Array(fields.map { $0 + "\n" }.joined().utf8)
        return Base64.string(text.withUnsafeBytes { Sodium.sha256($0) })
    }

    /// A vault file's bytes, as every version is written: its check digest filled in, pretty-printed, keys sorted,
    /// a final newline.
    static func fileBytes(_ file: some CheckedFile) -> [UInt8] {
        var file = file
        file.check = file.expectedCheck
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try! encoder.encode(file)) + [UInt8(ascii: "\n")]
    }

    /// The members of a vault file's one JSON object, read strictly (`StrictJSON`), within the size any vault
    /// has, and named a keystore vault; anything else is damage, named as the file's.
    static func members(of bytes: [UInt8], path: String) throws -> [String: StrictJSON.Value] {
        guard bytes.count <= maximumFileSize else {
            throw VaultError.corrupt(path: path, reason: "it is \(bytes.count) bytes, far too large for a vault")
        }
        let members: [String: StrictJSON.Value]
        do {
            members = try StrictJSON.parse(bytes, integersOnly: true)
        } catch let violation as StrictJSON.Violation {
            throw VaultError.corrupt(path: path, reason: violation.reason)
        }
        guard members["format"]?.string == formatName else { throw VaultError.corrupt(path: path, reason: "it is not a \(formatName) file") }
        return members
    }

    /// The fields every version has, by JSON type, so that a field of the wrong type is named as such.
    private static let expectedKinds: [(String, StrictJSON.Kind)] = [
        ("format", .string), ("version", .integer), ("name", .string), ("publicKey", .string), ("createdAt", .string),
        ("check", .string),
    ]
    /// The fields of a vault that holds its seed (versions 1 to 3).
    private static let sealedKinds: [(String, StrictJSON.Kind)] = [("kdf", .object), ("cipher", .object)]

    /// The vault as JSON bytes: format version 4 for a token's key, 3 when TPM-bound, else 2 when it holds an
    /// account root, else 1.
    public func encoded() -> [UInt8] {
        let file = File(
            format: Self.formatName, version: token != nil ? 4 : tpmObject != nil ? 3 : account == nil ? 1 : 2, name: name.rawValue,
            publicKey: publicKey.accountID,
            kdf: sealed.map { .init(algorithm: Self.kdfAlgorithm, chosen: $0.isKDFChosen ? true : nil, opsLimit: $0.kdf.opsLimit,
                                    memLimit: $0.kdf.memLimit, salt: Base64.string($0.salt)) },
            cipher: sealed.map { .init(algorithm: Self.cipherAlgorithm, nonce: Base64.string($0.nonce),
                                       ciphertext: Base64.string($0.ciphertext)) },
            createdAt: createdAt, account: account,
            tpm: tpmObject.map { .init(primaryName: $0.primaryName, publicArea: $0.publicArea, privateArea: $0.privateArea) },
            pkcs11: token.map { .init(module: $0.module, tokenSerial: $0.tokenSerial, tokenLabel: $0.tokenLabel,
                                      keyId: Base64.string($0.keyID), keyLabel: $0.keyLabel) },
            check: "")
        return Self.fileBytes(file)
    }

    /// Parses and checks a vault file without decrypting it. `path` is only for messages.
    public init(file bytes: [UInt8], path: String) throws {
        func corrupt(_ reason: String) -> VaultError { .corrupt(path: path, reason: reason) }
        let members = try Self.members(of: bytes, path: path)
        let kinds = members.mapValues(\.kind)
        guard let versionKind = kinds["version"] else { throw corrupt("it has no format version") }
        guard versionKind == .integer else { throw corrupt("its format version is \(versionKind.rawValue), not an integer") }
        guard let version = members["version"]?.integer(as: Int.self) else { throw corrupt("its format version is out of range") }
        guard version <= Self.currentVersion else { throw VaultError.unsupportedVersion(path: path, version: version) }
        guard version >= 1 else { throw corrupt("format version \(version) does not exist") }
        // A P-256 key in the TPM has no Stellar account: nothing that signs as one may open it.
        if version == TPMKeyVault.version { throw VaultError.p256Key(path: path) }
        for (field, kind) in Self.expectedKinds + (version == 4 ? [("pkcs11", .object)] : Self.sealedKinds) {
            guard let found = kinds[field] else { throw corrupt("the field '\(field)' is missing") }
            guard found == kind else { throw corrupt("the field '\(field)' is \(found.rawValue), not \(kind.rawValue)") }
        }
        if let chosen = members["kdf"]?.object?["chosen"], chosen.kind != .boolean, chosen != .null {
            throw corrupt("the field 'kdf.chosen' is \(chosen.kind.rawValue), not true or false")
        }
        guard let file = File(members) else { throw corrupt("a field is missing or of the wrong type") }
        if version == 4 {
            // A token's key: no seed, no PIN derivation, no TPM object; anything of theirs would be read by nobody.
            for field in ["kdf", "cipher", "account", "tpm"] where kinds[field] != nil && members[field] != .null {
                throw corrupt("a version 4 vault has no '\(field)'")
            }
        } else if kinds["pkcs11"] != nil && members["pkcs11"] != .null {
            throw corrupt("only a version 4 vault names a token")
        }
        if let kdf = file.kdf, !KDFParameters(opsLimit: kdf.opsLimit, memLimit: kdf.memLimit).isWithinAcceptedBounds {
            throw VaultError.unsafeParameters(path: path)
        }
        guard file.check == file.expectedCheck else { throw VaultError.tampered(path: path, reason: "its check digest does not match its contents") }
        guard let publicKey = try? PublicKey(accountID: file.publicKey) else { throw corrupt("the address is not a valid G… account ID") }
        guard let name = try? IdentityName(file.name) else { throw corrupt("the identity name is not valid") }
        if version == 4, let pkcs11 = file.pkcs11 {
            guard let keyID = Base64.decode(pkcs11.keyId) else { throw corrupt("the token key's id is not base64") }
            do {
                let reference = try PKCS11KeyReference(module: pkcs11.module, tokenSerial: pkcs11.tokenSerial, tokenLabel: pkcs11.tokenLabel,
                                                       keyID: keyID, keyLabel: pkcs11.keyLabel, publicKey: publicKey)
                self.init(name: name, publicKey: publicKey, createdAt: file.createdAt, sealed: nil, token: reference)
            } catch let error as PKCS11KeyReference.Invalid {
                throw corrupt(error.reason)
            }
            return
        }
        guard let kdfFields = file.kdf, let cipher = file.cipher else { throw corrupt("a field is missing or of the wrong type") }
        let kdf = KDFParameters(opsLimit: kdfFields.opsLimit, memLimit: kdfFields.memLimit)
        guard kdfFields.algorithm == Self.kdfAlgorithm else { throw corrupt("unknown key derivation '\(TerminalText.escaped(kdfFields.algorithm))'") }
        guard cipher.algorithm == Self.cipherAlgorithm else { throw corrupt("unknown cipher '\(TerminalText.escaped(cipher.algorithm))'") }
        guard let salt = Base64.decode(kdfFields.salt), salt.count == Sodium.pwhashSaltBytes else { throw corrupt("the salt is not 16 bytes of base64") }
        guard let nonce = Base64.decode(cipher.nonce), nonce.count == Sodium.secretBoxNonceBytes else { throw corrupt("the nonce is not 24 bytes of base64") }
        // Version 1: the seed. Version 2: the seed, then the 64-byte account root, and the account number.
        // Version 3: either of those, and the TPM object.
        let plaintextCount = file.account == nil ? 32 : 96
        if version == 1 && file.account != nil { throw corrupt("a version 1 vault has no account number") }
        if version == 2 && file.account == nil { throw corrupt("the account number is missing") }
        if version != 3 && kinds["tpm"] != nil { throw corrupt("only a version 3 vault has a TPM object") }
        var tpmObject: TPMSealedObject?
        if version == 3 {
            guard let found = kinds["tpm"] else { throw corrupt("the field 'tpm' is missing") }
            guard found == .object, let tpm = file.tpm else { throw corrupt("the field 'tpm' is \(found.rawValue), not object") }
            guard tpm.template == Vault.tpmPrimaryTemplate else {
                throw corrupt("unknown TPM primary template '\(TerminalText.escaped(tpm.template))'")
            }
            guard let primaryName = Base64.decode(tpm.primary), let publicArea = Base64.decode(tpm.public),
                  let privateArea = Base64.decode(tpm.private),
                  let object = TPMSealedObject(primaryName: primaryName, publicArea: publicArea, privateArea: privateArea)
            else { throw corrupt("its TPM object is not a primary key's Name, a TPM2B_PUBLIC and a TPM2B_PRIVATE in base64") }
            tpmObject = object
        }
        guard let ciphertext = Base64.decode(cipher.ciphertext),
              ciphertext.count == plaintextCount + Sodium.secretBoxMACBytes
        else { throw corrupt("the ciphertext is not \(plaintextCount + Sodium.secretBoxMACBytes) bytes of base64") }
        self.init(name: name, publicKey: publicKey, createdAt: file.createdAt,
                  sealed: Encryption(kdf: kdf, isKDFChosen: kdfFields.chosen == true, account: file.account, tpmObject: tpmObject,
                                     salt: salt, nonce: nonce, ciphertext: ciphertext),
                  token: nil)
    }

    private init(name: IdentityName, publicKey: PublicKey, createdAt: String, sealed: Encryption?, token: PKCS11KeyReference?) {
        self.name = name
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.sealed = sealed
        self.token = token
    }
}

extension Vault.File {
    /// The fields as `StrictJSON` read them, as `JSONDecoder` would decode them (members it does not know
    /// are ignored; an optional one may be absent or null); nil for a missing field or one of the wrong type.
    init?(_ members: [String: StrictJSON.Value]) {
        func optional<Value>(_ key: String, in object: [String: StrictJSON.Value]? = nil,
                             _ read: (StrictJSON.Value) -> Value?) -> Value?? {
            guard let value = (object ?? members)[key], value != .null else { return .some(nil) }
            return read(value).map { .some($0) }
        }
        guard let format = members["format"]?.string, let version = members["version"]?.integer(as: Int.self),
              let name = members["name"]?.string, let publicKey = members["publicKey"]?.string,
              let kdf = optional("kdf", { value -> KDF? in
                  guard let kdf = value.object, let algorithm = kdf["algorithm"]?.string,
                        let opsLimit = kdf["opsLimit"]?.integer(as: UInt64.self), let memLimit = kdf["memLimit"]?.integer(as: UInt64.self),
                        let salt = kdf["salt"]?.string,
                        let chosen = optional("chosen", in: kdf, { value -> Bool? in
                            if case .boolean(let flag) = value { return flag }
                            return nil
                        })
                  else { return nil }
                  return KDF(algorithm: algorithm, chosen: chosen, opsLimit: opsLimit, memLimit: memLimit, salt: salt)
              }),
              let cipher = optional("cipher", { value -> Cipher? in
                  guard let cipher = value.object, let algorithm = cipher["algorithm"]?.string,
                        let nonce = cipher["nonce"]?.string, let ciphertext = cipher["ciphertext"]?.string
                  else { return nil }
                  return Cipher(algorithm: algorithm, nonce: nonce, ciphertext: ciphertext)
              }),
              let createdAt = members["createdAt"]?.string, let check = members["check"]?.string,
              let account = optional("account", { $0.integer(as: UInt32.self) }),
              let tpm = optional("tpm", { value -> TPMObject? in
                  guard let object = value.object, let template = object["template"]?.string,
                        let primary = object["primary"]?.string, let publicArea = object["public"]?.string,
                        let privateArea = object["private"]?.string
                  else { return nil }
                  return TPMObject(template: template, primary: primary, public: publicArea, private: privateArea)
              }),
              let pkcs11 = optional("pkcs11", { value -> PKCS11? in
                  guard let object = value.object, let module = object["module"]?.string,
                        let serial = object["tokenSerial"]?.string, let tokenLabel = object["tokenLabel"]?.string,
                        let keyID = object["keyId"]?.string, let keyLabel = object["keyLabel"]?.string
                  else { return nil }
                  return PKCS11(module: module, tokenSerial: serial, tokenLabel: tokenLabel, keyId: keyID, keyLabel: keyLabel)
              })
        else { return nil }
        self.init(format: format, version: version, name: name, publicKey: publicKey, kdf: kdf, cipher: cipher,
                  createdAt: createdAt, account: account, tpm: tpm, pkcs11: pkcs11, check: check)
    }
}

/// A vault file as written, whatever its version: its contents, and the check digest over them (docs/FORMAT.md).
protocol CheckedFile: Encodable {
    var check: String { get set }
    var expectedCheck: String { get }
}

extension Vault.File: CheckedFile {}
