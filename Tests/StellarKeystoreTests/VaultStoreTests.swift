import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

@Suite struct VaultStoreTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()
    var store: VaultStore { try! VaultStore(directory: directory.path + "/keys", now: { [clock] in clock.now }) }
    let alice = IdentityName("alice")
    let pin = try! PIN("270419")
    let wrong = try! PIN("503816")

    func seal(_ keyPair: KeyPair = .random(), name: IdentityName? = nil, pin: PIN? = nil) throws -> Vault {
        try Vault.seal(keyPair, name: name ?? alice, pin: pin ?? self.pin, kdf: cheapKDF)
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
    }

    @Test func createWritesAPrivateFileInAPrivateDirectory() throws {
        let keyPair = KeyPair.random()
        try store.create(seal(keyPair))
        #expect(try mode(store.directory) == 0o700 && mode(store.path(of: alice)) == 0o600)
        #expect(try store.unlock(alice, pin: pin) == keyPair)
        #expect(try store.names() == [alice])
        #expect(store.permissionWarnings(for: alice).isEmpty)
        // Only the vault and the lock: no temporary file is left behind.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: store.directory)) == ["alice.vault", ".lock"])
    }

    @Test func anExistingIdentityIsKeptUnlessReplacedAndThenBackedUp() throws {
        let first = KeyPair.random(), second = KeyPair.random()
        try store.create(seal(first))
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path(of: alice)))
        #expect(throws: VaultError.alreadyExists(name: "alice")) { try store.create(seal(second)) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path(of: alice))) == before)

        let backup = try #require(try store.create(seal(second), replacing: true))
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == before)
        #expect(try store.unlock(alice, pin: pin) == second)
        #expect(try store.names() == [alice], "a backup is not an identity")
    }

    @Test func changePINReencryptsAndOnlyTheNewPINOpens() throws {
        let keyPair = KeyPair.random()
        try store.create(seal(keyPair))
        let old = try VaultJSON(Array(Data(contentsOf: URL(fileURLWithPath: store.path(of: alice)))))
        let newPIN = try PIN("918273")
        let changed = try store.changePIN(alice, from: pin, to: newPIN, kdf: KDFParameters(opsLimit: 2, memLimit: 8192))
        #expect(changed.kdf?.opsLimit == 2)
        let new = try VaultJSON(Array(Data(contentsOf: URL(fileURLWithPath: store.path(of: alice)))))
        #expect(old["kdf.salt"] as? String != new["kdf.salt"] as? String)
        #expect(old["cipher.nonce"] as? String != new["cipher.nonce"] as? String)
        #expect(try store.unlock(alice, pin: newPIN) == keyPair)
        #expect(throws: VaultError.self) { try store.unlock(alice, pin: pin) }
    }

    @Test func changePINWithTheWrongPINChangesNothing() throws {
        try store.create(seal())
        let before = directory.contents()
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 4, waitSeconds: 0)) {
            try store.changePIN(alice, from: wrong, to: PIN("918273"))
        }
        #expect(directory.contents()["keys"] == before["keys"])
        #expect(try store.unlock(alice, pin: pin).publicKey == store.vault(named: alice).publicKey)
    }

    @Test func removeNeedsThePINOrForce() throws {
        try store.create(seal())
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 4, waitSeconds: 0)) { try store.remove(alice, pin: wrong) }
        #expect(store.exists(alice))
        try store.remove(alice, pin: pin)
        #expect(!store.exists(alice))
        try store.create(seal())
        try store.remove(alice, pin: nil)
        #expect(try !store.exists(alice) && store.names().isEmpty)
        #expect(throws: VaultError.notFound(name: "alice", directory: store.directory)) { try store.remove(alice, pin: nil) }
    }

    @Test func missingIdentityAndMissingDirectoryAreNotFound() throws {
        #expect(throws: VaultError.notFound(name: "alice", directory: store.directory)) { try store.unlock(alice, pin: pin) }
        #expect(try store.names().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: store.directory), "reading must not create the directory")
    }

    @Test func fiveWrongPINsAreFreeThenWaitsDoubleUpToAnHour() throws {
        let keyPair = KeyPair.random()
        try store.create(seal(keyPair))
        let vaultBytes = try Data(contentsOf: URL(fileURLWithPath: store.path(of: alice)))
        for tries in stride(from: 4, through: 1, by: -1) {
            #expect(throws: VaultError.incorrectPIN(triesBeforeWait: tries, waitSeconds: 0)) { try store.unlock(alice, pin: wrong) }
        }
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 30)) { try store.unlock(alice, pin: wrong) }
        // While waiting even the right PIN is refused, with the time left.
        clock.advance(13)
        #expect(store.attempts.secondsUntilNextAttempt(alice) == 17)
        #expect(throws: VaultError.throttled(secondsLeft: 17)) { try store.unlock(alice, pin: pin) }
        #expect(VaultError.throttled(secondsLeft: 17).message.contains("try again in 17 s"))

        for wait in [60, 120, 240, 480, 960, 1920, 3600, 3600] {
            clock.advance(3600)
            #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: wait)) { try store.unlock(alice, pin: wrong) }
        }
        clock.advance(3600)
        #expect(try store.unlock(alice, pin: pin) == keyPair)
        #expect(store.attempts.secondsUntilNextAttempt(alice) == nil)
        // A correct PIN starts the count again from five free tries.
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 4, waitSeconds: 0)) { try store.unlock(alice, pin: wrong) }
        // Counting never touched the vault.
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path(of: alice))) == vaultBytes)
    }

    /// Where the vaults are when nothing says: a case of its own, so that the command line's hint matches the
    /// case, not the message's words.
    @Test func noHomeIsItsOwnError() throws {
        #expect(throws: VaultError.noHomeDirectory) { try VaultStore.defaultDirectory(environment: ["XDG_DATA_HOME": "relative"]) }
        #expect(try VaultStore.defaultDirectory(environment: ["HOME": "/home/a"]) == "/home/a/.local/share/keystore")
    }

    @Test func aDamagedThrottleRecordFailsClosed() throws {
        try store.create(seal())
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: store.attempts.path(of: alice)))
        #expect(throws: VaultError.incorrectPIN(triesBeforeWait: 0, waitSeconds: 30)) { try store.unlock(alice, pin: wrong) }
    }

    @Test func throttlingIsPerIdentity() throws {
        let bob = IdentityName("bob")
        try store.create(seal())
        try store.create(seal(name: bob))
        for _ in 0..<5 { _ = try? store.unlock(alice, pin: wrong) }
        #expect(store.attempts.secondsUntilNextAttempt(alice) == 30)
        #expect(store.attempts.secondsUntilNextAttempt(bob) == nil)
        _ = try store.unlock(bob, pin: pin)
    }

    @Test func concurrentCreatesOfOneNameLetExactlyOneWin() async throws {
        let store = self.store
        let vaults = try (0..<8).map { _ in try seal() }
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for vault in vaults { group.addTask { do { try store.create(vault); return true } catch { return false } } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        let winner = try store.vault(named: alice)
        #expect(vaults.contains { $0.publicKey == winner.publicKey })
    }

    @Test func othersCanReadWarnings() throws {
        try store.create(seal())
        chmod(store.path(of: alice), 0o644)
        chmod(store.directory, 0o755)
        let warnings = store.permissionWarnings(for: alice)
        #expect(warnings.count == 2 && warnings.allSatisfy { $0.contains("chmod") })
    }

    @Test(arguments: ["", "Alice", "-x", ".hidden", "a/b", "a b", String(repeating: "a", count: 65), "é"])
    func invalidNamesAreRefused(_ text: String) {
        #expect(throws: VaultError.invalidName(text)) { try IdentityName(text) }
    }

    @Test(arguments: ["default", "a", "work.2", "my_key-1", String(repeating: "a", count: 64)])
    func validNamesAreAccepted(_ text: String) throws {
        #expect(try IdentityName(text).rawValue == text)
    }

    @Test func defaultDirectoryFollowsTheDocumentedOrder() throws {
        #expect(try VaultStore.defaultDirectory(environment: ["KEYSTORE_HOME": "/k", "XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/k")
        #expect(try VaultStore.defaultDirectory(environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/keystore")
        #expect(try VaultStore.defaultDirectory(environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"]) == "/h/.local/share/keystore")
        #expect(try VaultStore.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/share/keystore")
        #expect(throws: VaultError.self) { try VaultStore.defaultDirectory(environment: [:]) }
    }
}
