import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// Secret hygiene of the process and its files.
@Suite(.offThePool) struct HygieneCLITests {
    @Test func noCoreDumpWhileWaitingForAPIN() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let terminal = try PseudoTerminal()
        let login = try home.keystore.start(["login", "--name", KeystoreHome.golden.name], terminal: terminal.path)
        terminal.waitFor("PIN: ")
        let limits = try String(contentsOfFile: "/proc/\(login.pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(core?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core ?? "")")
        terminal.type("270419")
        #expect(try login.wait().status == 0)
    }

    @Test func filesArePrivateEvenUnderAPermissiveUmask() throws {
        let home = try KeystoreHome(inProcess: true)
        let keys = home.path + "/nested/keys"
        let permissive = ["sh", "-c", "umask 000; exec \"$0\" \"$@\""]
        let signup = try home.run(["signup", "--home", keys, "--pin-stdin", "--kdf", "interactive"], stdin: "270419\n", prefix: permissive)
        #expect(signup.status == 0, "\(signup.stderr)")
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
        }
        #expect(try mode(home.path + "/nested") == 0o700 && mode(keys) == 0o700)
        #expect(try mode(keys + "/default.vault") == 0o600 && mode(keys + "/.lock") == 0o600)
        _ = try home.run(["login", "--home", keys, "--pin-stdin"], stdin: "503816\n", prefix: permissive)
        #expect(try mode(keys + "/.default.throttle") == 0o600)
        // No permission warning for files keystore made itself: what a copy of the vault is worth, and nothing else.
        #expect(signup.stderrLines.count == 1 && signup.stderr.hasPrefix("keystore: a copy of this vault file holds about"),
                "\(signup.stderr)")
    }

    @Test func benchKDFReportsConsistentFigures() throws {
        let result = try KeystoreProcess(runsInProcess: true).run(["bench-kdf", "--levels", "interactive", "--runs", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
        let level = try #require((object["levels"] as? [[String: Any]])?.first)
        let seconds = try #require(level["secondsPerGuess"] as? Double)
        #expect(level["level"] as? String == "interactive" && level["memLimitMiB"] as? Int == 64 && seconds > 0)
        let hours = try #require(level["allPINsOneCoreHours"] as? Double)
        #expect(abs(hours - seconds * 1e6 / 3600) < 1e-6 * hours)
        #expect((level["peakMemoryMiB"] as? Int ?? 0) >= 64, "Argon2id really used its memory")
    }
}
