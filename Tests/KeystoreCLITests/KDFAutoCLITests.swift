import Foundation
import Testing

/// `--kdf auto` and `keystore upgrade`: costs that fit the machine, and vaults that get stronger.
@Suite struct KDFAutoCLITests {
    /// Without --kdf, signup measures what this machine affords once, says what it chose, and keeps it.
    @Test func signupWithoutKdfSaysWhatAutoChose() throws {
        let home = try KeystoreHome()
        let first = try home.run(["signup", "--pin-stdin"], stdin: "270419\n")
        #expect(first.status == 0 && first.stderr.contains("--kdf auto chose "), "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.path + "/.kdf-calibration"))
        #expect(try home.run(["list"]).stdout.split(separator: "\n").count == 1)
    }

    /// A vault lighter than the machine affords: login says so, and upgrade re-encrypts it under the same PIN.
    @Test func loginSuggestsAnUpgradeAndUpgradeDoesIt() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let calibration = #"{"level":"moderate","secondsPerUnlock":{"interactive":0.05,"moderate":0.4}}"#
        try calibration.write(toFile: home.path + "/.kdf-calibration", atomically: false, encoding: .utf8)
        let name = KeystoreHome.golden.name
        let login = try home.run(["login", "--name", name, "--pin-stdin"], stdin: "270419\n")
        #expect(login.status == 0 && login.stderr.contains("'keystore upgrade --name \(name)'"), "\(login.stderr)")
        let upgrade = try home.run(["upgrade", "--name", name, "--pin-stdin"], stdin: "270419\n")
        #expect(upgrade.status == 0 && upgrade.stdout.contains("--kdf moderate"), "\(upgrade.stderr)")
        #expect(try String(contentsOfFile: home.vaultPath(name), encoding: .utf8).contains("\"memLimit\" : 268435456"))
        let again = try home.run(["login", "--name", name, "--pin-stdin"], stdin: "270419\n")
        #expect(again.status == 0 && again.stderr.isEmpty && again.stdout == KeystoreHome.golden.address + "\n")
    }
}
