import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif
import StellarText

/// Library-level regression tests for the defects of issue 11 that do not need the command line to show.
@Suite struct HardeningTests {
    let directory = TemporaryDirectory()
    var store: VaultStore { try! VaultStore(directory: directory.path) }
    let pin = try! PIN("270419")

    func seal(_ name: String, pin: PIN? = nil) throws -> Vault {
        try Vault.seal(.random(), name: IdentityName(name), pin: pin ?? self.pin, kdf: cheapKDF)
    }

    // MARK: 1. SecureBytes has one owner

    @Test func aThrowingFillIsFreedOnceAndReportsItsError() {
        struct Stop: Error {}
        for _ in 0..<1000 {
            #expect(throws: Stop.self) { _ = try SecureBytes(count: 32) { _ in throw Stop() } }
        }
    }

    // MARK: 2. The temporary-file sweep

    @Test func theSweepDeletesOnlyAtomicFilesOwnTemporaryNames() throws {
        try store.create(seal("alice"))
        let planted = ["x.tmp-1.vault", ".x.tmp-2.throttle", "alice.vault.tmp-zzzzzzzzzzzz", "alice.vault.tmp-0123456789ab.bak"]
        for name in planted { #expect(FileManager.default.createFile(atPath: "\(directory.path)/\(name)", contents: Data("keep".utf8))) }
        let abandoned = "alice.vault.tmp-0123456789ab"
        #expect(FileManager.default.createFile(atPath: "\(directory.path)/\(abandoned)", contents: Data("junk".utf8)))
        try store.create(seal("bob"))
        let left = Set(directory.contents().keys)
        #expect(left.isSuperset(of: planted), "\(left)")
        #expect(!left.contains(abandoned))
    }

    /// The directory a backup or a TPM move file is written in (and flushed after the rename), as
    /// `NSString.deletingLastPathComponent` gave it before the library stopped linking Foundation.
    @Test func aFileIsWrittenInTheDirectoryItsPathNames() {
        let cases = ["/home/a/backup.age": "/home/a", "out/backup.age": "out", "backup.age": ".", "/backup.age": "/", "../x": ".."]
        for (path, directory) in cases {
            #expect(AtomicFile.directory(of: path) == directory, "\(path)")
            #expect(AtomicFile.directory(of: path) == ((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent))
        }
    }

    @Test func anIdentityWithEveryAllowedCharacterSurvivesAHundredWritesToOthers() throws {
        let names = ["abcdefghijklmnopqrstuvwxyz0123456789._-", "0.tmp", "a-tmp-b", "tmp-1", "x._-.backup", "v.vaul", "z.-tmp.-"]
        let vaults = try names.map { try seal($0) }
        for vault in vaults { try store.create(vault) }
        let before = directory.contents().filter { $0.key.hasSuffix(".vault") }
        for round in 0..<100 { try store.create(seal("other"), replacing: round > 0) }
        let after = directory.contents()
        for (file, bytes) in before { #expect(after[file] == bytes, "\(file) was changed or deleted") }
        for name in names { #expect(try store.vault(named: IdentityName(name)).name.rawValue == name) }
    }

    @Test(arguments: ["wallet.tmp-1", "a.backup-x", "b.vault", "c.vault.d", "x.tmp-"])
    func namesThatContainAFileRoleAreRefused(_ name: String) {
        #expect(throws: VaultError.invalidName(name)) { try IdentityName(name) }
    }

    // MARK: 3. Values read from the wrong-PIN counter are clamped

    @Test(arguments: [
        #"{"failures":0,"lockedUntil":1e300}"#,
        #"{"failures":9223372036854775807,"lockedUntil":0}"#,
        #"{"failures":-9223372036854775808,"lockedUntil":-1e300}"#,
        #"{"failures":3,"lockedUntil":1.7976931348623157e308}"#,
        #"{"failures":1,"failures":0,"lockedUntil":0}"#,
    ])
    func aCraftedCounterNeverTrapsAndFailsClosed(_ text: String) throws {
        let path = directory.path + "/counter"
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var throttle = try Throttle.load(path, now: now)
        #expect((0...Throttle.longestWait).contains(throttle.secondsLeft(now: now) ?? 0))
        #expect((0...Throttle.mostFailures).contains(throttle.failures))
        throttle.recordFailure(now: now)
        #expect(throttle.secondsLeft(now: now) == nil || throttle.secondsLeft(now: now)! <= Throttle.longestWait)
    }

    // MARK: 9. The recovery phrase leaves no copy in writable memory

    @Test func generatingAndParsingAPhraseLeavesNoCopyInWritableMemory() throws {
        let generated = try Mnemonic.generate(wordCount: 24)
        try expectNoCopy(of: generated.phrase, "after generate")
        // Parse it back, typed in capitals with double spaces, built straight into guarded memory.
        let typed = generated.phrase.withUnsafeBytes { phrase in
            SecureBytes(count: phrase.count + phrase.count { $0 == 0x20 }) { out in
                var position = 0
                for byte in phrase {
                    if byte == 0x20 {
                        out[position] = 0x20
                        out[position + 1] = 0x09
                        position += 2
                    } else {
                        out[position] = byte - 0x20
                        position += 1
                    }
                }
            }
        }
        let parsed = try Mnemonic(typed)
        #expect(parsed.phrase.isEqual(to: generated.phrase))
        try expectNoCopy(of: generated.phrase, "after parse")
    }

    /// Scans every writable anonymous mapping of this process (heap, stacks, freed memory) for the phrase and for
    /// every run of three of its words. Guarded buffers are read-only once filled, so they are not scanned.
    func expectNoCopy(of phrase: SecureBytes, _ when: String) throws {
        let found = try phrase.withUnsafeBytes { phrase -> [String] in
            let spaces = phrase.indices.filter { phrase[$0] == 0x20 }
            let starts = [0] + spaces.map { $0 + 1 }
            let ends = spaces + [phrase.count]
            var needles = [0..<phrase.count]
            for word in 0..<(starts.count - 2) { needles.append(starts[word]..<ends[word + 2]) }
            return try WritableMemory.scan { region in
                needles.compactMap { range in
                    let needle = UnsafeRawBufferPointer(rebasing: phrase[range])
                    return WritableMemory.memmem(region.baseAddress, region.count, needle.baseAddress, needle.count) == nil
                        ? nil : "words \(range) found \(when)"
                }
            }
        }
        #expect(found.isEmpty, "\(found.prefix(3))")
    }

    @Test func theWordListIsSortedSoThatItCanBeSearchedInPlace() throws {
        #expect(BIP39Wordlist.english == BIP39Wordlist.english.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for (index, word) in BIP39Wordlist.english.enumerated() {
            let found = Array(word.uppercased().utf8).withUnsafeBytes { BIP39Wordlist.index(of: $0) }
            #expect(found == index)
        }
        #expect(Array("abandonx".utf8).withUnsafeBytes { BIP39Wordlist.index(of: $0) } == nil)
    }

    // MARK: 10. Corrections for a typo only where asked for

    @Test func aTypoIsAnsweredWithSuggestionsOnlyWhenAskedFor() throws {
        var text = Array("illness spike retreat truth genius clock brain pass fit cave bargian toe".utf8)
        let typed = SecureBytes(consuming: &text)
        #expect(throws: MnemonicError.unknownWord(position: 11, suggestions: [])) { try Mnemonic(typed) }
        let offered = try #require(throws: MnemonicError.self) { try Mnemonic(typed, offeringCorrections: true) }
        guard case .unknownWord(11, let suggestions) = offered else { Issue.record("\(offered)"); return }
        #expect(suggestions.contains("bargain"))
    }

    // MARK: 11. What a leaked session gives

    @Test func aLeakedTokenAndSessionFileGiveTheSeedEvenAfterExpiry() throws {
        let runtime = TemporaryDirectory()
        let clock = ManualClock()
        let sessions = SessionStore(directory: runtime.path, now: { [clock] in clock.now })
        let keyPair = KeyPair.random()
        let identity = SessionStore.Owner(keystore: directory.path, name: IdentityName("alice"))
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let file = try #require(try AtomicFile.read(sessions.path(of: token), limit: 4096))
        clock.advance(3600)
        // The session is over for keystore, but whoever copied both halves still decrypts the seed.
        #expect(try SessionStore.unseal(file, with: token).keyPair == keyPair)
        let security = try String(contentsOf: repositoryRoot.appendingPathComponent("SECURITY.md"), encoding: .utf8)
        #expect(security.contains("decrypt the seed for good"))
    }

    // MARK: 12. JSON that two readers would read differently

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "the key 'a' appears twice"),
        (#"{"a":{"b":1,"b":1}}"#, "the key 'b' appears twice"),
        (#"{"a":1.0}"#, "'a' is not an integer written as digits"),
        (#"{"a":2e0}"#, "'a' is not an integer written as digits"),
        (#"{"a":[1,2.5]}"#, "'a' is not an integer written as digits"),
    ])
    func ambiguousJSONIsRefused(_ text: String, _ reason: String) {
        #expect(throws: StrictJSON.Violation(reason)) { try StrictJSON.check(Array(text.utf8), integersOnly: true) }
    }

    @Test func unambiguousJSONPasses() throws {
        try StrictJSON.check(Array(#"{"a":-1,"b":[{"a":0},{"a":1}],"c":"x\"y","d":true,"e":null}"#.utf8), integersOnly: true)
        try StrictJSON.check(Array(#"{"lockedUntil":1.5e9}"#.utf8), integersOnly: false)
        try StrictJSON.check(Array(try Vault.seal(.random(), name: .default, pin: pin, kdf: cheapKDF).encoded()), integersOnly: true)
    }

    // MARK: 16. The name inside the vault and the file's name

    @Test func aVaultUnderAnotherFileNameIsRefused() throws {
        try store.create(seal("alice"))
        try FileManager.default.copyItem(atPath: store.path(of: IdentityName("alice")), toPath: directory.path + "/bob.vault")
        #expect(throws: VaultError.misnamed(path: directory.path + "/bob.vault", inside: "alice")) {
            try store.vault(named: IdentityName("bob"))
        }
    }

    // MARK: 18. A PIN change that lost a race

    @Test func aPINChangeThatLostTheRaceCountsNoFailure() throws {
        let alice = IdentityName("alice")
        try store.create(seal("alice"))
        let seen = try store.vault(named: alice)
        // Another process changes the PIN while this one waits for the lock.
        _ = try store.changePIN(alice, from: pin, to: PIN("918273"), kdf: cheapKDF)
        #expect(throws: VaultError.changedWhileWaiting(name: "alice")) {
            try store.changePIN(alice, from: pin, to: PIN("503816"), kdf: cheapKDF, expecting: seen)
        }
        #expect(!directory.contents().keys.contains { $0.hasSuffix(".throttle") })
    }

    // MARK: 13. No attempt without a record of it

    @Test func anAttemptIsRecordedBeforeThePINIsTried() throws {
        let alice = IdentityName("alice")
        try store.create(seal("alice"))
        try store.attempts.record(alice)
        // Had the process died during the key derivation, the attempt would still count.
        #expect(try Throttle.load(store.attempts.path(of: alice), now: Date()).failures == 1)
        _ = try store.unlock(alice, pin: pin)
        #expect(try Throttle.load(store.attempts.path(of: alice), now: Date()).failures == 0)
    }
}

/// The repository's top directory, for the documents tests read.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
