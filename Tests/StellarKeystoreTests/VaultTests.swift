import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

/// Cheapest Argon2id cost libsodium accepts: the format and the store are under test here, not the KDF.
let cheapKDF = KDFParameters(opsLimit: 1, memLimit: 8192)

/// A vault file as a JSON object that tests edit, with the check digest recomputed from docs/FORMAT.md (an
/// independent implementation of it, so the document and the code are held to the same bytes).
struct VaultJSON {
    var object: [String: Any]

    init(_ bytes: [UInt8]) throws {
        object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    subscript(path: String) -> Any? {
        get {
            let keys = path.split(separator: ".").map(String.init)
            return keys.count == 1 ? object[keys[0]] : (object[keys[0]] as? [String: Any])?[keys[1]]
        }
        set {
            let keys = path.split(separator: ".").map(String.init)
            if keys.count == 1 { object[keys[0]] = newValue; return }
            var inner = object[keys[0]] as? [String: Any] ?? [:]
            inner[keys[1]] = newValue
            object[keys[0]] = inner
        }
    }

    mutating func recomputeCheck() {
        let fields = ["format", "version", "name", "publicKey", "kdf.algorithm", "kdf.opsLimit", "kdf.memLimit",
                      "kdf.salt", "cipher.algorithm", "cipher.nonce", "cipher.ciphertext", "createdAt"]
        // Version 2 appends the account number.
        let text = (fields + (self["account"] == nil ? [] : ["account"])).map { "\(self[$0]!)\n" }.joined()
        let digest = Array(text.utf8).withUnsafeBytes { Sodium.sha256($0) }
        self["check"] = Data(digest).base64EncodedString()
    }

    var bytes: [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]))
    }

    /// `field` (base64) with one bit flipped in its first byte.
    mutating func flipBit(in field: String) {
        var raw = Data(base64Encoded: self[field] as! String)!
        raw[0] ^= 0x01
        self[field] = raw.base64EncodedString()
    }
}

@Suite struct VaultTests {
    let keyPair = KeyPair.random()
    let pin = try! PIN("270419")
    let name = IdentityName("alice")

    func sealed() throws -> [UInt8] {
        try Vault.seal(keyPair, name: name, pin: pin, kdf: cheapKDF).encoded()
    }

    @Test func sealedVaultOpensWithItsPINToTheSameKey() throws {
        let vault = try Vault(file: sealed(), path: "v")
        #expect(vault.name == name && vault.publicKey == keyPair.publicKey && vault.kdf == cheapKDF)
        let opened = try vault.open(pin: pin)
        #expect(opened == keyPair && opened.seed.isEqual(to: keyPair.seed))
    }

    /// A level named on purpose is recorded as `kdf.chosen`, only then, and outside the check digest: a reader
    /// that does not know the field (an older keystore, docs/FORMAT.md's recipe) computes the same digest and
    /// opens the vault alike. Anything but true or false there is damage.
    @Test func aChosenLevelIsRecordedOutsideTheCheckDigest() throws {
        let bytes = try Vault.seal(keyPair, name: name, pin: pin, kdf: cheapKDF, kdfChosen: true).encoded()
        #expect(try Vault(file: bytes, path: "v").isKDFChosen)
        #expect(!String(decoding: try sealed(), as: UTF8.self).contains("chosen"))
        #expect(!(try Vault(file: sealed(), path: "v")).isKDFChosen)
        var json = try VaultJSON(bytes)
        #expect(json["kdf.chosen"] as? Bool == true)
        let check = json["check"] as? String
        json.recomputeCheck()
        #expect(json["check"] as? String == check, "kdf.chosen is in the check digest")
        json["kdf.chosen"] = nil
        let without = try Vault(file: json.bytes, path: "v")
        #expect(try !without.isKDFChosen && without.open(pin: pin) == keyPair)
        for value: Any in [1, "true", [true]] {
            json["kdf.chosen"] = value
            #expect(throws: VaultError.self, "\(value)") { try Vault(file: json.bytes, path: "v") }
        }
    }

