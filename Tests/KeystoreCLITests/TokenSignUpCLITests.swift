import Foundation
import Testing
import SoftwareToken
import StellarKeystore
import StellarKeys

/// `signup --pkcs11` leaves a key pair in the token only for an identity it recorded: what can be checked is
/// checked before the pair is made, the name is held while it is, and a pair made for no vault is destroyed.
extension PKCS11CLITests {
    /// The Ed25519 private keys pkcs11-tool lists on the token.
    func privateKeyCount() throws -> Int {
        try objects().split(separator: "\n").filter { $0.hasPrefix("Private Key Object") }.count
    }

    /// A copy of SoftHSM2's module in `directory` (made in the home, removed with it).
    func moduleCopy(in directory: String) throws -> String {
        let directory = home.path + "/" + directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let copy = directory + "/libsofthsm2.so"
        // The file itself: Debian's path is a relative link, which a copy would leave dangling.
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: token.modulePath).resolvingSymlinksInPath().path, toPath: copy)
        chmod(copy, 0o644)
        return copy
    }

    @Test func aModulePathWithAControlCharacterMakesNoKey() throws {
        // A copy of SoftHSM2 in a directory whose name holds a BEL: loadable, but no vault can record its path.
        let copy = try moduleCopy(in: "mod\u{7}dir")
        let signup = try run(["signup", "--name", "hsm", "--pkcs11", copy, "--pin-stdin"], stdin: "\(pin)\n")
        #expect(signup.status != 0 && signup.stderrLines.count == 1, "\(signup.stderr)")
        #expect(signup.stderr.contains("control character"), "\(signup.stderr)")
        #expect(try privateKeyCount() == 0)
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("hsm")))
    }

    @Test func twoSignupsOfOneNameLeaveOneKeyAndOneVault() throws {
        // Different key labels, so that the token's own check of the label does not stop the second: only the
        // name can.
        var runs: [KeystoreProcess.Running] = []
        for label in ["race-a", "race-b"] {
            runs.append(try keystore.start(["signup", "--name", "race", "--pkcs11", token.modulePath, "--key-label", label, "--pin-stdin"],
                                           stdin: Array("\(pin)\n".utf8)))
        }
        let results = try runs.map { try $0.wait(timeout: 60) }
        #expect(results.filter { $0.status == 0 }.count == 1, "\(results.map(\.stderr))")
        let listed = try objects()
        #expect(try privateKeyCount() == 1, "\(listed)")
        #expect(FileManager.default.fileExists(atPath: home.vaultPath("race")))
    }

    @Test func aFIFOAsTheModuleIsOneLineAtOnce() throws {
        let fifo = home.path + "/module.so"
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let started = Date()
        let signup = try keystore.start(["signup", "--name", "hsm", "--pkcs11", fifo, "--pin-stdin"], stdin: Array("\(pin)\n".utf8))
        let result = try signup.wait(timeout: 10)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(result.status == 2 && result.stderrLines.count == 1 && result.stderr.contains("not a regular file"), "\(result.stderr)")
    }

    @Test func aVaultWhoseModuleBecameAFIFOIsOneLineAtOnce() throws {
        let copy = try moduleCopy(in: "module")
        let signup = try run(["signup", "--name", "hsm", "--pkcs11", copy, "--pin-stdin"], stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        unlink(copy)
        #expect(mkfifo(copy, 0o600) == 0)
        let started = Date()
        let login = try keystore.start(["login", "--name", "hsm", "--pin-stdin"], stdin: Array("\(pin)\n".utf8))
        let result = try login.wait(timeout: 10)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(result.status == 2 && result.stderrLines.count == 1 && result.stderr.contains("not a regular file"), "\(result.stderr)")
    }
}
