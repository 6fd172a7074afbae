import Foundation
import SoftwareToken
import StellarKeys
@testable import StellarKeystore
import Testing

/// `Keystore.signUp(name:key: .inToken(…))` leaves a key pair in the token only for an identity it recorded. In
/// `PKCS11Tests`' serialized suite: the token's login is the process's.
extension PKCS11Tests {
    /// A keystore in a directory of its own, removed by `remove`.
    func tokenKeystore() throws -> (keystore: Keystore, remove: () -> Void) {
        let directory = try temporaryDirectory()
        let keystore = try Keystore(directory: directory + "/keys", sessionDirectory: directory + "/run")
        return (keystore, { try? FileManager.default.removeItem(atPath: directory) })
    }

    func tokenPIN() throws -> PIN {
        var bytes = Array(token.pin.utf8)
        return try PIN(token: SecureBytes(consuming: &bytes))
    }

    @Test func aNameHeldByAnotherSignUpIsRefusedBeforeAnyPINOrKey() throws {
        let (keystore, remove) = try tokenKeystore()
        defer { remove() }
        let name: IdentityName = "race"
        let label = "race-" + UUID().uuidString.prefix(8)
        var hold: NameReservation? = try keystore.vaults.reserve(name, replacing: false)
        #expect(throws: VaultError.beingCreated(name: "race")) {
            try keystore.signUp(name: name, key: .inToken(module: token.modulePath, token: token.label, key: .new(label: label))) { _ in
                Issue.record("the PIN was asked")
                return try tokenPIN()
            }
        }
        #expect(try loggedIn().keys(label: label, id: nil).isEmpty)
        #expect(hold != nil)
        hold = nil
        // Given up, the name is free again, and its hold file gone.
        var asked: [KeyPIN] = []
        let made = try keystore.signUp(name: name, key: .inToken(module: token.modulePath, token: token.label, key: .new(label: label))) {
            asked.append($0)
            return try tokenPIN()
        }
        let key = try #require(made.token)
        defer { delete(id: key.keyID) }
        #expect(asked == [.token], "the token's PIN is the one asked")
        #expect(!made.foundInToken && key.module == Self.softHSMFile)
        #expect(made.key == .ed25519(key.publicKey) && made.address == key.publicKey.accountID)
        #expect(!FileManager.default.fileExists(atPath: keystore.vaults.directory + "/.race.signup"))
    }

    @Test func aKeyPairNoVaultRecordsIsDestroyed() throws {
        let (keystore, remove) = try tokenKeystore()
        defer { remove() }
        let name: IdentityName = "race"
        let label = "race-" + UUID().uuidString.prefix(8)
        // Something else writes the name's vault while the PIN is asked (after the checks, before the key).
        let vaultPath = keystore.vaults.path(of: name)
        #expect(throws: VaultError.alreadyExists(name: "race")) {
            try keystore.signUp(name: name, key: .inToken(module: token.modulePath, token: token.label, key: .new(label: label))) { _ in
                _ = FileManager.default.createFile(atPath: vaultPath, contents: Data("{}".utf8))
                return try tokenPIN()
            }
        }
        #expect(try loggedIn().keys(label: label, id: nil).isEmpty)
    }

    /// A step after the vault is written can fail too (here clearing the wrong-PIN count, its file made a
    /// directory): the identity then on disk names the new key, which stays.
    @Test func aKeyPairAVaultRecordsIsKeptWhenALaterStepFails() throws {
        let (keystore, remove) = try tokenKeystore()
        defer { remove() }
        let name: IdentityName = "late"
        let label = "late-" + UUID().uuidString.prefix(8)
        let throttle = keystore.vaults.attempts.path(of: name)
        #expect(throws: (any Error).self) {
            try keystore.signUp(name: name, key: .inToken(module: token.modulePath, token: token.label, key: .new(label: label))) { _ in
                try FileManager.default.createDirectory(atPath: throttle + "/kept", withIntermediateDirectories: true)
                return try tokenPIN()
            }
        }
        let recorded = try keystore.vaults.vault(named: name).token?.keyID
        let keys = try loggedIn().keys(label: label, id: nil)
        defer { for key in keys { delete(id: key.id) } }
        #expect(recorded != nil && keys.map(\.id) == [recorded], "the vault names a key the token no longer holds")
    }

    /// A key in a token has no seed for a session to hold, and no use for a TPM binding: each is refused, saying
    /// why, before the token's PIN is asked (and before any key is made).
    @Test func aSessionOrABindingOfAKeyInATokenIsRefusedBeforeAnyPIN() throws {
        let (keystore, remove) = try tokenKeystore()
        defer { remove() }
        let label = "nosession-" + UUID().uuidString.prefix(8)
        let key: Keystore.NewKey = .inToken(module: token.modulePath, token: token.label, key: .new(label: label))
        #expect(throws: KeystoreUseError.keyInToken("held", .bindTPM)) {
            try keystore.signUp(name: "held", key: key, boundToTPM: true) { _ in
                Issue.record("the PIN was asked")
                return try tokenPIN()
            }
        }
        #expect(try loggedIn().keys(label: label, id: nil).isEmpty)
        let made = try keystore.signUp(name: "held", key: key) { _ in try tokenPIN() }
        defer { if let key = made.token { delete(id: key.keyID) } }
        #expect(throws: KeystoreUseError.keyInToken("held", .session)) {
            try keystore.startSession(name: "held", ttl: .seconds(60)) {
                Issue.record("the PIN was asked")
                return try tokenPIN()
            }
        }
    }

    /// A token's key is named in a backup but not in it: the record keeps saying it is in no backup (before, a
    /// backup that did not hold it made `list` count it as backed up).
    @Test func aTokenKeyStaysInNoBackupAfterABackupThatNamesIt() throws {
        let (keystore, remove) = try tokenKeystore()
        defer { remove() }
        let label = "backup-" + UUID().uuidString.prefix(8)
        let made = try keystore.signUp(name: "card", key: .inToken(module: token.modulePath, token: token.label, key: .new(label: label))) { _ in
            try tokenPIN()
        }
        let key = try #require(made.token)
        defer { delete(id: key.keyID) }
        let backup = try keystore.backUp(protection: .newRecoveryKey, to: keystore.vaults.directory + "/../card.age") { _ in
            Issue.record("no PIN for a key the backup does not hold"); return try tokenPIN()
        }
        #expect(backup.items.map(\.name.rawValue) == ["card"] && backup.items[0].notInBackup != nil)
        #expect(try keystore.identities().map(\.isInBackup) == [false])
    }
}
