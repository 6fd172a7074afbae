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
        func run(_ arguments: [String], stdin: String = "") throws -> KeystoreProcess.Result {
            var process = home.keystore
            process.environment["KEYSTORE_TPM_TCTI"] = tpm.tcti
            return try process.run(arguments, stdin: Array(stdin.utf8))
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
        let wrapped = try old.run(["tpm-move", "wrap", "--name", "alice", "--to", target, "--output", move, "--pin-stdin"], stdin: "\(pin)\n")
        #expect(wrapped.status == 0, "\(wrapped.stderr)")
        // The seed is in no file written, in any form.
        let seed = try old.run(["export", "--name", "alice", "--force", "--pin-stdin"], stdin: "\(pin)\n").stdout.trimmingCharacters(in: .newlines)
        let moveText = try String(contentsOfFile: move, encoding: .utf8)
        #expect(seed.hasPrefix("S") && !moveText.contains(seed))

        // Another machine's TPM refuses the file before any PIN is read, and writes nothing.
        let refused = try other.run(["tpm-move", "import", move, "--name", "alice", "--allow-open-lockout", "--pin-stdin"], stdin: "")
        #expect(refused.status == 7 && refused.stderrLines.count == 1 && other.home.snapshot().isEmpty, "\(refused.stderr)")

        let imported = try new.run(["tpm-move", "import", move, "--name", "alice", "--allow-open-lockout", "--pin-stdin"], stdin: "\(newPIN)\n")
        #expect(imported.status == 0 && imported.stdout == "alice\t\(address)\n", "\(imported.stderr)")
        let list = try new.run(["list"])
        #expect(list.stdout == "alice\t\(address)\ttpm\n", "\(list.stdout)")
        #expect(try new.run(["sign", "--name", "alice", "--hex", "00", "--pin-stdin"], stdin: "\(newPIN)\n").status == 0)
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
        let restored = try process.run(["restore", file, "--tpm", "--allow-open-lockout", "--secret-fd", "3", "--pin-stdin", "--kdf", "interactive"],
                                       stdin: Array("\(newPIN)\n".utf8), files: [3: Array((key + "\n").utf8)])
        #expect(restored.status == 0 && restored.stdout == "alice\t\(address)\n", "\(restored.stderr)")
        #expect(try new.run(["list"]).stdout == "alice\t\(address)\ttpm\n")
    }
}
