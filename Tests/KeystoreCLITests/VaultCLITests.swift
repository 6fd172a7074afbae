import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// A keystore directory of its own for one test, and `keystore` pointed at it.
final class KeystoreHome {
    let path: String
    let keystore: KeystoreProcess

    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")
    /// The golden vault with PIN 270419 and the RFC 8032 TEST 1 seed (fixtures/vaults/vaults.json).
    static let golden = (name: "golden-interactive", pin: "270419",
                         address: "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR",
                         seed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")

    /// With `inProcess`, its `keystore` runs commands in this process where no process is needed
    /// (`KeystoreProcess.runsInProcess`).
    init(inProcess: Bool = false) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-home-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        keystore = KeystoreProcess(environment: ["KEYSTORE_HOME": path, "XDG_DATA_HOME": nil], runsInProcess: inProcess)
    }

    /// A private runtime directory (`XDG_RUNTIME_DIR`) for this test's sessions, removed with the home.
    var runtime: String { path + "-run" }

    deinit {
        for directory in [path, runtime] {
            chmod(directory, 0o700)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// `keystore` with its own runtime directory, so that sessions stay inside this test.
    func keystoreWithRuntime() throws -> KeystoreProcess {
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var process = keystore
        process.environment["XDG_RUNTIME_DIR"] = runtime
        return process
    }

    func run(_ arguments: [String], stdin: String = "", files: [Int32: String] = [:], prefix: [String] = [],
             timeout: Double? = 120) throws -> KeystoreProcess.Result {
        try keystore.run(arguments, stdin: Array(stdin.utf8), files: files.mapValues { Array($0.utf8) }, prefix: prefix,
                         timeout: timeout)
    }

    /// Copies the golden vault in, under its own name.
    func addGolden() throws { try addFixture(Self.golden.name) }

    /// Copies `fixtures/vaults/NAME.vault` in, under its own name.
    func addFixture(_ name: String) throws {
        let source = Self.fixtures.appendingPathComponent("vaults/\(name).vault").path
        try FileManager.default.copyItem(atPath: source, toPath: vaultPath(name))
        chmod(vaultPath(name), 0o600)
    }

    func vaultPath(_ name: String) -> String { "\(path)/\(name).vault" }

    /// Every file in the directory with its bytes.
    func snapshot() -> [String: Data] {
        var files: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            files[name] = try? Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        }
        return files
    }

    /// The vault files only: the throttle record beside them is allowed to change.
    func vaults() -> [String: Data] { snapshot().filter { $0.key.hasSuffix(".vault") || $0.key.contains(".vault.") } }
}

@Suite(.offThePool) struct VaultCLITests {
    /// The whole life of an identity, as a script drives it, with the PIN through each non-interactive channel.
    @Test func signupLoginChangePINExportRemove() throws {
        let home = try KeystoreHome(inProcess: true)
        let signup = try home.run(["signup", "--kdf", "interactive", "--pin-stdin"], stdin: "270419\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        #expect(address.count == 56 && address.hasPrefix("G"))
        #expect(try home.run(["address"]).stdout == address + "\n")
        #expect(try home.run(["whoami"]).stdout == address + "\n")

        let login = try home.run(["login", "--pin-fd", "3"], files: [3: "270419\n"])
        #expect(login.status == 0 && login.stdout == address + "\n" && login.stderr.isEmpty)

        let change = try home.run(["change-pin", "--pin-stdin", "--new-pin-fd", "4", "--kdf", "interactive"],
                                  stdin: "270419\n", files: [4: "503816\n"])
        #expect(change.status == 0, "\(change.stderr)")
        let pinFile = home.path + "/../pin-\(UUID().uuidString)"
        try "503816\n".write(toFile: pinFile, atomically: false, encoding: .utf8)
        chmod(pinFile, 0o600)
        defer { unlink(pinFile) }
        let newLogin = try home.run(["login", "--pin-file", pinFile, "--json"])
        #expect(newLogin.status == 0 && newLogin.stdout.contains("\"address\":\"\(address)\""))
        #expect(try home.run(["login", "--pin-stdin"], stdin: "270419\n").status == 3)

        let export = try home.run(["export", "--force", "--pin-stdin"], stdin: "503816\n")
        #expect(export.status == 0 && export.stderr.contains("secret seed"))
        let seed = export.stdout.trimmingCharacters(in: .newlines)
        #expect(seed.count == 56 && seed.hasPrefix("S"))
        // The exported seed is the same key: imported elsewhere, it has the same address.
        let copy = try home.run(["signup", "--import", "--name", "copy", "--kdf", "interactive", "--pin-stdin"],
                                stdin: "\(seed)\n918273\n")
        #expect(copy.status == 0 && copy.stdout == address + "\n")

        let remove = try home.run(["remove", "--pin-stdin"], stdin: "503816\n")
        #expect(remove.status == 0 && remove.stdout.contains(address))
        #expect(try home.run(["address"]).status == 5)
        let list = try home.run(["list"])
        #expect(list.stdout == "copy\t\(address)\n")
    }

    @Test func importedSeedsAndExportsAgree() throws {
        let home = try KeystoreHome(inProcess: true)
        let golden = KeystoreHome.golden
        let signup = try home.run(["signup", "--import", "--pin-stdin", "--kdf", "interactive", "--json"],
                                  stdin: "  \(golden.seed) \n270419\n")
        #expect(signup.status == 0 && signup.stdout.contains("\"address\":\"\(golden.address)\""))
        #expect(!signup.stdout.contains(golden.seed) && !signup.stderr.contains(golden.seed))
        let export = try home.run(["export", "--force", "--pin-stdin", "--json"], stdin: "270419\n")
        let object = try JSONSerialization.jsonObject(with: Data(export.stdoutBytes)) as? [String: String]
        #expect(object == ["name": "default", "address": golden.address, "secretSeed": golden.seed])
    }

    @Test func goldenVaultOpensFromTheCommandLine() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let login = try home.run(["login", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "270419\n")
        #expect(login.status == 0 && login.stdout == KeystoreHome.golden.address + "\n")
        let list = try home.run(["list", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [String: Any]
        let identities = try #require(object?["identities"] as? [[String: Any]])
        #expect(identities.count == 1 && identities[0].count == 5)
        #expect(identities[0]["keySource"] as? String == "vault")
        #expect(identities[0]["inBackup"] as? Bool == false)
        #expect(identities[0]["name"] as? String == KeystoreHome.golden.name)
        #expect(identities[0]["address"] as? String == KeystoreHome.golden.address)
        #expect(identities[0]["tpm"] as? Bool == false)
    }

    @Test func replacingKeepsABackup() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let before = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(KeystoreHome.golden.name)))
        let replace = try home.run(["signup", "--name", KeystoreHome.golden.name, "--replace", "--kdf", "interactive", "--pin-stdin"],
                                   stdin: "918273\n")
        #expect(replace.status == 0 && replace.stderr.contains("backup"))
        let backups = home.snapshot().filter { $0.key.hasPrefix("\(KeystoreHome.golden.name).vault.backup-") }
        #expect(backups.count == 1 && backups.first?.value == before)
        #expect(replace.stdout != KeystoreHome.golden.address + "\n")
    }

