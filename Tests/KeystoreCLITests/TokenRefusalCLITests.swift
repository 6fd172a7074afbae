import Foundation
import Testing
import TestFixtures
import SoftwareToken
import StellarKeystore
import StellarKeys

/// What a token identity refuses before it is made or used: a key the token would let out, and a module any user
/// may rewrite (found in issue 31's review), against a private SoftHSM2 token per test as PKCS11CLITests sets one up.
@Suite(.offThePool, .enabled(if: SoftwareToken.isInstalled, "softhsm2 or opensc is not installed"))
final class TokenRefusalCLITests {
    let home = try! KeystoreHome()
    let token: SoftwareToken
    let pin = "4711-token"

    init() throws {
        token = try SoftwareToken(label: "keystore-test", pin: pin)
        _ = try home.keystoreWithRuntime()
    }

    deinit { token.remove() }

    func run(_ arguments: [String], stdin: String = "") throws -> KeystoreProcess.Result {
        var process = home.keystore
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        for (key, value) in token.environment { process.environment[key] = value }
        return try process.run(arguments, stdin: Array(stdin.utf8))
    }

    func vaultExists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: home.vaultPath(name)) }

    /// Issue 31 is keys that never leave hardware; a key made with signup --pkcs11 is checked to be sensitive and
    /// never extractable, but one chosen with --existing is not checked at all: a key the token will wrap out
    /// (CKA_EXTRACTABLE) becomes an identity with no word said.
    @Test func anExistingKeyTheTokenWouldLetOutIsRefused() throws {
        _ = try token.pkcs11Tool(["--keypairgen", "--key-type", "EC:edwards25519", "--label", "leaky", "--id", "c0de", "--extractable"])
        #expect(try token.pkcs11Tool(["--list-objects"]).contains("extractable"))
        let signup = try run(["signup", "--name", "leaky", "--pkcs11", token.modulePath, "--existing", "--key-label", "leaky", "--pin-stdin"],
                             stdin: "\(pin)\n")
        #expect(signup.status == 2, "\(signup.stdout)\(signup.stderr)")
        #expect(!vaultExists("leaky"))
    }

    /// A refusal that needs nothing but the vault (export, change-pin, bind, unbind) is said first: today each
    /// loads the vault's module and looks for the token before refusing, so with the token unplugged the person
    /// gets "no token" (exit 8) instead of "cannot be exported" (exit 2), and the module is loaded for nothing.
    @Test func aRefusalComesBeforeTheModuleIsAskedAnything() throws {
        let signup = try run(["signup", "--name", "hsm", "--pkcs11", token.modulePath, "--pin-stdin"], stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath("hsm")))
        // The token unplugged: its directory moved away, an empty one in its place.
        let tokens = token.directory + "/tokens"
        try FileManager.default.moveItem(atPath: tokens, toPath: tokens + ".away")
        try FileManager.default.createDirectory(atPath: tokens, withIntermediateDirectories: false)
        for (arguments, words) in [(["export", "--force"], "cannot be exported"), (["change-pin"], "its tools change it"),
                                   (["bind", "--tpm"], "a TPM adds nothing"), (["unbind"], "a TPM adds nothing")] {
            let refused = try run(arguments + ["--name", "hsm"])
            #expect(refused.status == 2 && refused.stderr.contains(words), "\(arguments): \(refused.status) \(refused.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath("hsm"))) == before)
    }

    /// The module is code that keystore (and the signing agent, which holds other identities' seeds) runs as the
    /// user. A module file that any local user may rewrite is another user's code in this process: it must be
    /// refused (ssh-agent refuses PKCS#11 providers outside an allow-list for the same reason), before any PIN.
    @Test func aModuleAnyUserMayRewriteIsNotLoaded() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-r31-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let module = scratch + "/libsofthsm2.so"
        // The module's bytes, not a symlink to it (Debian's path is a relative symlink).
        try Data(contentsOf: URL(fileURLWithPath: token.modulePath).resolvingSymlinksInPath()).write(to: URL(fileURLWithPath: module))
        try #require(chmod(module, 0o666) == 0)
        let signup = try run(["signup", "--name", "planted", "--pkcs11", module, "--pin-stdin"], stdin: "\(pin)\n")
        #expect(signup.status == 2, "\(signup.stdout)\(signup.stderr)")
        #expect(!vaultExists("planted"))
    }
}
