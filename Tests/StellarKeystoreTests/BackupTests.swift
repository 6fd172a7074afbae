import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

/// Backups (issue 43) through the library: made, read strictly, restored and checked, in-process.
@Suite struct BackupTests {
    let directory = TemporaryDirectory()
    let pin = try! PIN("270419")
    let newPIN = try! PIN("503816")
    let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"

    func keystore(_ name: String = "keys") throws -> Keystore {
        try FileManager.default.createDirectory(atPath: directory.path + "/run-\(name)", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return try Keystore(directory: directory.path + "/\(name)", sessionDirectory: directory.path + "/run-\(name)/keystore",
                            warnings: { _ in })
    }

    /// A keystore with a random identity and one made from SEP-5's first test phrase at account 2.
    func twoIdentities() throws -> Keystore {
        let keystore = try keystore()
        _ = try keystore.signUp(name: IdentityName("alice"), kdf: .interactive) { _ in pin }
        var words = Array(phrase.utf8)
        _ = try keystore.recover(name: IdentityName("phrase"), phrase: Mnemonic(SecureBytes(consuming: &words)), account: 2,
                                 kdf: .interactive) { pin }
        return keystore
    }

    func text(_ secret: SecureBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    func secret(_ text: String) -> SecureBytes { var bytes = Array(text.utf8); return SecureBytes(consuming: &bytes) }
    func files(_ path: String) throws -> [String: Data] {
        var all: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            all[name] = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        }
        return all
    }

    @Test func aRecoveryKeyBackupRestoresEveryKeyElsewhere() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        var asked: [String] = []
        let made = try source.backUp(protection: .newRecoveryKey, to: file) { name in asked.append(name.rawValue); return pin }
        #expect(asked == ["alice", "phrase"])
        #expect(made.items.map(\.name.rawValue) == ["alice", "phrase"] && made.items.allSatisfy { $0.notInBackup == nil })
        let key = try #require(made.recoveryKey)
        // Shown in groups of four after its prefix: 16 + 58 characters and 15 spaces.
        #expect(text(key).hasPrefix("AGE-SECRET-KEY-1 ") && key.count == 89 && text(key).split(separator: " ").dropFirst().dropLast().allSatisfy { $0.count == 4 })
        // Its QR code reads as the key without its spaces, as an age identity file holds it.
        let unspaced = text(key).replacingOccurrences(of: " ", with: "")
        #expect(made.recoveryKeyQRCode == (try QRCode(text: unspaced).terminalLines()) && made.recoveryKeyQRCode?.count == 21)
        // Drawn only when read (the command line reads it only for a terminal), not kept beside the key: before,
        // every backup drew it and kept it as ordinary strings.
        #expect(Mirror(reflecting: made).children.compactMap(\.label).sorted() == ["items", "passphrase", "path", "recoveryKey"])
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o777 == 0o600)
        // The file is age's, and the seed in it is nowhere in the clear.
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(bytes.starts(with: Array("age-encryption.org/v1\n-> X25519 ".utf8)))