    @Test func wrongPINIsIncorrectPIN() throws {
        let vault = try Vault(file: sealed(), path: "v")
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 0)) { try vault.open(pin: PIN("270418")) }
    }

    @Test func everySealUsesFreshSaltAndNonce() throws {
        let first = try VaultJSON(sealed()), second = try VaultJSON(sealed())
        #expect(first["kdf.salt"] as? String != second["kdf.salt"] as? String)
        #expect(first["cipher.nonce"] as? String != second["cipher.nonce"] as? String)
        #expect(first["cipher.ciphertext"] as? String != second["cipher.ciphertext"] as? String)
    }

    @Test func theFileHoldsNoSecret() throws {
        let text = String(decoding: try sealed(), as: UTF8.self)
        let seedStrKey = String(decoding: keyPair.secretSeedStrKey().withUnsafeBytes { Array($0) }, as: UTF8.self)
        let seedBase64 = Data(keyPair.seed.withUnsafeBytes { Array($0) }).base64EncodedString()
        #expect(!text.contains(seedStrKey) && !text.contains(seedBase64) && !text.contains("270419"))
    }

    @Test func theFileHasTheDocumentedFields() throws {
        let json = try VaultJSON(sealed())
        #expect(Set(json.object.keys) == ["format", "version", "name", "publicKey", "kdf", "cipher", "createdAt", "check"])
        #expect(json["format"] as? String == "stellar-keystore-vault" && json["version"] as? Int == 1)
        #expect(json["kdf.algorithm"] as? String == "argon2id13" && json["cipher.algorithm"] as? String == "xsalsa20poly1305")
        #expect(Data(base64Encoded: json["kdf.salt"] as! String)?.count == 16)
        #expect(Data(base64Encoded: json["cipher.nonce"] as! String)?.count == 24)
        #expect(Data(base64Encoded: json["cipher.ciphertext"] as! String)?.count == 48)
        var recomputed = json
        recomputed.recomputeCheck()
        #expect(recomputed["check"] as? String == json["check"] as? String)
    }

    /// Edits made without fixing the check digest: caught before any key derivation.
    @Test(arguments: ["kdf.salt", "cipher.nonce", "cipher.ciphertext"])
    func aNaiveEditIsReportedAsTampering(_ field: String) throws {
        var json = try VaultJSON(sealed())
        json.flipBit(in: field)
        let error = try #require(throws: VaultError.self) { try Vault(file: json.bytes, path: "v") }
        #expect(error == .tampered(path: "v", reason: "its check digest does not match its contents"))
    }

    @Test func aNaiveEditOfTheAddressOrCostIsReportedAsTampering() throws {
        for (field, value) in [("publicKey", KeyPair.random().publicKey.accountID as Any), ("kdf.opsLimit", 2), ("kdf.memLimit", 16384)] {
            var json = try VaultJSON(sealed())
            json[field] = value
            #expect(throws: VaultError.tampered(path: "v", reason: "its check digest does not match its contents")) {
                try Vault(file: json.bytes, path: "v")
            }
        }
    }

    /// Edits with a recomputed digest: the cipher's MAC refuses them, indistinguishable from a wrong PIN.
    @Test(arguments: ["kdf.salt", "cipher.nonce", "cipher.ciphertext"])
    func aCarefulEditOfTheCiphertextFailsTheMAC(_ field: String) throws {
        var json = try VaultJSON(sealed())
        json.flipBit(in: field)
        json.recomputeCheck()
        let vault = try Vault(file: json.bytes, path: "v")
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 0)) { try vault.open(pin: pin) }
    }

    @Test func aCarefulEditOfTheAddressIsCaughtAfterDecryption() throws {
        var json = try VaultJSON(sealed())
        json["publicKey"] = KeyPair.random().publicKey.accountID
        json.recomputeCheck()
        let vault = try Vault(file: json.bytes, path: "v")
        #expect(throws: VaultError.tampered(path: "v", reason: "its address does not match its key")) { try vault.open(pin: pin, path: "v") }
    }

    @Test(arguments: [
        ("kdf.memLimit", UInt64(1) << 40), ("kdf.memLimit", UInt64(4) << 30), ("kdf.memLimit", UInt64(1024)),
        ("kdf.opsLimit", UInt64(1) << 32), ("kdf.opsLimit", UInt64(0)), ("kdf.opsLimit", UInt64(11)),
    ])
    func costsOutsideTheBoundsAreRefusedBeforeDerivingAnything(_ field: String, _ value: UInt64) throws {
        var json = try VaultJSON(sealed())
        json[field] = value
        json.recomputeCheck()
        #expect(throws: VaultError.unsafeParameters(path: "v")) { try Vault(file: json.bytes, path: "v") }
    }

    @Test func aNewerVersionIsRefusedByNumber() throws {
        var json = try VaultJSON(sealed())
        let newer = Vault.currentVersion + 1
        json["version"] = newer
        #expect(throws: VaultError.unsupportedVersion(path: "v", version: newer)) { try Vault(file: json.bytes, path: "v") }
        #expect(VaultError.unsupportedVersion(path: "v", version: newer).message.contains("version \(newer)"))
    }

    @Test func damagedFilesAreCorruptWithAReason() throws {
        let good = try sealed()
        var wrongSalt = try VaultJSON(good)
        wrongSalt["kdf.salt"] = Data(count: 15).base64EncodedString()
        wrongSalt.recomputeCheck()
        var missing = try VaultJSON(good)
        missing["cipher"] = nil
        let cases: [([UInt8], String)] = [
            (Array(good.prefix(good.count / 2)), "it is not valid JSON"),
            ([], "it is not valid JSON"),
            (Array("[1,2]".utf8), "it is not a JSON object"),
            (Array("{\"format\":\"other\",\"version\":1}".utf8), "it is not a stellar-keystore-vault file"),
            (missing.bytes, "the field 'cipher' is missing"),
            (wrongSalt.bytes, "the salt is not 16 bytes of base64"),
            (good + [UInt8](repeating: 0x20, count: Vault.maximumFileSize), "far too large"),
        ]
        for (bytes, reason) in cases {
            let error = try #require(throws: VaultError.self) { try Vault(file: bytes, path: "v") }
            guard case .corrupt(_, let found) = error else { Issue.record("\(reason): got \(error)"); continue }
            #expect(found.contains(reason))
        }
    }
}

