import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreTPM
import TestFixtures
import SoftwareTPM

/// TPM-bound vaults (format version 3) against the suite's own swtpm. Serialized: the tests share the TPM's
/// dictionary-attack counter, and each that adds failures clears them before it ends.
@Suite(.offThePool, .serialized, .softwareTPM, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct TPMVaultTests {
    let pin = try! PIN("270419")
    let wrongPIN = try! PIN("270418")
    /// The cheapest Argon2id libsodium allows: these tests are about the TPM, and the 200-unlock one runs often.
    let cheap = KDFParameters(opsLimit: Sodium.pwhashOpsLimitMin, memLimit: Sodium.pwhashMemLimitMin)

    /// swtpm's lockout authorization is empty, as on most Linux machines, so that these tests can end lockouts as
    /// an owner would; TPMLockoutTests covers the refusal of such a TPM.
    var tpm: TPM { TPM(tcti: SoftwareTPM.current!.tcti, allowingOpenLockout: true) }

    func sealed(_ keyPair: KeyPair = .random(), kdf: KDFParameters? = nil) throws -> Vault {
        try Vault.seal(keyPair, name: IdentityName("alice"), pin: pin, kdf: kdf ?? cheap, tpm: tpm)
    }

    @Test func aBoundVaultRoundTripsThroughItsFile() throws {
        let keyPair = KeyPair.random()
        let vault = try sealed(keyPair)
        let text = String(decoding: vault.encoded(), as: UTF8.self)
        #expect(text.contains("\"version\" : 3") && text.contains("\"template\" : \"tcg-srk-ecc-p256\""))
        let reread = try Vault(file: vault.encoded(), path: "alice.vault")
        #expect(reread == vault && reread.isTPMBound)
        #expect(try reread.open(pin: pin, tpm: tpm) == keyPair)
    }

    @Test func aPhraseVaultCanBeBoundToo() throws {
        let root = AccountRoot(bip39Seed: try Mnemonic.generate(wordCount: 12).seed())
        let keyPair = try root.keyPair(account: 2)
        let vault = try Vault.seal(keyPair, root: (root, 2), name: IdentityName("alice"), pin: pin, kdf: cheap, tpm: tpm)
        let reread = try Vault(file: vault.encoded(), path: "alice.vault")
        let opened = try reread.openWithRoot(pin: pin, tpm: tpm)
        #expect(opened.keyPair == keyPair && reread.account == 2)
        #expect(try opened.root?.keyPair(account: 5) == root.keyPair(account: 5))
    }

    @Test func theSealedObjectIsDictionaryAttackProtected() throws {
        let vault = try sealed()
        let object = try #require(vault.tpmObject)
        // TPMT_PUBLIC after the 2-byte size: type (KEYEDHASH 0x0008), nameAlg (SHA-256 0x000B), then the
        // attributes, big-endian (TPM 2.0 Part 2, 12.2.4).
        let area = object.publicArea
        #expect(Array(area[2..<6]) == [0x00, 0x08, 0x00, 0x0B])
        let attributes = area[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(attributes & 0x0400 == 0, "noDA must not be set")
        #expect(attributes & 0x0040 != 0, "userWithAuth")
        #expect(attributes & 0x0012 == 0x0012, "fixedTPM and fixedParent")
    }

    @Test func aWrongPINIsCountedByTheTPM() throws {
        defer { try? SoftwareTPM.current!.clearLockout() }
        let vault = try sealed()
        let before = try tpm.dictionaryAttackState()
        #expect(throws: TPMError.wrongPIN(state: DictionaryAttackStateAfter(before, failures: 1).state)) {
            try vault.open(pin: wrongPIN, tpm: tpm)
        }
        #expect(try tpm.dictionaryAttackState().failures == before.failures + 1)
        #expect(try vault.open(pin: pin, tpm: tpm).publicKey == vault.publicKey)
    }

    @Test func theFileAndThePINAloneDoNotOpenIt() throws {
        let vault = try #require(try sealed().sealed)
        // Everything an attacker with the file and the right PIN can compute without the TPM's secret.
        let pinDerived = try vault.kdf.deriveKey(pin: pin, salt: vault.salt)
        let keys = TPMBoundKeys(pinDerived: pinDerived)
        let guesses = [pinDerived, keys.authValue, keys.vaultKey(tpmSecret: SecureBytes(count: 32) { _ in }),
                       keys.vaultKey(tpmSecret: .random(count: 32))]
        for key in guesses {
            #expect(SecureBytes.opening(vault.ciphertext, nonce: vault.nonce, key: key) == nil)
        }
        // With the TPM's secret it opens: the test above is not failing for some other reason.
        let secret = try tpm.unseal(try #require(vault.tpmObject), authValue: keys.authValue)
        #expect(SecureBytes.opening(vault.ciphertext, nonce: vault.nonce, key: keys.vaultKey(tpmSecret: secret)) != nil)
    }

    @Test func anotherTPMCannotOpenIt() throws {
        let vault = try sealed()
        let other = try SoftwareTPM()
        defer { other.stop() }
        #expect(throws: TPMError.boundElsewhere) { try vault.open(pin: pin, tpm: TPM(tcti: other.tcti)) }
    }

    @Test func anImpostorPrimaryKeyIsRefusedBeforeTheSessionIsSalted() throws {
        let vault = try sealed()
        let object = try #require(vault.tpmObject)
        #expect(object.primaryName.count == 34 && object.primaryName.prefix(2) == [0x00, 0x0B])
        // What keystore would see if something between it and the TPM answered CreatePrimary with another key.
        var name = object.primaryName
        name[10] ^= 1
        let impostor = try #require(TPMSealedObject(primaryName: name, publicArea: object.publicArea, privateArea: object.privateArea))
        let before = try tpm.dictionaryAttackState()
        #expect(throws: TPMError.boundElsewhere) { try tpm.unseal(impostor, authValue: .random(count: 32)) }
        #expect(try tpm.dictionaryAttackState() == before, "nothing was tried, so nothing was counted")
    }

    /// A PIN change or an upgrade seals a new secret: the primary key it is sealed to must be the one the vault
    /// recorded, or an interposer answering in the TPM's place would get the secret and a PIN oracle.
    @Test func aResealChecksThePrimaryKeyOfTheBindingItRenews() throws {
        let object = try #require(try sealed().tpmObject)
        let other = try SoftwareTPM()
        defer { other.stop() }
        let elsewhere = TPM(tcti: other.tcti, allowingOpenLockout: true)
        #expect(throws: TPMError.boundElsewhere) {
            try Vault.seal(.random(), name: IdentityName("alice"), pin: pin, kdf: cheap, tpm: elsewhere, renewing: object)
        }
        // A new binding there is another matter (trust on first use), and a renewal here keeps the primary.
        #expect(try Vault.seal(.random(), name: IdentityName("alice"), pin: pin, kdf: cheap, tpm: elsewhere).isTPMBound)
        let renewed = try Vault.seal(.random(), name: IdentityName("alice"), pin: pin, kdf: cheap, tpm: tpm, renewing: object)
        #expect(renewed.tpmObject?.primaryName == object.primaryName)
    }

    /// Once the primary's Name matched, this TPM holds the seed the object was made under: only a failed
    /// integrity check means another TPM wrapped it; any other refusal is damage.
    @Test func onlyAnIntegrityFailureMeansAnotherTPM() throws {
        let object = try #require(try sealed().tpmObject)
        var publicArea = object.publicArea
        publicArea[4...5] = [0x00, 0x99]  // no such nameAlg: TPM_RC_HASH as the TPM reads the command, before any integrity check
        let damaged = try #require(TPMSealedObject(primaryName: object.primaryName, publicArea: publicArea, privateArea: object.privateArea))
        #expect {
            try tpm.unseal(damaged, authValue: .random(count: 32))
        } throws: { error in
            guard case TPMError.damagedObject = error else { return false }
            return true
        }
        var privateArea = object.privateArea
        privateArea[privateArea.count - 1] ^= 0x01
        let foreign = try #require(TPMSealedObject(primaryName: object.primaryName, publicArea: object.publicArea, privateArea: privateArea))
        #expect(throws: TPMError.boundElsewhere) { try tpm.unseal(foreign, authValue: .random(count: 32)) }
    }

    @Test func aTPMWithAnEmptyLockoutAuthorizationIsRefusedForANewBindingOnly() throws {
        let strict = TPM(tcti: SoftwareTPM.current!.tcti)
        #expect(try !strict.dictionaryAttackState().lockoutAuthSet)
        #expect(throws: TPMError.lockoutOpen) { try strict.checkReadyToSeal() }
        #expect(throws: TPMError.lockoutOpen) { try Vault.seal(.random(), name: IdentityName("alice"), pin: pin, kdf: cheap, tpm: strict) }
        // A binding made with consent is renewed (a PIN change) without asking again.
        let object = try #require(try sealed().tpmObject)
        #expect(try Vault.seal(.random(), name: IdentityName("alice"), pin: pin, kdf: cheap, tpm: strict, renewing: object).isTPMBound)
    }

    @Test func twoHundredLoginsLeakNoHandle() throws {
        // swtpm has no resource manager: a handle left behind by any login would exhaust its few slots (3 objects).
        // Through the login use case (the TPM's state is read first, then the vault unsealed), on a cheap vault.
        let keyPair = KeyPair.random()
        let vault = try sealed(keyPair)
        let directory = TemporaryDirectory()
        let keystore = try Keystore(directory: directory.path, sessionDirectory: directory.path + "/sessions", tpm: tpm)
        try keystore.vaults.create(vault)
        for _ in 0..<200 {
            #expect(try keystore.signIn(name: vault.name) { pin }.address == keyPair.publicKey.accountID)
        }
        // And the failure path flushes too.
        defer { try? SoftwareTPM.current!.clearLockout() }
        for _ in 0..<20 {
            #expect(throws: TPMError.self) { try vault.open(pin: wrongPIN, tpm: tpm) }
            try SoftwareTPM.current!.clearLockout()
        }
        #expect(try vault.open(pin: pin, tpm: tpm) == keyPair)
    }

    @Test func noTPMIsOneClearError() throws {
        let vault = try sealed()
        let missing = TPM(tcti: "device:/dev/keystore-no-such-tpm")
        #expect {
            try vault.open(pin: pin, tpm: missing)
        } throws: { error in
            guard let error = error as? TPMError, case .unavailable = error else { return false }
            // What to set is the command line's hint, not the library's words.
            return error.message.contains("does not exist") && !error.message.contains("KEYSTORE_TPM_TCTI")
        }
        #expect(throws: TPMError.self) { try TPM(tcti: "swtpm:host=127.0.0.1,port=1").dictionaryAttackState() }
    }

    @Test func theStoreCountsATPMWrongPINAndTheTPMSaysHowManyAreLeft() throws {
        defer { try? SoftwareTPM.current!.clearLockout() }
        let directory = TemporaryDirectory()
        let store = try VaultStore(directory: directory.path, tpm: tpm)
        let vault = try sealed()
        try store.create(vault)
        #expect {
            try store.unlock(vault.name, pin: wrongPIN)
        } throws: { error in
            (error as? TPMError)?.isWrongPIN == true && (error as? TPMError)?.message.contains("the TPM counted it") == true
        }
        #expect(try Throttle.load(store.attempts.path(of: vault.name), now: Date()).failures == 1)
        #expect(try store.unlock(vault.name, pin: pin) == store.vault(named: vault.name).open(pin: pin, tpm: tpm))
    }

    @Test func bindingAndUnbindingKeepTheKeyAndThePIN() throws {
        let directory = TemporaryDirectory()
        let keystore = try Keystore(directory: directory.path, sessionDirectory: directory.path + "/sessions", tpm: tpm)
        let created = try keystore.signUp(name: IdentityName("alice"), kdf: .interactive) { _ in pin }
        #expect(throws: KeystoreUseError.notBound("alice")) { try keystore.unbindFromTPM(name: IdentityName("alice")) { pin } }
        let bound = try keystore.bindToTPM(name: IdentityName("alice")) { pin }
        #expect(bound.isTPMBound && bound.publicKey.accountID == created.address)
        #expect(throws: KeystoreUseError.alreadyBound("alice")) { try keystore.bindToTPM(name: IdentityName("alice")) { pin } }
        #expect(try keystore.signIn(name: IdentityName("alice")) { pin }.address == created.address)
        #expect(try keystore.identities().first?.isTPMBound == true)
        let changed = try keystore.changePIN(name: IdentityName("alice"), checkingCurrentFirst: false, from: { pin }, to: { try PIN("918273") })
        #expect(changed.isTPMBound && changed.tpmObject != bound.tpmObject, "a fresh TPM secret under the new PIN")
        let unbound = try keystore.unbindFromTPM(name: IdentityName("alice")) { try PIN("918273") }
        #expect(!unbound.isTPMBound)
        // Unbound, the PIN alone opens it, with no TPM at all.
        #expect(try unbound.open(pin: PIN("918273"), tpm: TPM(tcti: "device:/dev/keystore-no-such-tpm")).publicKey.accountID == created.address)
    }

    @Test func aLockedOutTPMIsReportedBeforeThePINIsAsked() throws {
        defer { try? SoftwareTPM.current!.clearLockout() }
        let directory = TemporaryDirectory()
        let keystore = try Keystore(directory: directory.path, sessionDirectory: directory.path + "/sessions", tpm: tpm)
        try keystore.vaults.create(try sealed())
        for _ in 0..<(try tpm.dictionaryAttackState().triesLeft) {
            #expect(throws: TPMError.self) { try keystore.vaults.unlock(IdentityName("alice"), pin: wrongPIN) }
        }
        var asked = false
        #expect {
            try keystore.signIn(name: IdentityName("alice")) { asked = true; return pin }
        } throws: { error in
            guard let error = error as? TPMError, case .lockedOut(let state?, _) = error else { return false }
            return state.inLockout
        }
        #expect(!asked, "nobody is asked for a PIN the TPM would refuse")
    }

    @Test func aBoundVaultIsNeverCalledTooCheapToAttack() throws {
        // With the TPM as the wall, --kdf interactive is what we recommend: login must not then advise upgrading.
        let directory = TemporaryDirectory()
        let keystore = try Keystore(directory: directory.path, sessionDirectory: directory.path + "/sessions", tpm: tpm)
        // Both made by `auto` at interactive (a level named on purpose is never called cheap, bound or not), then
        // a calibration that says this machine affords more.
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        try Data(#"{"level":"interactive","secondsPerUnlock":{"interactive":0.05}}"#.utf8)
            .write(to: URL(fileURLWithPath: directory.path + "/" + KDFCalibration.fileName))
        _ = try keystore.signUp(name: IdentityName("bound"), kdf: .auto, boundToTPM: true) { _ in pin }
        _ = try keystore.signUp(name: IdentityName("plain"), kdf: .auto) { _ in pin }
        try Data(#"{"level":"moderate","secondsPerUnlock":{"interactive":0.05,"moderate":0.36}}"#.utf8)
            .write(to: URL(fileURLWithPath: directory.path + "/" + KDFCalibration.fileName))
        #expect(keystore.isWeakerThanThisMachineAffords(IdentityName("plain")) == true)
        #expect(keystore.isWeakerThanThisMachineAffords(IdentityName("bound")) == false)
    }

    @Test func aTPMVaultsFieldsAreCheckedWhenParsed() throws {
        let vault = try sealed()
        let file = try JSONSerialization.jsonObject(with: Data(vault.encoded())) as! [String: Any]
        func reparsed(_ change: (inout [String: Any]) -> Void, recheck: Bool = true) throws -> Vault {
            var edited = file
            change(&edited)
            var data = try JSONSerialization.data(withJSONObject: edited)
            if recheck {
                var decoded = try JSONDecoder().decode(Vault.File.self, from: data)
                decoded.check = decoded.expectedCheck
                data = try JSONEncoder().encode(decoded)
            }
            return try Vault(file: Array(data), path: "alice.vault")
        }
        func damaged(_ reason: String, _ change: (inout [String: Any]) -> Void) {
            #expect(throws: VaultError.corrupt(path: "alice.vault", reason: reason)) { try reparsed(change) }
        }
        damaged("the field 'tpm' is missing") { $0["tpm"] = nil }
        damaged("only a version 3 vault has a TPM object") { $0["version"] = 1 }
        damaged("unknown TPM primary template 'rsa'") { var tpm = $0["tpm"] as! [String: Any]; tpm["template"] = "rsa"; $0["tpm"] = tpm }
        damaged("its TPM object is not a primary key's Name, a TPM2B_PUBLIC and a TPM2B_PRIVATE in base64") {
            var tpm = $0["tpm"] as! [String: Any]; tpm["public"] = (tpm["public"] as! String) + "AAAA"; $0["tpm"] = tpm
        }
        damaged("its TPM object is not a primary key's Name, a TPM2B_PUBLIC and a TPM2B_PRIVATE in base64") {
            var tpm = $0["tpm"] as! [String: Any]; tpm["private"] = "AAE="; $0["tpm"] = tpm
        }
        damaged("its TPM object is not a primary key's Name, a TPM2B_PUBLIC and a TPM2B_PRIVATE in base64") {
            var tpm = $0["tpm"] as! [String: Any]; tpm["primary"] = "AAsA"; $0["tpm"] = tpm
        }
        // The check digest covers the TPM object: an edit without recomputing it is named as tampering.
        #expect(throws: VaultError.tampered(path: "alice.vault", reason: "its check digest does not match its contents")) {
            try reparsed({ var tpm = $0["tpm"] as! [String: Any]; tpm["template"] = "x"; $0["tpm"] = tpm }, recheck: false)
        }
    }
}

