import FoundationEssentials
import StellarKeys
import StellarTransactions
import StellarText

/// One identity's vault: its public address in the clear, its Ed25519 seed encrypted under a key that Argon2id
/// derives from the PIN, and for an identity made from a recovery phrase (format version 2) the SEP-5 account
/// root encrypted with it. In a TPM-bound vault (format version 3) the key also needs a secret that only this
/// machine's TPM gives back, and only for the right PIN. docs/FORMAT.md describes the file byte for byte.
public struct Vault: Sendable, Equatable {
    public static let formatName = "stellar-keystore-vault"
    public static let currentVersion = 3
    static let kdfAlgorithm = "argon2id13"
    static let cipherAlgorithm = "xsalsa20poly1305"
    /// No vault is near this size; anything larger is refused before it is parsed.
    public static let maximumFileSize = 64 * 1024
    /// The primary key's template a version 3 vault names, so that another template can come later: the TCG
    /// "Storage Root Key" template for ECC NIST P-256 (`TPMSealer` implementations regenerate it from this).
    public static let tpmPrimaryTemplate = "tcg-srk-ecc-p256"

    public let name: IdentityName
    public let publicKey: PublicKey
    public let kdf: KDFParameters
    /// Whether `kdf` is a level that whoever made the vault named (an app's `.interactive`, a person's choice on
    /// the command line), rather than one `KDFChoice.auto` picked: a cost chosen on purpose is never called too
    /// cheap for the machine (`Keystore.isWeakerThanThisMachineAffords`). Recorded as `kdf.chosen`, which
    /// readers that do not know it ignore (docs/FORMAT.md).
    public let isKDFChosen: Bool
    public let createdAt: String
    /// The SEP-5 account number of this identity's key, for a vault made from a recovery phrase (version 2).
    public let account: UInt32?
    /// The TPM object a version 3 vault's key needs; nil for a vault that the PIN alone opens.
    public let tpmObject: TPMSealedObject?
    let salt: [UInt8]
    let nonce: [UInt8]
    let ciphertext: [UInt8]

    public var isTPMBound: Bool { tpmObject != nil }

