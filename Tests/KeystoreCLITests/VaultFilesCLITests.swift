import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// The files of a keystore as they may be found: names that look like other files, crafted wrong-PIN counters, an empty home, files that are not regular files, a counter that cannot be written, backups, a vault under another name. Each test was written failing first (issue 11 and later).
@Suite(.offThePool) struct VaultFilesCLITests: CLIExpectations {
    // MARK: Names that look like temporary files

    @Test(arguments: ["wallet.tmp-1", "a.backup-2", "b.vault", "x.vault.y"])
    func namesThatCollideWithFileRolesAreRefused(_ name: String) throws {
        let home = try KeystoreHome(inProcess: true)
        let result = try home.run(["signup", "--name", name, "--kdf", "interactive", "--pin-stdin"], stdin: "270419\n")
        expectOneLine(result, status: 2, "is not a valid identity name")
        #expect(home.vaults().isEmpty)
    }

    // MARK: A crafted wrong-PIN counter

    @Test func aCounterLockedForeverIsCappedAtAnHour() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let counter = "\(home.path)/.\(Self.golden.name).throttle"
        try #"{"failures":0,"lockedUntil":1e300}"#.write(toFile: counter, atomically: false, encoding: .utf8)
        let result = try home.run(["login", "--name", Self.golden.name, "--pin-stdin"], stdin: Self.golden.pin + "\n")
        expectOneLine(result, status: 4, "try again in 60 min")
    }

    @Test func aCounterAtIntMaxDoesNotOverflow() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let counter = "\(home.path)/.\(Self.golden.name).throttle"
        try #"{"failures":9223372036854775807,"lockedUntil":0}"#.write(toFile: counter, atomically: false, encoding: .utf8)
        let wrong = try home.run(["login", "--name", Self.golden.name, "--pin-stdin"], stdin: "503816\n")
        expectOneLine(wrong, status: 3, "try again in 60 min")
        let locked = try home.run(["login", "--name", Self.golden.name, "--pin-stdin"], stdin: Self.golden.pin + "\n")
        expectOneLine(locked, status: 4, "try again in 60 min")
    }

    // MARK: An empty home

    @Test func anEmptyHomeIsAUsageError() throws {
        let home = try KeystoreHome(inProcess: true)
        let name = "empty-home-\(UInt32.random(in: 0...UInt32.max))"
        let result = try home.run(["signup", "--home", "", "--name", name, "--pin-stdin", "--kdf", "interactive"],
                                  stdin: "270419\n")
        let planted = FileManager.default.fileExists(atPath: "/\(name).vault")
        if planted { unlink("/\(name).vault") }
        #expect(!planted, "a vault was written to the filesystem root")
        expectOneLine(result, status: 64, "--home")
    }

    @Test func emptyEnvironmentDirectoriesCountAsUnset() throws {
        let home = try KeystoreHome(inProcess: true)
        var process = home.keystore
        process.environment = ["KEYSTORE_HOME": "", "XDG_DATA_HOME": "", "HOME": home.path]
        let result = try process.run(["signup", "--kdf", "interactive", "--pin-stdin"], stdin: Array("270419\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.path + "/.local/share/keystore/default.vault"))
    }

    // MARK: Files that are not regular files

    @Test(arguments: [["list"], ["address"], ["login", "--pin-stdin"]])
    func aFIFOVaultIsRefusedNotWaitedOn(_ arguments: [String]) throws {
        let home = try KeystoreHome(inProcess: true)
        mkfifo(home.vaultPath("pipe"), 0o600)
        let named = arguments == ["list"] ? arguments : arguments + ["--name", "pipe"]
        let result = try home.run(named, stdin: "270419\n", timeout: 20)
        #expect(result.status != 137, "keystore hung on a FIFO")
        if arguments == ["list"] {
            #expect(result.status == 0 && result.stdout.contains("pipe") && result.stdout.contains("not a regular file"),
                    "\(result.stdout)")
        } else {
            expectOneLine(result, status: 7, "it is a FIFO, not a regular file")
        }
    }

    @Test func aFIFOCounterIsNotWaitedOn() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        mkfifo("\(home.path)/.\(Self.golden.name).throttle", 0o600)
        let result = try home.run(["login", "--name", Self.golden.name, "--pin-stdin"], stdin: Self.golden.pin + "\n", timeout: 20)
        #expect(result.status != 137, "keystore hung on a FIFO")
        #expect(result.status == 0 && result.stdout == Self.golden.address + "\n", "\(result.stderr)")
    }

    @Test func aSymlinkedLockIsNotFollowed() throws {
        let home = try KeystoreHome(inProcess: true)
        let target = home.path + "-lock-target"
        defer { unlink(target) }
        symlink(target, home.path + "/.lock")
        let result = try home.run(["signup", "--name", "x", "--kdf", "interactive", "--pin-stdin"], stdin: "270419\n")
        #expect(!FileManager.default.fileExists(atPath: target), "the lock's symlink was followed")
        expectOneLine(result, status: 8, ".lock")
        #expect(home.vaults().isEmpty)
    }

    // MARK: A counter that cannot be written

    @Test func noPINIsTriedWhenAFailureCannotBeRecorded() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        for _ in 0..<7 {
            let result = try home.run(["login", "--name", Self.golden.name, "--pin-stdin"], stdin: "503816\n", prefix: Self.noFileWrites)
            expectOneLine(result, status: 8, "Cannot record failed PIN attempts in \(home.path)")
        }
    }

    // MARK: Backups

    @Test func backupsAreListedAndRemoveSaysWhatItLeaves() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let replace = try home.run(["signup", "--replace", "--kdf", "interactive", "--name", Self.golden.name, "--pin-stdin"],
                                   stdin: "918273\n")
        #expect(replace.status == 0)
        let backup = try #require(home.snapshot().keys.first { $0.contains(".vault.backup-") })
        let list = try home.run(["list"])
        #expect(list.stdout.contains("backup") && list.stdout.contains(Self.golden.address), "\(list.stdout)")
        let json = try home.run(["list", "--json"])
        #expect(json.stdout.contains(backup), "\(json.stdout)")

        let remove = try home.run(["remove", "--force", "--name", Self.golden.name])
        #expect(remove.status == 0 && remove.stderr.contains(backup) && remove.stderr.contains("--backups"), "\(remove.stderr)")
        #expect(home.snapshot().keys.contains(backup))

        try home.addGolden()
        let removeAll = try home.run(["remove", "--force", "--backups", "--name", Self.golden.name])
        #expect(removeAll.status == 0, "\(removeAll.stderr)")
        #expect(!home.snapshot().keys.contains { $0.contains(".vault") }, "\(home.snapshot().keys)")
    }

    @Test func aFailedReplaceLeavesNoBackupBehind() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let before = home.vaults()
        let result = try home.run(["signup", "--replace", "--kdf", "interactive", "--name", Self.golden.name, "--pin-stdin"],
                                  stdin: "918273\n", prefix: Self.noFileWrites)
        expectOneLine(result, status: 8, "File too large")
        #expect(home.vaults() == before, "\(home.vaults().keys)")
    }

    // MARK: A vault under another file name

    @Test func aVaultCopiedUnderAnotherNameIsRefused() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        try FileManager.default.copyItem(atPath: home.vaultPath(Self.golden.name), toPath: home.vaultPath("other"))
        for arguments in [["address", "--name", "other"], ["login", "--name", "other", "--pin-stdin"]] {
            let result = try home.run(arguments, stdin: Self.golden.pin + "\n")
            expectOneLine(result, status: 7, "'\(Self.golden.name)'")
            #expect(result.stderr.contains("other.vault"))
        }
    }
}
