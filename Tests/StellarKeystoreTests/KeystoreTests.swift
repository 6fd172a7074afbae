import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

/// The rules the façade holds for an app and the command line alike.
@Suite struct KeystoreTests {
    let directory = TemporaryDirectory()
    let pin = try! PIN("270419")

    final class Warnings: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        var all: [String] { lock.withLock { lines } }
        func add(_ line: String) { lock.withLock { lines.append(line) } }
    }

    func keystore(_ warnings: Warnings = Warnings()) throws -> Keystore {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore",
                            warnings: { warnings.add($0) })
    }

    func signUp(_ keystore: Keystore, _ name: String = "alice") throws -> Keystore.Created {
        try keystore.signUp(name: IdentityName(name), kdf: .interactive) { _ in pin }
    }

    @Test func noPINIsAskedWhileAWaitIsRunning() throws {
        let keystore = try keystore()
        let name = IdentityName("alice")
        _ = try signUp(keystore)
        for _ in 0..<5 { _ = try? keystore.signIn(name: name) { try PIN("503816") } }
        var asked = false
        #expect(throws: VaultError.self) { try keystore.signIn(name: name) { asked = true; return pin } }
        #expect(!asked, "a PIN was asked although it could not be used")
    }

    @Test func aDeadSessionFallsBackToThePINOnlyWhereOneCanBeHad() throws {
        let warnings = Warnings()
        let keystore = try keystore(warnings)
        let created = try signUp(keystore)
        let token = try keystore.startSession(name: created.name, ttl: .seconds(60)) { pin }
        try keystore.endSession(token)
        #expect(throws: SessionError.ended) {
            try keystore.signingKey(as: created.name, keys: .automatic(agent: nil, session: token.stringValue, pinAvailable: false))
        }
        let key = try keystore.signingKey(as: created.name, keys: .automatic(agent: nil, session: token.stringValue, pinAvailable: true))
        #expect(key.address == created.address && key.source == .vault(needsPIN: true))
        #expect(warnings.all.contains { $0.contains("Using the PIN instead") })
    }

    @Test func aPhraseComesBackOnlyWithAWrittenVault() throws {
        let keystore = try keystore()
        let created = try keystore.signUp(name: IdentityName("alice"), kdf: .interactive, key: .phrase(words: 12)) { _ in pin }
        let phrase = try #require(created.phrase)
        #expect(phrase.wordCount == 12)
        let restored = try keystore.recover(name: IdentityName("restored"), phrase: phrase, kdf: .interactive) { pin }
        #expect(restored.address == created.address)
        // An existing identity is refused before any phrase is made.
        #expect(throws: VaultError.alreadyExists(name: "alice")) {
            try keystore.signUp(name: IdentityName("alice"), kdf: .interactive, key: .phrase(words: 12)) { _ in pin }
        }
    }

    @Test func deriveNeverOffersToReplace() throws {
        let keystore = try keystore()
        let created = try keystore.signUp(name: IdentityName("alice"), kdf: .interactive, key: .phrase(words: 12)) { _ in pin }
        _ = try signUp(keystore, "bob")
        #expect(throws: VaultError.derivedNameTaken(name: "bob")) {
            try keystore.derive(name: created.name, account: 1, addingAs: IdentityName("bob")) { pin }
        }
        let added = try keystore.derive(name: created.name, account: 1, addingAs: IdentityName("savings")) { pin }
        #expect(try keystore.address(of: IdentityName("savings")) == added.address && added.address != created.address)
    }

    @Test func replacingKeepsABackupAndEndsSessions() throws {
        let keystore = try keystore()
        let first = try signUp(keystore)
        let token = try keystore.startSession(name: first.name, ttl: .seconds(60)) { pin }
        let second = try keystore.signUp(name: first.name, kdf: .interactive, replacing: true) { _ in try PIN("918273") }
        #expect(second.backup != nil && second.address != first.address)
        #expect(throws: SessionError.ended) { try keystore.signer(session: token) }
        let listed = try #require(try keystore.identities().first)
        #expect(listed.address == second.address && listed.backups.map(\.address) == [first.address])
    }

    @Test func aScriptedPINChangeTriesTheCurrentPINOnce() throws {
        let keystore = try keystore()
        let created = try signUp(keystore)
        var asked: [String] = []
        try keystore.changePIN(name: created.name, checkingCurrentFirst: false, from: { asked.append("current"); return pin },
                               to: { asked.append("new"); return try PIN("918273") })
        #expect(asked == ["current", "new"])
        #expect(throws: VaultError.self) {
            try keystore.changePIN(name: created.name, from: { pin }, to: { asked.append("again"); return try PIN("503816") })
        }
        #expect(!asked.contains("again"), "a new PIN was asked after a wrong current one")
    }

    @Test func autoPicksTheStrongestLevelUnlockedWithinASecondAndKeepsIt() throws {
        let keystore = try keystore()
        let (level, measured) = try keystore.level(for: .auto)
        #expect(measured)
        let calibration = try #require(keystore.calibration())
        #expect(calibration.level == level)
        let levels = KDFParameters.Level.allCases
        let times = levels.compactMap { calibration.secondsPerUnlock[$0.rawValue] }
        #expect(!times.isEmpty && times == times.sorted(), "costlier levels take longer: \(calibration.secondsPerUnlock)")
        if level != .interactive { #expect(calibration.secondsPerUnlock[level.rawValue]! <= KDFCalibration.target) }
        if let stronger = levels.drop(while: { $0 != level }).dropFirst().first, let time = calibration.secondsPerUnlock[stronger.rawValue] {
            #expect(time > KDFCalibration.target, "a stronger level within the target was passed over")
        }
        #expect(try keystore.level(for: .auto) == (level, false))
        #expect(try keystore.level(for: .sensitive) == (.sensitive, false))
    }

    @Test func upgradeRaisesTheCostUnderTheSamePINAndEndsSessions() throws {
        let keystore = try keystore()
        // A vault `auto` made at interactive, on a machine measured to afford no more; then the machine, or its
        // measurement, changes.
        try FileManager.default.createDirectory(atPath: keystore.directory, withIntermediateDirectories: true)
        try #"{"level":"interactive","secondsPerUnlock":{"interactive":0.05}}"#
            .write(toFile: keystore.directory + "/.kdf-calibration", atomically: false, encoding: .utf8)
        let created = try keystore.signUp(name: IdentityName("alice"), kdf: .auto) { _ in pin }
        #expect(keystore.isWeakerThanThisMachineAffords(created.name) == false)
        // As if this machine had measured that it affords moderate.
        let calibration = #"{"level":"moderate","secondsPerUnlock":{"interactive":0.05,"moderate":0.4}}"#
        try calibration.write(toFile: keystore.directory + "/.kdf-calibration", atomically: false, encoding: .utf8)
        #expect(keystore.isWeakerThanThisMachineAffords(created.name) == true)
        let token = try keystore.startSession(name: created.name, ttl: .seconds(60)) { pin }
        let (vault, level, changed) = try keystore.upgrade(name: created.name) { pin }
        #expect(level == .moderate && vault.kdf == KDFParameters.Level.moderate.parameters && changed)
        #expect(try keystore.signIn(name: created.name) { pin }.address == created.address)
        #expect(keystore.isWeakerThanThisMachineAffords(created.name) == false)
        #expect(throws: SessionError.ended) { try keystore.signer(session: token) }
    }

    /// An app (or a person) that named a level chose it: such a vault is never called cheaper than the machine
    /// affords, however strong the calibration says the machine is.
    @Test func aVaultWhoseLevelWasNamedIsNeverCalledTooCheap() throws {
        let keystore = try keystore()
        let created = try signUp(keystore)  // .interactive
        let calibration = #"{"level":"moderate","secondsPerUnlock":{"interactive":0.05,"moderate":0.4}}"#
        try calibration.write(toFile: keystore.directory + "/.kdf-calibration", atomically: false, encoding: .utf8)
        #expect(keystore.isWeakerThanThisMachineAffords(created.name) == false)
    }

    @Test func upgradingAVaultAlreadyThereChangesNothingAndAsksNothing() throws {
        let keystore = try keystore()
        let created = try signUp(keystore)
        let calibration = #"{"level":"interactive","secondsPerUnlock":{"interactive":0.05}}"#
        try calibration.write(toFile: keystore.directory + "/.kdf-calibration", atomically: false, encoding: .utf8)
        let before = try Data(contentsOf: URL(fileURLWithPath: keystore.vaults.path(of: created.name)))
        let token = try keystore.startSession(name: created.name, ttl: .seconds(60)) { pin }
        for choice in [KDFChoice.auto, .interactive] {
            let result = try keystore.upgrade(name: created.name, to: choice) {
                Issue.record("the PIN was asked for nothing")
                return pin
            }
            #expect(!result.changed && result.level == .interactive)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: keystore.vaults.path(of: created.name))) == before)
        #expect(try keystore.signer(session: token).address == created.address)
    }

    /// A name in the code is a literal; a name from outside goes through the throwing initializer, also when
    /// `IdentityName.init` is passed as a function (the literal's initializer traps, and must never be picked).
    @Test func namesFromOutsideAreCheckedNeverTrapped() throws {
        let literal: IdentityName = "alice"
        #expect(literal == (try IdentityName(String("alice"))))
        let typed = ["bob", "Not A Name"]
        #expect(throws: VaultError.invalidName("Not A Name")) { try typed.map(IdentityName.init) }
        #expect(throws: VaultError.invalidName("x.vault")) { try Optional("x.vault").map(IdentityName.init) }
    }
}