    /// Encrypts `keyPair`'s seed under `pin` with fresh random salt and nonce; with `root`, also the SEP-5 account
    /// root that `keyPair` is account `root.account` of (format version 2). With `tpm`, the key also needs a
    /// fresh secret sealed in that TPM (format version 3). `renewing` is the sealed object of the binding this
    /// vault replaces, if any: its primary key's Name must still be the TPM's, so that nothing between here and
    /// the TPM can pose as it now (`TPM.seal`). `kdfChosen`: `kdf` was named, not picked by `auto` (`isKDFChosen`).
    public static func seal(
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
            name: name, publicKey: keyPair.publicKey, kdf: kdf, isKDFChosen: kdfChosen, createdAt: createdAt.formatted(.iso8601),
            account: root?.account, tpmObject: tpmObject, salt: salt, nonce: nonce, ciphertext: ciphertext)
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
        if tpmObject != nil && tpm == nil { throw TPMError.notSupported }
        var key = try kdf.deriveKey(pin: pin, salt: salt)
        if let tpmObject, let tpm {
            let keys = TPMBoundKeys(pinDerived: key)
            key = keys.vaultKey(tpmSecret: try tpm.unseal(tpmObject, authValue: keys.authValue))
        }
        guard let plaintext = SecureBytes.opening(ciphertext, nonce: nonce, key: key) else {
            // With a TPM the PIN has already proved right (the TPM released its secret), so only damage is left.
            if tpmObject != nil { throw VaultError.tampered(path: path, reason: "its key does not open its ciphertext") }
            throw VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 0)
        }
        let keyPair = try KeyPair(seed: plaintext.slice(0..<32))
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
        }
        var format: String
        var version: Int
        var name: String
        var publicKey: String
        var kdf: KDF
        var cipher: Cipher
        var createdAt: String
        /// Version 2, and version 3 made from a recovery phrase.
        var account: UInt32?
        /// Version 3 only.
        var tpm: TPMObject?
        package var check: String

        /// SHA-256 over every other field, one per line, as they are written in the file (docs/FORMAT.md).
        /// Not a secret MAC (anyone can recompute it): it tells accidental damage and naive edits apart from a
        /// wrong PIN. Authenticity comes from the cipher's MAC and the address check after decryption.
        package var expectedCheck: String {
            let fields = [format, String(version), name, publicKey, kdf.algorithm, String(kdf.opsLimit),
                          String(kdf.memLimit), kdf.salt, cipher.algorithm, cipher.nonce, cipher.ciphertext, createdAt]
                + (account.map { [String($0)] } ?? [])
                + (tpm.map { [$0.template, $0.primary, $0.public, $0.private] } ?? [])
            let text = Array(fields.map { $0 + "\n" }.joined().utf8)
            return Base64.string(text.withUnsafeBytes { Sodium.sha256($0) })
        }
    }


    /// The fields every version has, by JSON type, so that a field of the wrong type is named as such.
    private static let expectedKinds: [(String, StrictJSON.Kind)] = [
        ("format", .string), ("version", .integer), ("name", .string), ("publicKey", .string), ("kdf", .object),
        ("cipher", .object), ("createdAt", .string), ("check", .string),
    ]

    /// The vault as JSON bytes: format version 3 when TPM-bound, else 2 when it holds an account root, else 1.
    public func encoded() -> [UInt8] {
        var file = File(
            format: Self.formatName, version: tpmObject != nil ? 3 : account == nil ? 1 : 2, name: name.rawValue,
            publicKey: publicKey.accountID,
            kdf: .init(algorithm: Self.kdfAlgorithm, chosen: isKDFChosen ? true : nil, opsLimit: kdf.opsLimit,
                       memLimit: kdf.memLimit, salt: Base64.string(salt)),
            cipher: .init(algorithm: Self.cipherAlgorithm, nonce: Base64.string(nonce),
                          ciphertext: Base64.string(ciphertext)),
            createdAt: createdAt, account: account,
            tpm: tpmObject.map { .init(template: Vault.tpmPrimaryTemplate, primary: Base64.string($0.primaryName),
                                       public: Base64.string($0.publicArea), private: Base64.string($0.privateArea)) },
            check: "")
        file.check = file.expectedCheck
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try! encoder.encode(file)) + [UInt8(ascii: "\n")]
    }

    /// Parses and checks a vault file without decrypting it. `path` is only for messages.
    public init(file bytes: [UInt8], path: String) throws {
        func corrupt(_ reason: String) -> VaultError { .corrupt(path: path, reason: reason) }
        guard bytes.count <= Self.maximumFileSize else { throw corrupt("it is \(bytes.count) bytes, far too large for a vault") }
        let members: [String: StrictJSON.Value]
        do {
            members = try StrictJSON.parse(bytes, integersOnly: true)
        } catch let violation as StrictJSON.Violation {
            throw corrupt(violation.reason)
        }
        let kinds = members.mapValues(\.kind)
        guard members["format"]?.string == Self.formatName else { throw corrupt("it is not a \(Self.formatName) file") }
        guard let versionKind = kinds["version"] else { throw corrupt("it has no format version") }
        guard versionKind == .integer else { throw corrupt("its format version is \(versionKind.rawValue), not an integer") }
        guard let version = members["version"]?.integer(as: Int.self) else { throw corrupt("its format version is out of range") }
        guard version <= Self.currentVersion else { throw VaultError.unsupportedVersion(path: path, version: version) }
        guard version >= 1 else { throw corrupt("format version \(version) does not exist") }
        for (field, kind) in Self.expectedKinds {
            guard let found = kinds[field] else { throw corrupt("the field '\(field)' is missing") }
            guard found == kind else { throw corrupt("the field '\(field)' is \(found.rawValue), not \(kind.rawValue)") }
        }
        if let chosen = members["kdf"]?.object?["chosen"], chosen.kind != .boolean, chosen != .null {
            throw corrupt("the field 'kdf.chosen' is \(chosen.kind.rawValue), not true or false")
        }
        guard let file = File(members) else { throw corrupt("a field is missing or of the wrong type") }
        let kdf = KDFParameters(opsLimit: file.kdf.opsLimit, memLimit: file.kdf.memLimit)
        guard kdf.isWithinAcceptedBounds else { throw VaultError.unsafeParameters(path: path) }
        guard file.check == file.expectedCheck else { throw VaultError.tampered(path: path, reason: "its check digest does not match its contents") }
        guard file.kdf.algorithm == Self.kdfAlgorithm else { throw corrupt("unknown key derivation '\(TerminalText.escaped(file.kdf.algorithm))'") }
        guard file.cipher.algorithm == Self.cipherAlgorithm else { throw corrupt("unknown cipher '\(TerminalText.escaped(file.cipher.algorithm))'") }
        guard let salt = Base64.decode(file.kdf.salt), salt.count == Sodium.pwhashSaltBytes else { throw corrupt("the salt is not 16 bytes of base64") }
        guard let nonce = Base64.decode(file.cipher.nonce), nonce.count == Sodium.secretBoxNonceBytes else { throw corrupt("the nonce is not 24 bytes of base64") }
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
        guard let ciphertext = Base64.decode(file.cipher.ciphertext),
              ciphertext.count == plaintextCount + Sodium.secretBoxMACBytes
        else { throw corrupt("the ciphertext is not \(plaintextCount + Sodium.secretBoxMACBytes) bytes of base64") }
        guard let publicKey = try? PublicKey(accountID: file.publicKey) else { throw corrupt("the address is not a valid G… account ID") }
        guard let name = try? IdentityName(file.name) else { throw corrupt("the identity name is not valid") }
        self.init(name: name, publicKey: publicKey, kdf: kdf, isKDFChosen: file.kdf.chosen == true, createdAt: file.createdAt,
                  account: file.account, tpmObject: tpmObject, salt: salt, nonce: nonce, ciphertext: ciphertext)
    }

    private init(name: IdentityName, publicKey: PublicKey, kdf: KDFParameters, isKDFChosen: Bool, createdAt: String,
                 account: UInt32?, tpmObject: TPMSealedObject?, salt: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
        self.kdf = kdf
        self.isKDFChosen = isKDFChosen
        self.createdAt = createdAt
        self.account = account
        self.tpmObject = tpmObject
        self.salt = salt
        self.nonce = nonce
        self.ciphertext = ciphertext
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
              let kdf = members["kdf"]?.object, let kdfAlgorithm = kdf["algorithm"]?.string,
              let opsLimit = kdf["opsLimit"]?.integer(as: UInt64.self), let memLimit = kdf["memLimit"]?.integer(as: UInt64.self),
              let salt = kdf["salt"]?.string,
              let chosen = optional("chosen", in: kdf, { value -> Bool? in
                  if case .boolean(let flag) = value { return flag }
                  return nil
              }),
              let cipher = members["cipher"]?.object, let cipherAlgorithm = cipher["algorithm"]?.string,
              let nonce = cipher["nonce"]?.string, let ciphertext = cipher["ciphertext"]?.string,
              let createdAt = members["createdAt"]?.string, let check = members["check"]?.string,
              let account = optional("account", { $0.integer(as: UInt32.self) }),
              let tpm = optional("tpm", { value -> TPMObject? in
                  guard let object = value.object, let template = object["template"]?.string,
                        let primary = object["primary"]?.string, let publicArea = object["public"]?.string,
                        let privateArea = object["private"]?.string
                  else { return nil }
                  return TPMObject(template: template, primary: primary, public: publicArea, private: privateArea)
              })
        else { return nil }
        self.init(format: format, version: version, name: name, publicKey: publicKey,
                  kdf: KDF(algorithm: kdfAlgorithm, chosen: chosen, opsLimit: opsLimit, memLimit: memLimit, salt: salt),
                  cipher: Cipher(algorithm: cipherAlgorithm, nonce: nonce, ciphertext: ciphertext),
                  createdAt: createdAt, account: account, tpm: tpm, check: check)
    }
}
