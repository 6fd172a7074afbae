import FoundationEssentials
import StellarKeys
import StellarText
#if canImport(Glibc)
import Glibc
#endif

/// Moving an identity's key to another machine's TPM without its seed resting anywhere in the clear (issue 43,
/// part 4), as ssh-tpm-agent's wrapping to another TPM and tpm2-tools' `tpm2_duplicate`/`tpm2_import` do: the target writes
/// its TPM's storage key's public area (`writeTPMMoveTarget`); the source, after the identity's PIN, wraps the seed
/// to it in its own TPM (`wrapForTPMMove`: TPM2_Duplicate to that key); the target imports it in its TPM, checks
/// the address, and binds it to its TPM under a new PIN (`importTPMMove`). Formats: docs/FORMAT.md, "TPM move files".
extension Keystore {
    /// A key wrapped for another machine's TPM (`wrapForTPMMove`).
    package struct TPMMoveWrapped: Sendable {
        package let address: String
        /// What the target TPM asks before it unseals the key: 64 random bits, as four groups of four hex digits
        /// (`xxxx-xxxx-xxxx-xxxx`), to carry apart from the move file. Without it the file is a bearer token on the
        /// target machine: anyone who could use that TPM could import the key.
        package let transferCode: SecureBytes
    }

    /// Writes this TPM's storage key's public area to `path` (a new file): what a source wraps a key to. Returns
    /// that key's fingerprint, for the person to carry to the source by another way than the file (read out, typed).
    @discardableResult
    package func writeTPMMoveTarget(to path: String) throws -> String {
        let tpm = try movingTPM()
        try Self.refuseExisting(path)
        let file = TPMMoveTargetFile(storageKey: try tpm.storageKeyPublicArea())
        try AtomicFile.write(try file.encoded(), to: path, directory: AtomicFile.directory(of: path))
        return file.fingerprint
    }

    /// The fingerprint of the storage key in the move-target file `target`: the first 80 bits of SHA-256 of the
    /// key's TPM Name, in five groups of four hex digits. Not a secret.
    package static func tpmMoveFingerprint(ofTarget target: [UInt8]) throws -> String {
        try TPMMoveTargetFile(decoding: target).fingerprint
    }

    /// Wraps identity `name`'s seed, opened with `pin`, to the storage key in the move-target file `target`, and
    /// writes the move file to `path` (a new file): only the holder of that key's private half can open it. The file
    /// itself proves nothing (whoever could swap it in transit would get the seed), so the key's fingerprint must be
    /// `fingerprint`, the one the target machine showed, carried apart from the file; it is checked before the PIN is
    /// asked. Nothing here proves that the key lives in a TPM. The key unseals there only with the transfer code
    /// returned. The identity stays here as it was.
    package func wrapForTPMMove(_ name: IdentityName, target: [UInt8], fingerprint: String, to path: String,
                               pin: () throws -> PIN) throws -> TPMMoveWrapped {
        let targetFile = try TPMMoveTargetFile(decoding: target)
        guard TPMMoveTargetFile.normalized(fingerprint) == TPMMoveTargetFile.normalized(targetFile.fingerprint) else {
            throw TPMMoveError.fingerprintMismatch(inFile: targetFile.fingerprint, confirmed: Self.printable(fingerprint))
        }
        try Self.refuseExisting(path)
        guard vaults.exists(name) else { throw TPMMoveError.noSuchIdentity(name.rawValue) }
        let tpm = try movingTPM()
        // What cannot leave its token or TPM is refused by its kind, before any PIN.
        _ = try vaultReadyForPIN(name, for: .moveToTPM)
        let (keyPair, _) = try vaults.unlockWithRoot(name, pin: pin())
        let code = SecureBytes.random(count: Self.transferCodeBytes)
        let wrapped = try tpm.wrap(keyPair.seed, toStorageKey: targetFile.storageKey, authValue: code)
        let file = TPMMoveFile(address: keyPair.publicKey.accountID, wrapped: wrapped)
        try AtomicFile.write(try file.encoded(), to: path, directory: AtomicFile.directory(of: path))
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        let shown = SecureBytes(count: Self.transferCodeBytes * 2 + Self.transferCodeBytes / 2 - 1) { output in
            code.withUnsafeBytes { bytes in
                var offset = 0
                for (index, byte) in bytes.enumerated() {
                    if index > 0 && index % 2 == 0 { output[offset] = UInt8(ascii: "-"); offset += 1 }
                    output[offset] = digits[Int(byte >> 4)]; output[offset + 1] = digits[Int(byte & 15)]; offset += 2
                }
            }
        }
        return TPMMoveWrapped(address: file.address, transferCode: shown)
    }

