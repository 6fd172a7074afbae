import Foundation
import Testing
import TestFixtures
import SoftwareTPM
#if canImport(Glibc)
import Glibc
#endif

/// `keystore tpm-move` as two people on two machines run it: each machine a keystore home with its own swtpm.
@Suite(.offThePool, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct TPMMoveCLITests {
    let pin = "270419", newPIN = "503816"

    struct Machine {
        let home: KeystoreHome
        let tpm: SoftwareTPM
        func run(_ arguments: [String], stdin: String = "", files: [Int32: String] = [:]) throws -> KeystoreProcess.Result {
            var process = home.keystore
            process.environment["KEYSTORE_TPM_TCTI"] = tpm.tcti
            return try process.run(arguments, stdin: Array(stdin.utf8), files: files.mapValues { Array($0.utf8) })
        }
    }

    @Test func aBoundKeyMovesToTheNewMachinesTPMAndNoOtherTakesIt() throws {
        let old = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let new = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let other = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let signup = try old.run(["signup", "--name", "alice", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"],
                                 stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        let target = new.home.path + "-target.json", move = old.home.path + "-move.json"
        defer { unlink(target); unlink(move) }

        let made = try new.run(["tpm-move", "target", "--output", target])
        #expect(made.status == 0, "\(made.stderr)")
        let fingerprint = made.stdout.trimmingCharacters(in: .newlines)
        let wrapped = try old.run(["tpm-move", "wrap", "--name", "alice", "--to", target, "--fingerprint", fingerprint, "--output", move, "--pin-stdin"],
                                  stdin: "\(pin)\n")
        #expect(wrapped.status == 0, "\(wrapped.stderr)")
        let code = wrapped.stdout.trimmingCharacters(in: .newlines)
        #expect(code.count == 19, "\(wrapped.stdout)")
        // The seed is in no file written, in any form.
        let seed = try old.run(["export", "--name", "alice", "--force", "--pin-stdin"], stdin: "\(pin)\n").stdout.trimmingCharacters(in: .newlines)
        let moveText = try String(contentsOfFile: move, encoding: .utf8)
        #expect(seed.hasPrefix("S") && !moveText.contains(seed))

        // Another machine's TPM refuses the file before any PIN is read, and writes nothing.
        let refused = try other.run(["tpm-move", "import", move, "--name", "alice", "--allow-open-lockout", "--pin-stdin", "--code-fd", "3"],
                                    stdin: "", files: [3: code + "\n"])
        #expect(refused.status == 7 && refused.stderrLines.count == 1 && other.home.snapshot().isEmpty, "\(refused.stderr)")

        // On the new machine the file alone is no bearer token: without its transfer code nothing is imported.
        let withoutCode = try new.run(["tpm-move", "import", move, "--name", "alice", "--allow-open-lockout", "--pin-stdin"], stdin: "\(newPIN)\n")
        #expect(withoutCode.status == 64 && new.home.snapshot().isEmpty, "\(withoutCode.stderr)")
        let imported = try new.run(["tpm-move", "import", move, "--name", "alice", "--allow-open-lockout", "--pin-stdin", "--code-fd", "3"],
                                   stdin: "\(newPIN)\n", files: [3: code + "\n"])
        #expect(imported.status == 0 && imported.stdout == "alice\t\(address)\n", "\(imported.stderr)")
        let list = try new.run(["list"])
        #expect(list.stdout == "alice\t\(address)\ttpm\n", "\(list.stdout)")
        #expect(try new.run(["sign", "--name", "alice", "--hex", "00", "--pin-stdin"], stdin: "\(newPIN)\n").status == 0)
    }

    /// A target file swapped on the way (its storage key a P-256 key made here, in no TPM) gets nothing: wrap takes
    /// only the fingerprint the new machine printed, refuses a file whose key has another before any PIN, and asks
    /// for it when none is given (so, with no terminal, refuses). Before the fingerprint, such a file got the seed.
    @Test func aSwappedTargetFileGetsNothing() throws {
        let old = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let new = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let signup = try old.run(["signup", "--name", "alice", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"],
                                 stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let target = new.home.path + "-target.json", forged = new.home.path + "-forged.json", move = old.home.path + "-move.json"
        defer { unlink(target); unlink(forged); unlink(move) }
        let made = try new.run(["tpm-move", "target", "--output", target])
        let fingerprint = made.stdout.trimmingCharacters(in: .newlines)
        #expect(made.status == 0 && fingerprint.count == 24, "\(made.stdout) \(made.stderr)")
        // The attacker's file: the same JSON, the storage key's point replaced by one whose private half they hold.
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: target))) as! [String: Any]
        let storageKey = Array(try #require(Data(base64Encoded: json["storageKey"] as! String)))
        json["storageKey"] = Data(try SoftwareTPM.forgedStorageKey(like: storageKey)).base64EncodedString()
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: forged))

        for extra in [["--fingerprint", fingerprint], []] {
            let refused = try old.run(["tpm-move", "wrap", "--name", "alice", "--to", forged, "--output", move, "--pin-stdin"] + extra,
                                      stdin: "\(pin)\n")
            #expect(refused.status == (extra.isEmpty ? 64 : 2) && refused.stderrLines.count == 1, "\(extra): \(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: move), "\(extra): no move file")
        }
        let refused = try old.run(["tpm-move", "wrap", "--name", "alice", "--to", forged, "--output", move, "--fingerprint", fingerprint], stdin: "")
        #expect(refused.stderr.contains("has the fingerprint") && refused.stderr.contains("not \(fingerprint) as confirmed"), "\(refused.stderr)")
        // The genuine file, with the fingerprint as typed by hand, is wrapped to.
        let wrapped = try old.run(["tpm-move", "wrap", "--name", "alice", "--to", target, "--output", move, "--pin-stdin",
                                   "--fingerprint", fingerprint.uppercased().replacingOccurrences(of: "-", with: " ")], stdin: "\(pin)\n")
        #expect(wrapped.status == 0 && FileManager.default.fileExists(atPath: move), "\(wrapped.stderr)")
    }

    /// A backup of a TPM-bound identity restores bound to the new machine's TPM with `--tpm`, and unbound without.
    @Test func aBackupRestoresBoundToTheNewTPMOnlyWhenAsked() throws {
        let old = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let new = Machine(home: try KeystoreHome(), tpm: try SoftwareTPM())
        let signup = try old.run(["signup", "--name", "alice", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"],
                                 stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        let file = old.home.path + "-backup.age"
        defer { unlink(file) }
        let made = try old.run(["backup", "--output", file, "--print-key", "--pin-stdin"], stdin: "\(pin)\n")
        try #require(made.status == 0, "\(made.stderr)")
        let key = made.stdout.trimmingCharacters(in: .newlines)
        var process = new.home.keystore
        process.environment["KEYSTORE_TPM_TCTI"] = new.tpm.tcti
        // Not silently unbound: without --tpm (or --unbound) it is refused, before any PIN, and nothing is written.
        let unbound = try process.run(["restore", file, "--secret-fd", "3", "--pin-stdin", "--kdf", "interactive"],
                                      stdin: Array("\(newPIN)\n".utf8), files: [3: Array((key + "\n").utf8)])
        #expect(unbound.status == 10 && unbound.stderr.contains("alice (\(address)): new, was TPM-bound"), "\(unbound.stderr)")
        #expect(new.home.snapshot().isEmpty)
        let restored = try process.run(["restore", file, "--tpm", "--allow-open-lockout", "--secret-fd", "3", "--pin-stdin", "--kdf", "interactive"],
                                       stdin: Array("\(newPIN)\n".utf8), files: [3: Array((key + "\n").utf8)])
        #expect(restored.status == 0 && restored.stdout == "alice\t\(address)\n", "\(restored.stderr)")
        #expect(try new.run(["list"]).stdout == "alice\t\(address)\ttpm\n")
    }
}
