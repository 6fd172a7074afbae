import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures

/// The two jobs taken out of VaultStore, each on its own.
@Suite struct PINAttemptsTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()
    var attempts: PINAttempts { PINAttempts(directory: directory.path, now: { [clock] in clock.now }) }
    let alice: IdentityName = "alice"

    init() throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    }

    @Test func fiveFailuresAreFreeThenTheWaitDoublesAndClearEndsIt() throws {
        for count in 1...5 {
            let (before, after) = try attempts.record(alice)
            #expect(before.failures == count - 1 && after.failures == count)
        }
        #expect(attempts.secondsUntilNextAttempt(alice) == 30)
        #expect(throws: VaultError.throttled(secondsLeft: 30)) { try attempts.record(alice) }
        clock.advance(30)
        try attempts.record(alice)
        #expect(attempts.secondsUntilNextAttempt(alice) == 60)
        try attempts.clear(alice)
        #expect(attempts.secondsUntilNextAttempt(alice) == nil)
        #expect(!FileManager.default.fileExists(atPath: attempts.path(of: alice)))
    }

    @Test func restoreTakesBackAnAttemptThatWasNotAWrongPIN() throws {
        let (first, _) = try attempts.record(alice)
        try attempts.restore(alice, to: first)
        #expect(!FileManager.default.fileExists(atPath: attempts.path(of: alice)), "nothing was counted before")
        try attempts.record(alice)
        let (second, _) = try attempts.record(alice)
        try attempts.restore(alice, to: second)
        #expect(try Throttle.load(attempts.path(of: alice), now: clock.now).failures == 1)
    }

    @Test func anAttemptThatCannotBeRecordedIsNotMade() throws {
        let readOnly = PINAttempts(directory: directory.path + "/missing", now: { Date() })
        #expect {
            try readOnly.record(alice)
        } throws: { error in
            guard case VaultError.cannotRecordAttempts = error else { return false }
            return true
        }
    }
}

@Suite struct BackupsTests {
    let directory = TemporaryDirectory()
    var store: VaultStore { try! VaultStore(directory: directory.path) }

    @Test func aReplacedVaultIsKeptAndListedAndReadable() throws {
        let first = try Vault.seal(.random(), name: "alice", pin: PIN("270419"), kdf: cheapKDF)
        try store.create(first)
        let second = try Vault.seal(.random(), name: "alice", pin: PIN("918273"), kdf: cheapKDF)
        let kept = try #require(try store.create(second, replacing: true))
        let listed = try store.backups.list()
        #expect(listed.map(\.name) == ["alice"] && "\(directory.path)/\(listed[0].fileName)" == kept)
        #expect(listed[0].fileName.hasPrefix("alice.vault" + Backups.marker))
        #expect(try store.backups.vault(in: listed[0]) == first)
        #expect(try store.backups.list(of: "bob").isEmpty)
    }

    @Test func temporaryFilesAndOtherNamesAreNotBackups() throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        for name in ["alice.vault.backup-1.tmp-0123456789ab", "Alice.vault.backup-1", "notes.txt", "alice.vault"] {
            #expect(FileManager.default.createFile(atPath: "\(directory.path)/\(name)", contents: Data()))
        }
        #expect(try store.backups.list().isEmpty)
        #expect(try Backups(directory: directory.path + "/none").list().isEmpty)
    }

    @Test func keepingTwiceInOneSecondGivesTwoNames() throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let path = directory.path + "/alice.vault"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("v".utf8)))
        let now = Date()
        let names = try (0..<20).map { _ in try store.backups.keep(path, at: now) }
        #expect(Set(names).count == 20)
    }
}
