import Foundation
import SoftwareToken
import StellarKeys
@testable import StellarKeystore
import Testing

/// Which file a PKCS#11 module path loads, and who else could change it: the file loaded is the file checked,
/// found through links and directories only root and this user can change, and one module by two paths is one
/// module. In `PKCS11Tests`' serialized suite: a logout here is the process's.
extension PKCS11Tests {
    /// Debian's SoftHSM2 path is a link to its multiarch file.
    static let softHSMFile = "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"

    /// A private directory (0700, root's or this user's) for links and files of one test; removed by the caller.
    func moduleDirectory() throws -> String {
        let path = try temporaryDirectory()
        chmod(path, 0o700)
        return path
    }

    /// `body` run on a thread of its own, its outcome awaited without holding a thread of the pool: nil when it has
    /// not returned within `seconds` (a load blocked on a FIFO never returns).
    func outcome(within seconds: Double, of body: @escaping @Sendable () throws -> PKCS11Module) async -> Result<PKCS11Module, any Error>? {
        let box = OutcomeBox()
        Thread.detachNewThread { box.set(Result { try body() }) }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let result = box.get() { return result }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return box.get()
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11Tests.softHSMFile)))
    func aModuleIsKnownByTheFileItResolvesTo() throws {
        let loaded = try PKCS11Module(path: SoftwareToken.defaultModulePath)
        #expect(loaded.path == Self.softHSMFile)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11Tests.softHSMFile)))
    func aLinkOwnedByAnotherUserIsRefused() throws {
        let directory = try moduleDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/mod.so"
        #expect(symlink(Self.softHSMFile, link) == 0)
        #expect(lchown(link, 65534, 65534) == 0)
        #expect(throws: TokenError.moduleNotLoadable(path: link, reason: "\(link) belongs to another user")) {
            try PKCS11Module(path: link)
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11Tests.softHSMFile)))
    func aLinkInAnotherUsersDirectoryIsRefused() throws {
        let directory = try moduleDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let theirs = directory + "/attk"
        #expect(mkdir(theirs, 0o755) == 0 && chown(theirs, 65534, 65534) == 0)
        let link = theirs + "/mod.so"
        #expect(symlink(Self.softHSMFile, link) == 0)
        #expect(throws: TokenError.moduleNotLoadable(path: link, reason: "\(theirs) belongs to another user")) {
            try PKCS11Module(path: link)
        }
        // A directory anyone may write to, not sticky, lets anyone swap the link.
        chown(theirs, 0, 0)
        chmod(theirs, 0o777)
        #expect(throws: TokenError.moduleNotLoadable(path: link, reason: "\(theirs) may be changed by other users")) {
            try PKCS11Module(path: link)
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11Tests.softHSMFile)))
    func theFileLoadedIsTheFileChecked() throws {
        let directory = try moduleDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A copy of SoftHSM2: a file of its own (device and inode) that no test has loaded, so that loading it
        // here really maps it.
        let copy = directory + "/copy.so"
        try FileManager.default.copyItem(atPath: Self.softHSMFile, toPath: copy)
        chmod(copy, 0o644)
        let link = directory + "/mod.so"
        #expect(symlink(copy, link) == 0)
        // The link is followed once, by the check; what is opened then is the file it named, whatever the link
        // says by the time the module is mapped: here a file that is no library at all, which a load by the
        // link's path would fail on.
        let opened = try ModuleFile(path: link)
        var expected = stat()
        #expect(stat(copy, &expected) == 0)
        #expect(opened.identity == ModuleFile.Identity(device: UInt64(expected.st_dev), inode: UInt64(expected.st_ino)))
        unlink(link)
        #expect(symlink(token.confPath, link) == 0)
        // And the file itself replaced: a load by the resolved path would map the stand-in.
        let standIn = directory + "/stand-in"
        try FileManager.default.copyItem(atPath: token.confPath, toPath: standIn)
        #expect(rename(standIn, copy) == 0)
        let module = try PKCS11Module(opened)
        #expect(module.path == opened.path && URL(fileURLWithPath: module.path).lastPathComponent == "copy.so")
        #expect(module.interfaceVersion.hasPrefix("2.") || module.interfaceVersion.hasPrefix("3."))
    }

    static let openSC = "/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"
    static let openSCOnePIN = "/usr/lib/x86_64-linux-gnu/onepin-opensc-pkcs11.so"

    @Test(.enabled(if: [PKCS11Tests.openSC, PKCS11Tests.openSCOnePIN].allSatisfy { FileManager.default.fileExists(atPath: $0) }))
    func aModuleLoadedThroughADescriptorNumberUsedBeforeIsItself() throws {
        // Two files in one directory: the walk opens as many descriptors for each, so the second file's
        // descriptor has the number the first was loaded through, and dlopen knows "/proc/self/fd/N" as the
        // first module's name (it would hand back the first module, unopened).
        let first = try PKCS11Module(path: Self.openSC)
        let second = try PKCS11Module(path: Self.openSCOnePIN)
        #expect(first.library !== second.library)
        #expect(first.library.functions != second.library.functions)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11Tests.openSC)))
    func aDescriptorNumberAModuleWasLoadedThroughIsNeverUsedAgain() throws {
        let file = try ModuleFile(path: Self.openSC)
        var used: Set<Int32> = [file.descriptor, file.descriptor + 3]
        let (number, duplicate) = try Library.descriptorNumber(for: file, avoiding: &used)
        defer { if duplicate { close(number) } }
        #expect(duplicate && number > file.descriptor + 3 && used.contains(number))
        // The same file, by another number.
        var original = stat(), copy = stat()
        #expect(fstat(file.descriptor, &original) == 0 && fstat(number, &copy) == 0)
        #expect(original.st_ino == copy.st_ino && original.st_dev == copy.st_dev)
        // A number not used before is taken as it is.
        var fresh: Set<Int32> = []
        let (same, duplicated) = try Library.descriptorNumber(for: file, avoiding: &fresh)
        #expect(same == file.descriptor && !duplicated && fresh == [file.descriptor])
    }

    @Test func aFIFOIsRefusedAtOnce() async throws {
        let directory = try moduleDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/mod.so"
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try #require(await outcome(within: 2) { try PKCS11Module(path: fifo) }, "loading a FIFO did not return within 2 s")
        #expect(throws: TokenError.moduleNotLoadable(path: fifo, reason: "\(fifo) is not a regular file")) { try result.get() }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11Tests.softHSMFile)))
    func oneModuleByTwoPathsIsLoadedOnceAndOneLogoutLeavesTheOtherSession() throws {
        let byLink = try PKCS11Module(path: SoftwareToken.defaultModulePath)
        let byFile = try PKCS11Module(path: Self.softHSMFile)
        #expect(byLink.library === byFile.library)

        let (label, id) = newKeyName()
        defer { delete(id: id) }
        let first = try PKCS11Session(module: byLink, token: token.serial, label: token.label)
        try first.login(pin: pin(token.pin))
        _ = try first.generateEd25519Key(label: label, id: id)
        var second: PKCS11Session? = try PKCS11Session(module: byFile, token: token.serial, label: token.label)
        try second?.login(pin: pin(token.pin))
        // The second identity goes (its session closes): the first, by the other path, still signs.
        second = nil
        #expect(try first.sign([1, 2, 3], key: id).count == 64)
    }
}

private final class OutcomeBox: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var result: Result<PKCS11Module, any Error>?

    func set(_ value: Result<PKCS11Module, any Error>) { lock.withLock { result = value } }
    func get() -> Result<PKCS11Module, any Error>? { lock.withLock { result } }
}
