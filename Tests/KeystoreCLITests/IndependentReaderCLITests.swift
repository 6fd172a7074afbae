import Foundation
import Testing
import TestFixtures

/// docs/open_vault_ctypes.py is the independent check of the vault format: docs/FORMAT.md's recipe, Python's
/// standard library and the system libsodium through ctypes, no line of keystore's code. These tests make vaults
/// with the tool and have the script open them, so that the format and its description cannot drift apart.
@Suite(.offThePool) struct IndependentReaderCLITests {
    static let script = KeystoreHome.fixtures.deletingLastPathComponent().appendingPathComponent("docs/open_vault_ctypes.py").path

    /// The script's answer for the vault at `path` opened with `pin`: the seed on stdout, or its failure.
    static func open(_ path: String, pin: String) throws -> KeystoreProcess.Result {
        try KeystoreProcess(program: "python3").run([script, path], stdin: Array("\(pin)\n".utf8), timeout: 120)
    }

    @Test func theScriptOpensTheGoldenVault() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let opened = try Self.open(home.vaultPath(KeystoreHome.golden.name), pin: KeystoreHome.golden.pin)
        #expect(opened.status == 0 && opened.stdout == KeystoreHome.golden.seed + "\n", "\(opened.stderr)")
    }

    /// A vault the tool writes now, and the same vault after a PIN change, opens to the seed the tool exports.
    @Test func theScriptOpensAVaultTheToolJustMade() throws {
        let home = try KeystoreHome(inProcess: true)
        let signup = try home.run(["signup", "--name", "fresh", "--kdf", "interactive", "--pin-stdin"], stdin: "270419\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let export = try home.run(["export", "--name", "fresh", "--force", "--pin-stdin"], stdin: "270419\n")
        try #require(export.status == 0, "\(export.stderr)")
        let seed = export.stdout.trimmingCharacters(in: .newlines)
        try #require(seed.count == 56 && seed.hasPrefix("S"))

        let opened = try Self.open(home.vaultPath("fresh"), pin: "270419")
        #expect(opened.status == 0 && opened.stdout == seed + "\n", "\(opened.stderr)")

        let change = try home.run(["change-pin", "--name", "fresh", "--pin-stdin", "--new-pin-fd", "4", "--kdf", "moderate"],
                                  stdin: "270419\n", files: [4: "503816\n"])
        try #require(change.status == 0, "\(change.stderr)")
        let reopened = try Self.open(home.vaultPath("fresh"), pin: "503816")
        #expect(reopened.status == 0 && reopened.stdout == seed + "\n", "\(reopened.stderr)")
    }

    /// The script is a real check: the wrong PIN opens nothing, and neither does a vault with a key given twice.
    @Test func theScriptRefusesAWrongPINAndARepeatedKey() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let path = home.vaultPath(KeystoreHome.golden.name)
        let wrong = try Self.open(path, pin: "111111")
        #expect(wrong.status != 0 && wrong.stdout.isEmpty)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let doubled = text.replacingOccurrences(of: "{", with: "{\"name\": \"other\", ", options: [], range: text.range(of: "{"))
        try doubled.write(toFile: path, atomically: false, encoding: .utf8)
        let repeated = try Self.open(path, pin: KeystoreHome.golden.pin)
        #expect(repeated.status != 0 && repeated.stdout.isEmpty && repeated.stderr.contains("a key appears twice"), "\(repeated.stderr)")
    }
}
