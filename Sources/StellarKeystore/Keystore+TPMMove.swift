import FoundationEssentials
import StellarKeys
#if canImport(Glibc)
import Glibc
#endif

/// Moving an identity's key to another machine's TPM without its seed resting anywhere in the clear (issue 43,
/// part 4), as ssh-tpm-agent's wrapping to another TPM and tpm2-tools' `tpm2_duplicate`/`tpm2_import` do: the target writes
/// its TPM's storage key's public area (`writeTPMMoveTarget`); the source, after the identity's PIN, wraps the seed
/// to it in its own TPM (`wrapForTPMMove`: TPM2_Duplicate to that key); the target imports it in its TPM, checks
/// the address, and binds it to its TPM under a new PIN (`importTPMMove`). Formats: docs/FORMAT.md, "TPM move files".
extension Keystore {
    /// Writes this TPM's storage key's public area to `path` (a new file): what a source wraps a key to.
    public func writeTPMMoveTarget(to path: String) throws {
        let tpm = try movingTPM()
        try Self.refuseExisting(path)
        let file = TPMMoveTargetFile(storageKey: try tpm.storageKeyPublicArea())
        try AtomicFile.write(try file.encoded(), to: path, directory: AtomicFile.directory(of: path))
    }

    /// Wraps identity `name`'s seed, opened with `pin`, to the TPM whose move-target file is `target`, and writes the
    /// move file to `path` (a new file): only that TPM can open it. The identity stays here as it was. Its address.
    public func wrapForTPMMove(_ name: IdentityName, target: [UInt8], to path: String, pin: () throws -> PIN) throws -> String {
        let targetFile = try TPMMoveTargetFile(decoding: target)
        try Self.refuseExisting(path)
        guard vaults.exists(name) else { throw TPMMoveError.noSuchIdentity(name.rawValue) }
        let tpm = try movingTPM()
        // What cannot leave its token or TPM is refused by its kind, before any PIN.
        _ = try vaultReadyForPIN(name, for: .moveToTPM)
        let (keyPair, _) = try vaults.unlockWithRoot(name, pin: pin())
        let wrapped = try tpm.wrap(keyPair.seed, toStorageKey: targetFile.storageKey)
        let file = TPMMoveFile(address: keyPair.publicKey.accountID, wrapped: wrapped)
        try AtomicFile.write(try file.encoded(), to: path, directory: AtomicFile.directory(of: path))
        return file.address
    }

    /// Imports the move file `file` in this machine's TPM and binds the key it holds as identity `name` under the new
    /// PIN `pin` gives (asked only once the key is out and its address checked), at `kdf`; the vault written is then
    /// opened with that PIN and signs a probe. A file made for another TPM, or changed, is `TPMError.wrappedElsewhere`.
    public func importTPMMove(_ file: [UInt8], as name: IdentityName, kdf: KDFChoice = .auto, pin: () throws -> PIN) throws -> Created {
        let moveFile = try TPMMoveFile(decoding: file)
        guard !vaults.exists(name) else { throw VaultError.alreadyExists(name: name.rawValue) }
        let tpm = try movingTPM()
        _ = try checkTPMReadyToBind()
        let keyPair = try KeyPair(seed: try tpm.unwrap(moveFile.wrapped))
        guard keyPair.publicKey.accountID == moveFile.address else {
            throw TPMMoveError.addressMismatch(inFile: moveFile.address, unwrapped: keyPair.publicKey.accountID)
        }
        let pin = try pin()
        try pin.checkStrength()
        let made = try create(keyPair, root: nil, name: name, pin: pin, kdf: try cost(of: kdf), replacing: false, boundToTPM: true)
        let (opened, _) = try vaults.unlockWithRoot(name, pin: pin)
        try Self.probe(opened, name: name)
        return made
    }

    private func movingTPM() throws -> any TPMMoving {
        guard let tpm = try tpm() as? any TPMMoving else { throw TPMError.notSupported }
        return tpm
    }

    private static func refuseExisting(_ path: String) throws {
        var status = stat()
        if lstat(path, &status) == 0 { throw TPMMoveError.outputExists(path: printable(path)) }
    }
}