    @Test func listShowsDamagedVaultsWithoutFailing() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        try Data("{".utf8).write(to: URL(fileURLWithPath: home.vaultPath("broken")))
        let list = try home.run(["list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("broken\t(cannot be read: ") && list.stdout.contains(KeystoreHome.golden.address))
    }

    @Test func thePINCannotBeGivenOnTheCommandLine() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        // A PIN given anyway is refused (10) without being repeated; two sources of one PIN are a usage error (64).
        for (arguments, status) in [(["login", "270419"], 10), (["login", "--pin", "270419"], 10), (["login", "--pin-stdin", "--pin-fd", "3"], 64)] {
            let result = try home.run(arguments + ["--name", KeystoreHome.golden.name])
            #expect(result.status == Int32(status), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("270419"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func exportRefusesAPipeWithoutForce() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["export", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "270419\n")
        #expect(result.status == 10 && result.stdout.isEmpty && result.stderr.contains("--force"))
    }

    @Test func parallelSignupsOfOneNameLetExactlyOneWin() throws {
        let home = try KeystoreHome(inProcess: true)
        let runs = try (0..<8).map { _ in
            try home.keystore.start(["signup", "--name", "race", "--kdf", "interactive", "--pin-stdin"], stdin: Array("270419\n".utf8))
        }
        let results = try runs.map { try $0.wait() }
        #expect(results.filter { $0.status == 0 }.count == 1)
        #expect(results.filter { $0.status == 6 && $0.stderr.contains("already exists") }.count == 7)
        let winner = try #require(results.first { $0.status == 0 })
        #expect(try home.run(["address", "--name", "race"]).stdout == winner.stdout)
    }

    @Test func loginsDuringPINChangesNeverSeeATornVault() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let name = KeystoreHome.golden.name
        let change = try home.keystore.start(["change-pin", "--name", name, "--kdf", "interactive", "--pin-stdin", "--new-pin-fd", "0"],
                                             stdin: Array("270419\n918273\n".utf8))
        // While the change runs, every read sees a whole vault, old or new, never a torn one.
        var reads = 0
        repeat {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(name))))
            let vault = try Vault(file: bytes, path: name)
            #expect(vault.publicKey.accountID == KeystoreHome.golden.address)
            reads += 1
        } while kill(change.pid, 0) == 0 && reads < 2_000
        #expect(try home.run(["address", "--name", name]).stdout == KeystoreHome.golden.address + "\n")
        #expect(try change.wait().status == 0)
        #expect(try home.run(["login", "--name", name, "--pin-stdin"], stdin: "918273\n").status == 0)
    }
}