/// The state the TPM reports after `failures` more failures than `before`.
struct DictionaryAttackStateAfter {
    let state: TPMDictionaryAttackState
    init(_ before: TPMDictionaryAttackState, failures: Int) {
        state = TPMDictionaryAttackState(
            failures: before.failures + failures, maximumFailures: before.maximumFailures, intervalSeconds: before.intervalSeconds,
            recoverySeconds: before.recoverySeconds, inLockout: before.failures + failures >= before.maximumFailures,
            lockoutAuthSet: before.lockoutAuthSet)
    }
}

/// The TPM-bound vault kept in fixtures/vaults/tpm opens, forever, on the swtpm whose state is kept beside it.
@Suite(.offThePool, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct GoldenTPMVaultTests {
    struct Entry: Decodable {
        let file, swtpmState, pin, name, address, secretSeed: String
        let version: Int
    }

    @Test func theGoldenTPMVaultOpensOnItsTPM() throws {
        let entry = try Fixtures.load(Entry.self, "vaults/tpm/tpm.json")
        let path = Fixtures.root.appendingPathComponent("vaults/tpm/\(entry.file)").path
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let vault = try Vault(file: bytes, path: path)
        #expect(vault.isTPMBound && entry.version == 3 && vault.name.rawValue == entry.name && vault.publicKey.accountID == entry.address)
        let swtpm = try SoftwareTPM(permanentState: Fixtures.root.appendingPathComponent("vaults/tpm/\(entry.swtpmState)").path)
        defer { swtpm.stop() }
        #expect(try vault.open(pin: PIN(entry.pin), tpm: TPM(tcti: swtpm.tcti)) == KeyPair(secretSeed: entry.secretSeed))
        // And only there: a fresh TPM has other primary seeds.
        let fresh = try SoftwareTPM()
        defer { fresh.stop() }
        #expect(throws: TPMError.boundElsewhere) { try vault.open(pin: PIN(entry.pin), tpm: TPM(tcti: fresh.tcti)) }
    }
}