@Suite struct GoldenVaultTests {
    struct Index: Decodable {
        struct Entry: Decodable {
            struct OtherAccount: Decodable { let account: UInt32; let address: String }
            let file, pin, name, address, secretSeed: String
            let version: Int
            let seed: String?
            let account: UInt32?
            let otherAccount: OtherAccount?
        }
        let vaults: [Entry]
    }

    /// Vaults written by earlier versions must open forever, with their documented PINs, to the same keys.
    @Test func everyGoldenVaultOpens() throws {
        let entries = try Fixtures.load(Index.self, "vaults/vaults.json").vaults
        #expect(entries.count >= 3 && Set(entries.map(\.version)) == [1, 2])
        for entry in entries {
            let path = Fixtures.root.appendingPathComponent("vaults/\(entry.file)").path
            let vault = try Vault(file: Array(try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
            #expect(vault.name.rawValue == entry.name && vault.publicKey.accountID == entry.address)
            let (keyPair, root) = try vault.openWithRoot(pin: PIN(entry.pin))
            if let seed = entry.seed { #expect(keyPair.seed.withUnsafeBytes { Array($0) } == Fixtures.hex(seed)) }
            #expect(keyPair == (try KeyPair(secretSeed: entry.secretSeed)))
            #expect(vault.account == entry.account && (root != nil) == (entry.version == 2))
            if let other = entry.otherAccount {
                #expect(try root?.keyPair(account: other.account).publicKey.accountID == other.address)
            }
            let json = try VaultJSON(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(json["version"] as? Int == entry.version)
            #expect(throws: VaultError.self) { try vault.open(pin: PIN(entry.pin == "503816" ? "614253" : "503816")) }
        }
    }

    @Test func goldenSeedsAreTheRFC8032Keys() throws {
        let entries = try Fixtures.load(Index.self, "vaults/vaults.json").vaults
        let vectors = try Ed25519Vectors.load()
        for (entry, vector) in zip(entries.filter { $0.version == 1 }, vectors) {
            #expect(Fixtures.hex(entry.seed!) == Array(Fixtures.hex(vector.secretKey).prefix(32)))
            #expect(try PublicKey(accountID: entry.address).rawRepresentation == Fixtures.hex(vector.publicKey))
        }
    }
}