    static let transferCodeBytes = 8

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The transfer code as typed (hyphens, spaces and case as they come) as the 8 bytes it stands for.
    static func transferCode(_ typed: SecureBytes) throws -> SecureBytes {
        var digits = 0
        let valid = typed.withUnsafeBytes { bytes in
            bytes.allSatisfy { byte in
                guard byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") else { return true }
                guard Self.hexValue(byte) != nil else { return false }
                digits += 1
                return true
            }
        }
        guard valid && digits == transferCodeBytes * 2 else { throw TPMMoveError.malformedTransferCode }
        return SecureBytes(count: transferCodeBytes) { output in
            typed.withUnsafeBytes { bytes in
                var nibble = 0
                for byte in bytes {
                    guard let value = Self.hexValue(byte) else { continue }
                    if nibble % 2 == 0 { output[nibble / 2] = value << 4 } else { output[nibble / 2] |= value }
                    nibble += 1
                }
            }
        }
    }

    /// Imports the move file `file` in this machine's TPM, with the transfer code the source showed (`transferCode`,
    /// asked once the file is read; a wrong one is `TPMMoveError.wrongTransferCode`, counted by the TPM's lockout),
    /// and binds the key it holds as identity `name` under the new PIN `pin` gives (asked only once the key is out
    /// and its address checked), at `kdf`; the vault written is then opened with that PIN and signs a probe. A file
    /// made for another TPM, or changed, is `TPMError.wrappedElsewhere`.
    package func importTPMMove(_ file: [UInt8], as name: IdentityName, kdf: KDFChoice = .auto, transferCode: () throws -> SecureBytes,
                              pin: () throws -> PIN) throws -> Created {
        let moveFile = try TPMMoveFile(decoding: file)
        guard !vaults.exists(name) else { throw VaultError.alreadyExists(name: name.rawValue) }
        let tpm = try movingTPM()
        _ = try checkTPMReadyToBind()
        let code = try Self.transferCode(transferCode())
        let seed: SecureBytes
        do { seed = try tpm.unwrap(moveFile.wrapped, authValue: code) } catch TPMError.wrongPIN(let state) {
            throw TPMMoveError.wrongTransferCode(triesLeft: state.map { $0.maximumFailures - $0.failures })
        }
        let keyPair = try KeyPair(seed: seed)
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
        // One size-prefixed TPM2B_PUBLIC and nothing after it: the fingerprint is of exactly the key wrapped to.
        guard file.storageKey.count > 2, Int(file.storageKey[0]) << 8 | Int(file.storageKey[1]) == file.storageKey.count - 2 else {
            throw TPMMoveError.malformed(what: "TPM move-target", reason: "storageKey is not one TPM2B_PUBLIC")
        }
        self = file
    }

    /// The first 80 bits of SHA-256 of the storage key's Name (TPM 2.0 Part 1, 16: the name algorithm's ID, 0x000B
    /// for SHA-256, then the SHA-256 of the TPMT_PUBLIC), as five groups of four lower-case hex digits: short enough
    /// to read out or type, and 2^80 tries to match with another key.
    var fingerprint: String {
        let area = Array(storageKey.dropFirst(2))
        let name = [0x00, 0x0B] + area.withUnsafeBytes { Sodium.sha256($0) }
        let digits = Hex.string(Array(name.withUnsafeBytes { Sodium.sha256($0) }.prefix(10)))
        return stride(from: 0, to: digits.count, by: 4).map { start in
            String(digits.dropFirst(start).prefix(4))
        }.joined(separator: "-")
    }

    /// A fingerprint as compared: hex digits only, in lower case (spaces, hyphens and case as typed do not matter).
    static func normalized(_ fingerprint: String) -> String {
        String(fingerprint.lowercased().unicodeScalars.filter { $0 != " " && $0 != "-" }.map(Character.init))
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
        try container.encode(Base64.string(storageKey), forKey: .storageKey)
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
        try container.encode(Base64.string(wrapped.publicArea), forKey: .publicArea)
        try container.encode(Base64.string(wrapped.duplicate), forKey: .duplicate)
        try container.encode(Base64.string(wrapped.encryptedSeed), forKey: .encryptedSeed)
    }

    /// Files a person carries between machines: a few kilobytes at most.
    static let maximumBytes = 16 * 1024

    static func bytes<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> [UInt8] {
        guard let bytes = Base64.decode(try container.decode(String.self, forKey: key)) else {
            throw TPMMoveError.malformed(what: "TPM move", reason: "\(key.stringValue) is not base64")
        }
        return bytes
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8], what: String) throws -> Value {
        guard bytes.count <= maximumBytes else { throw TPMMoveError.malformed(what: what, reason: "it is over \(maximumBytes / 1024) KiB") }
        // Strictly first (a key given twice is refused, not read as the first of the two), then decoded.
        do { try StrictJSON.check(bytes, integersOnly: true) } catch let violation as StrictJSON.Violation {
            throw TPMMoveError.malformed(what: what, reason: violation.reason)
        }
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