        let target = try keystore("elsewhere")
        // Typed in lower case, with its spaces: the checksum, not the layout, is what is checked.
        let plan = try target.planRestore(bytes, with: .recoveryKey(secret(text(key).lowercased())))
        #expect(plan.items.map(\.action) == [.add, .add] && plan.items.map(\.isFromPhrase) == [false, true])
        #expect(try target.identities().isEmpty, "planning wrote nothing")
        let restored = try target.restore(plan, kdf: .interactive) { newPIN }
        #expect(restored.map(\.address) == (try ["alice", "phrase"].map { try source.address(of: IdentityName($0)) }))
        // The phrase's root came too: its other accounts are the same on both machines.
        for account: UInt32 in [0, 5] {
            let here = try source.derive(name: IdentityName("phrase"), account: account) { pin }
            let there = try target.derive(name: IdentityName("phrase"), account: account) { newPIN }
            #expect(here.address == there.address)
        }
        // Restoring again finds the same keys here and writes nothing.
        let before = try files(directory.path + "/elsewhere")
        let again = try target.planRestore(bytes, with: .recoveryKey(key))
        #expect(again.items.map(\.action) == [.alreadyHere, .alreadyHere])
        #expect(try target.restore(again) { Issue.record("no PIN is needed"); return newPIN }.isEmpty)
        #expect(try files(directory.path + "/elsewhere") == before)
    }

    @Test func aMadePassphraseIsTenListWordsAndOpensTheBackup() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let made = try source.backUp([IdentityName("alice")], protection: .newPassphrase, to: file) { _ in pin }
        let words = text(try #require(made.passphrase)).split(separator: "-").map(String.init)
        #expect(words.count == 10 && words.allSatisfy(BIP39Wordlist.english.contains))
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(try Keystore.asksForPassphrase(bytes))
        let target = try keystore("elsewhere")
        #expect(throws: AgeError.wrongPassphrase) { try target.planRestore(bytes, with: .passphrase(secret("wrong-words"))) }
        let plan = try target.planRestore(bytes, with: .passphrase(try #require(made.passphrase)))
        #expect(plan.items.map(\.name.rawValue) == ["alice"])
    }

    @Test func aDifferentKeyUnderTheSameNameIsReplacedOnlyWhenAsked() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let recipient = AgeX25519Identity.generate()
        _ = try source.backUp(protection: .recipients([recipient.recipient.description]), to: file) { _ in pin }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        let target = try keystore("elsewhere")
        let other = try target.signUp(name: IdentityName("alice"), kdf: .interactive) { _ in newPIN }
        let before = try files(directory.path + "/elsewhere")
        let plan = try target.planRestore(bytes, with: .identityFile(recipient.encoded))
        #expect(plan.items.first?.action == .differentKeyHere(other.key))
        #expect(throws: BackupError.self) { try target.restore(plan, kdf: .interactive) { Issue.record("asked"); return newPIN } }
        #expect(try files(directory.path + "/elsewhere") == before, "nothing was written")
        let replacing = try target.planRestore(bytes, with: .identityFile(recipient.encoded), replacing: [IdentityName("alice")])
        #expect(replacing.items.first?.action == .replace(other.key))
        _ = try target.restore(replacing, kdf: .interactive) { newPIN }
        #expect(try target.address(of: IdentityName("alice")) == (try source.address(of: IdentityName("alice"))))
        #expect(try target.identities().first { $0.name.rawValue == "alice" }?.backups.count == 1, "the key replaced is kept")
    }

    /// A recipients file is read as age reads one (CRLF or LF, `#` comments), and a line that is not a recipient
    /// is named by its number, never quoted: age-keygen's output, an identity beside its recipient, is an easy
    /// file to give by mistake, and its secret key must not reach an error.
    @Test func aRecipientsFileIsReadAsAgeReadsItAndNeverQuoted() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let (a, b) = (AgeX25519Identity.generate(), AgeX25519Identity.generate())
        var crlf = Array("# two keys\r\n\(a.recipient)\r\n\r\n\(b.recipient)\r\n".utf8)
        _ = try source.backUp(protection: .recipients([], file: SecureBytes(consuming: &crlf)), to: file) { _ in pin }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        for identity in [a, b] {
            #expect(try keystore("elsewhere").planRestore(bytes, with: .identityFile(identity.encoded)).items.count == 2)
        }
        // age-keygen's file: a comment, the public key as a comment, then the identity.
        let secretKey = text(a.encoded)
        var keygen = Array("# created: 2026-11-28T10:00:00Z\n# public key: \(a.recipient)\n\(secretKey)\n".utf8)
        let before = try files(directory.path + "/keys")
        do {
            _ = try source.backUp(protection: .recipients([], file: SecureBytes(consuming: &keygen)), to: directory.path + "/other.age") { _ in pin }
            Issue.record("an identity was taken for a recipient")
        } catch let error as BackupError {
            #expect(error.message == "Line 3 of the recipients file is an age identity, a secret key, not a recipient (age1…); nothing was written.")
        }
        do {
            _ = try source.backUp(protection: .recipients([b.recipient.description, secretKey.lowercased()]), to: directory.path + "/other.age") { _ in pin }
            Issue.record("an identity was taken for a recipient")
        } catch let error as BackupError {
            #expect(error.message == "Recipient 2 of those given is an age identity, a secret key, not a recipient (age1…); nothing was written.")
        }
        do {
            _ = try source.backUp(protection: .recipients(["age1nonsense"]), to: directory.path + "/other.age") { _ in pin }
            Issue.record("nonsense was taken for a recipient")
        } catch let error as BackupError {
            #expect(error.message == "Recipient 1 of those given is not an age recipient (age1…, or a plugin's age1NAME1…); nothing was written.")
        }
        #expect(try files(directory.path + "/keys") == before && !FileManager.default.fileExists(atPath: directory.path + "/other.age"),
                "nothing was written")
    }

    @Test func aWrongKeyOrAnAlteredFileIsRefusedAndNothingIsWritten() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let made = try source.backUp(protection: .newRecoveryKey, to: file) { _ in pin }
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        let target = try keystore("elsewhere")
        #expect(throws: AgeError.self) { try target.planRestore(bytes, with: .recoveryKey(AgeX25519Identity.generate().encoded)) }
        // A key copied with one character wrong is caught by its checksum.
        var typo = Array(text(try #require(made.recoveryKey)).utf8)
        typo[20] = typo[20] == UInt8(ascii: "Q") ? UInt8(ascii: "P") : UInt8(ascii: "Q")
        #expect(throws: AgeError.self) { try target.planRestore(bytes, with: .recoveryKey(SecureBytes(consuming: &typo))) }
        bytes[bytes.count - 20] ^= 1
        #expect(throws: AgeError.self) { try target.planRestore(bytes, with: .recoveryKey(try #require(made.recoveryKey))) }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/elsewhere"), "not even the keystore's directory was made")
    }

    /// Bundles made by hand, each wrong in one way, encrypted properly: the bundle's own checks refuse them.
    @Test(arguments: [
        ("future", "stellar-keystore-backup v2\ncreated x\n", BackupError.futureVersion(2)),
        ("not a bundle", "hello\n", BackupError.notABundle),
        ("no final newline", "stellar-keystore-backup v1\ncreated x", BackupError.notABundle),
        ("control", "stellar-keystore-backup v1\ncreated \u{1B}[2J\n", BackupError.notABundle),
    ])
    func aBundleThatIsNotRightIsRefused(_ label: String, _ plaintext: String, _ error: BackupError) throws {
        #expect(throws: error, "\(label)") { try BackupBundle(plaintext: secret(plaintext)) }
    }

    @Test func aSeedThatIsNotItsAddressesOrAFieldNotKnownIsRefused() throws {
        let source = try twoIdentities()
        let alice = try source.vaults.key(named: IdentityName("alice")).backupEntry(pin: { pin }, in: source)
        let good = text(BackupBundle(created: "2026-11-28T00:00:00Z", entries: [alice]).encoded())
        _ = try BackupBundle(plaintext: secret(good))
        let other = KeyPair.random().publicKey.accountID
        let address = try #require(good.split(separator: "\n").first { $0.hasPrefix("address ") })
        #expect(throws: BackupError.addressMismatch(name: "alice")) {
            try BackupBundle(plaintext: secret(good.replacingOccurrences(of: address, with: "address \(other)")))
        }
        #expect(throws: BackupError.self) { try BackupBundle(plaintext: secret(good + "colour blue\n")) }
        #expect(throws: BackupError.self) { try BackupBundle(plaintext: secret(good + "seed SBAD\n")) }
        #expect(throws: BackupError.self) { try BackupBundle(plaintext: secret(good + "\n" + good.split(separator: "\n\n")[1] + "\n")) }
    }

    @Test func theRecordSaysWhichKeysAreInNoBackup() throws {
        let source = try twoIdentities()
        #expect(try source.identities().map(\.isInBackup) == [false, false])
        _ = try source.backUp([IdentityName("alice")], protection: .newRecoveryKey, to: directory.path + "/a.age") { _ in pin }
        #expect(try source.identities().map(\.isInBackup) == [true, false])
        // One identity's answer is the list's (for status), and none for a name the keystore does not have.
        #expect(try source.identities().map { source.isInBackup($0.name) } == [true, false])
        #expect(source.isInBackup(IdentityName("carol")) == nil)
        let record = try String(contentsOfFile: directory.path + "/keys/.backup-record", encoding: .utf8)
        let seed = try source.signIn(name: IdentityName("alice"), for: .export) { pin }.exportSecretSeed()
        #expect(record.contains(try source.address(of: IdentityName("alice"))) && !record.contains(text(seed)), "no seed in the record")
        // A new key under the name is in no backup.
        _ = try source.signUp(name: IdentityName("alice"), kdf: .interactive, replacing: true) { _ in pin }
        #expect(try source.identities().map(\.isInBackup) == [false, false])
        #expect(source.isInBackup(IdentityName("alice")) == false)
    }

    /// A backup whose new key could not be delivered (the terminal or pipe gone, a full disk) is not written: a
    /// file there stays as it was, and the record does not say the keys are backed up. Before, the file was written
    /// and recorded first, and its key lost.
    @Test func aBackupWhoseKeyIsNotDeliveredIsNotWritten() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        struct Lost: Error {}
        #expect(throws: Lost.self) {
            try source.backUp(protection: .newRecoveryKey, to: file) { _ in pin } deliver: { made in
                #expect(made.recoveryKey != nil && !FileManager.default.fileExists(atPath: file), "delivered before the file is in place")
                throw Lost()
            }
        }
        #expect(!FileManager.default.fileExists(atPath: file) && !FileManager.default.fileExists(atPath: directory.path + "/keys/.backup-record"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["keys", "run-keys"], "no temporary file left")
        try Data("an older backup".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: Lost.self) {
            try source.backUp(protection: .newPassphrase, to: file, replacing: true) { _ in pin } deliver: { _ in throw Lost() }
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "an older backup")
        #expect(try source.identities().map(\.isInBackup) == [false, false])
    }

    /// A name given twice is backed up once, and the file restores (before, restore refused it: "appears twice").
    @Test func aNameGivenTwiceIsBackedUpOnce() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let made = try source.backUp([IdentityName("alice"), IdentityName("alice")], protection: .newRecoveryKey, to: file) { _ in pin }
        #expect(made.items.map(\.name.rawValue) == ["alice"])
        let plan = try keystore("elsewhere").planRestore(Array(try Data(contentsOf: URL(fileURLWithPath: file))), with: .recoveryKey(try #require(made.recoveryKey)))
        #expect(plan.items.map(\.name.rawValue) == ["alice"])
    }

    /// A backup written over another one's file: the keys the old file held and the new one does not are in no
    /// backup any more (before, they stayed recorded as backed up by a file that no longer held them).
    @Test func aBackupOverAnotherFileUnrecordsWhatThatFileHeld() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        _ = try source.backUp(protection: .newRecoveryKey, to: file) { _ in pin }
        #expect(try source.identities().map(\.isInBackup) == [true, true])
        _ = try source.backUp([IdentityName("phrase")], protection: .newRecoveryKey, to: directory.path + "/./keys.age", replacing: true) { _ in pin }
        #expect(try source.identities().map(\.isInBackup) == [false, true])
        // Another file leaves the first one's record alone.
        _ = try source.backUp([IdentityName("alice")], protection: .newRecoveryKey, to: directory.path + "/other.age") { _ in pin }
        #expect(try source.identities().map(\.isInBackup) == [true, true])
    }

    /// A bundle whose identity was TPM-bound, at a cost chosen for a bound vault.
    func boundBackup(_ source: Keystore) throws -> (bytes: [UInt8], identity: AgeX25519Identity) {
        let alice = try source.vaults.key(named: IdentityName("alice")).backupEntry(pin: { pin }, in: source)
        guard case .seed(let seed) = alice.content else { throw BackupError.empty }
        let bound = BackupBundle.Seed(secretSeed: seed.secretSeed, keyPair: seed.keyPair, phrase: nil,
                                      kdf: KDFParameters(opsLimit: 3, memLimit: 64 << 20), isKDFChosen: true, wasTPMBound: true)
        let bundle = BackupBundle(created: "2026-11-28T00:00:00Z", entries: [BackupBundle.Entry(name: alice.name, content: .seed(bound))])
        let identity = AgeX25519Identity.generate()
        return (try AgeFile.encrypt(bundle.encoded(), to: [identity.recipient]), identity)
    }

    /// A TPM-bound identity is restored unbound only when asked, and then not at the cost chosen for the bound
    /// vault (before: silently, at that cost).
    @Test func aBoundIdentityIsRestoredUnboundOnlyWhenAskedAndNotAtItsBoundCost() throws {
        let (bytes, identity) = try boundBackup(try twoIdentities())
        let target = try keystore("elsewhere")
        let plan = try target.planRestore(bytes, with: .identityFile(identity.encoded))
        #expect(plan.items.map(\.wasTPMBound) == [true])
        #expect(throws: BackupError.wasTPMBound(names: ["alice"])) { try target.restore(plan, kdf: .interactive) { Issue.record("asked"); return newPIN } }
        #expect(try target.identities().isEmpty)
        _ = try target.restore(plan, kdf: .interactive, unbinding: true) { newPIN }
        let vault = try target.vaults.vault(named: IdentityName("alice"))
        #expect(vault.kdf == KDFParameters.Level.interactive.parameters && vault.kdf?.opsLimit != 3)
    }

    /// The plan replaces the key it showed, and no other: a vault replaced again after the plan is refused
    /// (before, whatever was there at write time was replaced).
    @Test func aReplaceReplacesOnlyTheKeyThePlanShowed() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let made = try source.backUp([IdentityName("alice")], protection: .newRecoveryKey, to: file) { _ in pin }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        let target = try keystore("elsewhere")
        _ = try target.signUp(name: IdentityName("alice"), kdf: .interactive) { _ in newPIN }
        let plan = try target.planRestore(bytes, with: .recoveryKey(try #require(made.recoveryKey)), replacing: [IdentityName("alice")])
        let later = try target.signUp(name: IdentityName("alice"), kdf: .interactive, replacing: true) { _ in newPIN }
        #expect(throws: BackupError.changedSincePlan(name: "alice")) { try target.restore(plan, kdf: .interactive) { newPIN } }
        #expect(try target.address(of: IdentityName("alice")) == later.address)
    }

    /// A restore that fails after its first vault says what it kept (before: "each leaves every vault as it was").
    @Test func aRestoreStoppedAfterItsFirstVaultSaysWhatItKept() throws {
        let source = try twoIdentities()
        let file = directory.path + "/keys.age"
        let made = try source.backUp(protection: .newRecoveryKey, to: file) { _ in pin }
        let target = try keystore("elsewhere")
        let plan = try target.planRestore(Array(try Data(contentsOf: URL(fileURLWithPath: file))), with: .recoveryKey(try #require(made.recoveryKey)))
        #expect(plan.items.map(\.action) == [.add, .add])
        _ = try target.signUp(name: IdentityName("phrase"), kdf: .interactive) { _ in newPIN }
        #expect {
            try target.restore(plan, kdf: .interactive) { newPIN }
        } throws: { error in
            guard case BackupError.restoreStopped(let restored, let name, _) = error else { return false }
            return restored == ["alice"] && name == "phrase"
        }
        #expect(try target.identities().map(\.isInBackup) == [true, false])
    }

    /// A bundle of more identities than the cap is refused before any of them is read (before: no cap, and a
    /// quadratic check of repeated names, 2.2 s at 20,000).
    @Test func aBundleOverTheCapIsRefused() throws {
        let records = (0...BackupBundle.maximumIdentities).map { "identity a\($0)\n" }.joined(separator: "\n")
        let plaintext = "stellar-keystore-backup v1\ncreated 2026-11-28T00:00:00Z\n\n" + records
        #expect {
            try BackupBundle(plaintext: secret(plaintext))
        } throws: { error in
            guard case BackupError.malformed(_, let reason) = error else { return false }
            return reason == "a bundle holds at most \(BackupBundle.maximumIdentities) identities"
        }
    }

    /// JSON read from outside is read strictly: a key given twice is refused in a move file, and makes the backup
    /// record count as none (before: Foundation's decoder took the first of the two).
    @Test func aKeyGivenTwiceIsRefusedInTheMoveFilesAndTheRecord() throws {
        let target = TPMMoveTargetFile(storageKey: [0x00, 0x02, 0x01, 0x02])
        let good = String(decoding: try target.encoded(), as: UTF8.self)
        _ = try TPMMoveTargetFile(decoding: Array(good.utf8))
        let twice = good.replacingOccurrences(of: "\"version\"", with: "\"format\" : \"x\",\n  \"version\"")
        #expect(throws: TPMMoveError.self) { try TPMMoveTargetFile(decoding: Array(twice.utf8)) }
        #expect(throws: TPMMoveError.self) { try TPMMoveTargetFile(decoding: Array(good.replacingOccurrences(of: "AAIBAg==", with: "AAIBAg").utf8)) }

        let source = try twoIdentities()
        _ = try source.backUp([IdentityName("alice")], protection: .newRecoveryKey, to: directory.path + "/a.age") { _ in pin }
        #expect(try source.identities().map(\.isInBackup) == [true, false])
        let path = directory.path + "/keys/.backup-record"
        let record = try String(contentsOfFile: path, encoding: .utf8)
        try record.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 1, \"version\" : 1").write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try source.identities().map(\.isInBackup) == [false, false])
    }
}
