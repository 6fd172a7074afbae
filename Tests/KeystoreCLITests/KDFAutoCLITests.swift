import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// `--kdf auto` and `keystore upgrade`: costs that fit the machine, and vaults that get stronger.
@Suite(.offThePool) struct KDFAutoCLITests {
    /// Without --kdf, signup measures what this machine affords once, says what it chose, and keeps it.
    @Test func signupWithoutKdfSaysWhatAutoChose() throws {
        let home = try KeystoreHome(inProcess: true)
        let first = try home.run(["signup", "--pin-stdin"], stdin: "270419\n")
        #expect(first.status == 0 && first.stderr.contains("--kdf auto chose "), "\(first.stderr)")
        let today = Date().formatted(.iso8601.year().month().day())
        #expect(first.stderr.contains("as measured on \(today) (kept in \(home.path)/.kdf-calibration)"), "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.path + "/.kdf-calibration"))
        #expect(try home.run(["list"]).stdout.split(separator: "\n").count == 1)
    }

    /// A sign-up refused for its PIN (malformed, or too easy to guess) measures nothing and keeps nothing: only a
    /// sign-up that goes ahead calibrates.
    @Test(arguments: ["12345", "123456"])
    func aRefusedSignupMeasuresNothing(_ pin: String) throws {
        let home = try KeystoreHome(inProcess: true)
        let refused = try home.run(["signup", "--pin-stdin"], stdin: pin + "\n")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.path + "/.kdf-calibration"), "a refused sign-up calibrated")
        #expect(!refused.stderr.contains("--kdf auto chose"), "\(refused.stderr)")
    }

    /// A new user's trial: a sign-up refused for a 5-digit PIN, then one with --kdf interactive on purpose. That
    /// vault records the choice, and no login nags about it, even once this machine is known to afford more.
    @Test func aVaultWhoseLevelWasChosenIsNeverNagged() throws {
        let home = try KeystoreHome(inProcess: true)
        #expect(try home.run(["signup", "--pin-stdin"], stdin: "27041\n").status == 2)
        let signup = try home.run(["signup", "--kdf", "interactive", "--pin-stdin"], stdin: "270419\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        #expect(!signup.stderr.contains("--kdf auto chose"), "\(signup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.path + "/.kdf-calibration"), "a named level calibrated")
        let vault = try String(contentsOfFile: home.vaultPath("default"), encoding: .utf8)
        #expect(vault.contains("\"chosen\" : true") && vault.contains("\"memLimit\" : 67108864"), "\(vault)")
        let login = try home.run(["login", "--pin-stdin"], stdin: "270419\n")
        #expect(login.status == 0 && login.stderr.isEmpty, "\(login.stderr)")
        // Once this machine is known to afford moderate (another sign-up measured it), still no notice for it.
        let calibration = #"{"level":"moderate","secondsPerUnlock":{"interactive":0.05,"moderate":0.4}}"#
        try calibration.write(toFile: home.path + "/.kdf-calibration", atomically: false, encoding: .utf8)
        let again = try home.run(["login", "--pin-stdin"], stdin: "270419\n")
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        // A PIN change keeps the choice; a PIN change to --kdf auto gives it up, and the notice is back.
        let kept = try home.run(["change-pin", "--pin-stdin", "--new-pin-fd", "3"], stdin: "270419\n", files: [3: "918273\n"])
        #expect(kept.status == 0, "\(kept.stderr)")
        let afterChange = try home.run(["login", "--pin-stdin"], stdin: "918273\n")
        #expect(afterChange.status == 0 && afterChange.stderr.isEmpty, "\(afterChange.stderr)")
        try #"{"level":"interactive","secondsPerUnlock":{"interactive":0.05}}"#
            .write(toFile: home.path + "/.kdf-calibration", atomically: false, encoding: .utf8)
        let auto = try home.run(["change-pin", "--kdf", "auto", "--pin-stdin", "--new-pin-fd", "3"], stdin: "918273\n", files: [3: "270419\n"])
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(!(try String(contentsOfFile: home.vaultPath("default"), encoding: .utf8)).contains("chosen"))
        try calibration.write(toFile: home.path + "/.kdf-calibration", atomically: false, encoding: .utf8)
        let nagged = try home.run(["login", "--pin-stdin"], stdin: "270419\n")
        #expect(nagged.status == 0 && nagged.stderr.contains("'keystore upgrade --name default'"), "\(nagged.stderr)")
    }

    /// A vault lighter than the machine affords: login says so, and upgrade re-encrypts it under the same PIN.
    @Test func loginSuggestsAnUpgradeAndUpgradeDoesIt() throws {
        let home = try KeystoreHome(inProcess: true)
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

    /// A calibration file someone else could have written (group- or world-writable, or another user's) could
    /// make every new vault's Argon2id as light as they like, under a message claiming the machine's strongest:
    /// it is ignored, said so, and measured again.
    @Test(arguments: ["world-writable", "another user's"])
    func aPlantedCalibrationIsIgnored(_ kind: String) throws {
        let home = try KeystoreHome(inProcess: true)
        let path = home.path + "/.kdf-calibration"
        let planted = #"{"level":"interactive","secondsPerUnlock":{"interactive":9.99}}"#
        try planted.write(toFile: path, atomically: false, encoding: .utf8)
        if kind == "world-writable" {
            #expect(chmod(path, 0o666) == 0)
        } else {
            #expect(chown(path, 65534, 65534) == 0)  // the tests run as root; nobody's file
        }
        let signup = try home.run(["signup", "--pin-stdin"], stdin: "270419\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        #expect(signup.stderr.contains("warning: ignoring \(path): \(kind == "world-writable" ? "others may write it" : "another user owns it")"),
                "\(signup.stderr)")
        #expect(!signup.stderr.contains("9.99"), "the planted figures were used: \(signup.stderr)")
        let remeasured = try String(contentsOfFile: path, encoding: .utf8)
        #expect(remeasured != planted)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600 && (attributes[.ownerAccountID] as? Int) == Int(geteuid()))
    }

    @Test func upgradingAVaultAlreadyThereSaysSoAndEndsNoSession() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()  // interactive
        let name = KeystoreHome.golden.name
        let upgrade = try home.run(["upgrade", "--name", name, "--kdf", "interactive"])  // no PIN on standard input: none is asked
        #expect(upgrade.status == 0 && upgrade.stdout.contains("already encrypted at --kdf interactive; nothing was changed"), "\(upgrade.stderr)")
    }
}