/// The target's file: `{"format": "keystore-tpm-move-target", "version": 1, "storageKey": base64 TPM2B_PUBLIC}`.
struct TPMMoveTargetFile: Codable {
    static let format = "keystore-tpm-move-target"
    var format = Self.format
    var version = 1
    let storageKey: [UInt8]

    init(storageKey: [UInt8]) { self.storageKey = storageKey }

    init(decoding bytes: [UInt8]) throws {
        let file = try TPMMoveFile.decode(Self.self, bytes, what: "TPM move-target")
        guard file.format == Self.format else { throw TPMMoveError.malformed(what: "TPM move-target", reason: "its format is not \(Self.format)") }
        guard file.version == 1 else { throw TPMMoveError.futureVersion(what: "TPM move-target", version: file.version) }
        self = file
    }

    func encoded() throws -> [UInt8] { try TPMMoveFile.encode(self) }

    enum CodingKeys: String, CodingKey { case format, version, storageKey }
    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        version = try container.decode(Int.self, forKey: .version)
        storageKey = try TPMMoveFile.bytes(container, .storageKey)
    }
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(version, forKey: .version)
        try container.encode(Data(storageKey).base64EncodedString(), forKey: .storageKey)
    }
}

/// The move file: the address it moves, and the TPM2_Duplicate outputs (public area, duplicate, encrypted seed),
/// base64. Nothing in it opens without the target TPM's storage key.
struct TPMMoveFile: Codable {
    static let format = "keystore-tpm-move"
    var format = Self.format
    var version = 1
    let address: String
    let wrapped: TPMWrappedObject

    init(address: String, wrapped: TPMWrappedObject) {
        self.address = address
        self.wrapped = wrapped
    }

    init(decoding bytes: [UInt8]) throws {
        let file = try Self.decode(Self.self, bytes, what: "TPM move")
        guard file.format == Self.format else { throw TPMMoveError.malformed(what: "TPM move", reason: "its format is not \(Self.format)") }
        guard file.version == 1 else { throw TPMMoveError.futureVersion(what: "TPM move", version: file.version) }
        guard (try? PublicKey(accountID: file.address)) != nil else { throw TPMMoveError.malformed(what: "TPM move", reason: "its address is not a G… address") }
        self = file
    }

    func encoded() throws -> [UInt8] { try Self.encode(self) }

    enum CodingKeys: String, CodingKey { case format, version, address, publicArea, duplicate, encryptedSeed }
    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        version = try container.decode(Int.self, forKey: .version)
        address = try container.decode(String.self, forKey: .address)
        wrapped = TPMWrappedObject(publicArea: try Self.bytes(container, .publicArea), duplicate: try Self.bytes(container, .duplicate),
                                   encryptedSeed: try Self.bytes(container, .encryptedSeed))
    }
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(version, forKey: .version)
        try container.encode(address, forKey: .address)
        try container.encode(Data(wrapped.publicArea).base64EncodedString(), forKey: .publicArea)
        try container.encode(Data(wrapped.duplicate).base64EncodedString(), forKey: .duplicate)
        try container.encode(Data(wrapped.encryptedSeed).base64EncodedString(), forKey: .encryptedSeed)
    }

    /// Files a person carries between machines: a few kilobytes at most.
    static let maximumBytes = 16 * 1024

    static func bytes<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> [UInt8] {
        guard let data = Data(base64Encoded: try container.decode(String.self, forKey: key)) else {
            throw TPMMoveError.malformed(what: "TPM move", reason: "\(key.stringValue) is not base64")
        }
        return Array(data)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8], what: String) throws -> Value {
        guard bytes.count <= maximumBytes else { throw TPMMoveError.malformed(what: what, reason: "it is over \(maximumBytes / 1024) KiB") }
        do { return try JSONDecoder().decode(type, from: Data(bytes)) } catch let error as TPMMoveError { throw error } catch {
            throw TPMMoveError.malformed(what: what, reason: "it is not the JSON object this library writes")
        }
    }

    static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(value)) + [0x0A]
    }
}
