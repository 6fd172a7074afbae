import Foundation
import SoftwareToken
import StellarKeys
@testable import StellarKeystore
import Testing

/// `Keystore.signUp(name:inTokenOf:…)` leaves a key pair in the token only for an identity it recorded. In
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
            try keystore.signUp(name: name, inTokenOf: token.modulePath, token: token.label, key: .new(label: label)) {
                Issue.record("the PIN was asked")
                return try tokenPIN()
            }
        }
        #expect(try loggedIn().keys(label: label, id: nil).isEmpty)
        #expect(hold != nil)
        hold = nil
        // Given up, the name is free again, and its hold file gone.
        let made = try keystore.signUp(name: name, inTokenOf: token.modulePath, token: token.label, key: .new(label: label)) { try tokenPIN() }
        defer { delete(id: made.key.keyID) }
        #expect(made.made && made.key.module == Self.softHSMFile)
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
            try keystore.signUp(name: name, inTokenOf: token.modulePath, token: token.label, key: .new(label: label)) {
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
            try keystore.signUp(name: name, inTokenOf: token.modulePath, token: token.label, key: .new(label: label)) {
                try FileManager.default.createDirectory(atPath: throttle + "/kept", withIntermediateDirectories: true)
                return try tokenPIN()
            }
        }
        let recorded = try keystore.vaults.vault(named: name).token?.keyID
        let keys = try loggedIn().keys(label: label, id: nil)
        defer { for key in keys { delete(id: key.id) } }
        #expect(recorded != nil && keys.map(\.id) == [recorded], "the vault names a key the token no longer holds")
    }
}
