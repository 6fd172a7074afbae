import Foundation
import Testing
import TestFixtures
import SoftwareTPM
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// The TPM's lockout authorization: what makes its wrong-PIN limit hold. Each test has its own swtpm, since
/// setting that authorization cannot be undone by a test that does not hold the code. Each swtpm starts as a
/// default Linux TPM does: an empty lockout authorization, 3 wrong PINs before lockout; the lockout-recovery time
/// after a wrong lockout code is set to 1 s, so that a test can wait it out.
@Suite(.offThePool, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
final class TPMLockoutCLITests {
    let home = try! KeystoreHome()
    let pin = "270419"

    init() throws {
        _ = try home.keystoreWithRuntime()
    }

    func run(_ arguments: [String], stdin: String = "", prefix: [String] = []) throws -> KeystoreProcess.Result {
        var process = home.keystore
        process.environment["KEYSTORE_TPM_TCTI"] = try SoftwareTPM.required().tcti
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        return try process.run(arguments, stdin: Array(stdin.utf8), prefix: prefix)
    }

    func state() throws -> [String: Any] {
        let status = try run(["tpm-status", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(status.stdoutBytes)) as? [String: Any], "\(status.stderr)")
    }

    /// `tpm-protect --print-code`'s code, after a lockout-recovery time a test can wait out.
    func protect() throws -> String {
        try SoftwareTPM.required().setDictionaryAttackParameters(maximumFailures: 3, intervalSeconds: 1000, recoverySeconds: 1)
        let protect = try run(["tpm-protect", "--print-code"])
        try #require(protect.status == 0, "\(protect.stderr)")
        return protect.stdout.trimmingCharacters(in: .newlines)
    }

    func signUpBound() throws {
        let signup = try run(["signup", "--name", "alice", "--tpm", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
    }

    /// What anyone who can open the TPM would try: tpm2-tools' reset, with no authorization.
    func resetWithoutTheCode() -> Bool {
        (try? SoftwareTPM.required().clearLockout()) != nil
    }

    @Test(.softwareTPM) func tpmStatusSaysWhetherTheLockoutAuthorizationIsSet() throws {
        #expect(try state()["lockoutAuthSet"] as? Bool == false)
        let text = try run(["tpm-status"])
        #expect(text.stdout.contains("lockout auth set:  no: anyone who can open the TPM can reset the wrong-PIN counter"), "\(text.stdout)")
        _ = try protect()
        #expect(try state()["lockoutAuthSet"] as? Bool == true)
        #expect(try run(["tpm-status"]).stdout.contains("lockout auth set:  yes\n"))
    }

    @Test(.softwareTPM) func aNewBindingIsRefusedBeforeThePINWhileTheLockoutIsOpen() throws {
        let plain = try run(["signup", "--name", "bob", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        try #require(plain.status == 0, "\(plain.stderr)")
        let bobVault = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath("bob")))
        let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
        // Standard input is empty: had a PIN or phrase been read first, the error would be about that.
        for arguments in [["signup", "--name", "alice", "--tpm", "--pin-stdin"], ["recover", "--name", "erin", "--tpm", "--pin-stdin"],
                          ["bind", "--tpm", "--name", "bob", "--pin-stdin"]] {
            let refused = try run(arguments)
            #expect(refused.status == 8 && refused.stderrLines.count == 1, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("lockout authorization is not set") && refused.stderr.contains("keystore tpm-protect")
                    && refused.stderr.contains("--allow-open-lockout"), "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("alice")))
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("erin")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath("bob"))) == bobVault)
        // With --allow-open-lockout it binds, and says that the guess limit does not hold.
        let allowed = try run(["recover", "--name", "erin", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"],
                              stdin: "\(phrase)\n\(pin)\n")
        #expect(allowed.status == 0 && allowed.stderr.contains("does not limit PIN guesses"), "\(allowed.stderr)")
        let bound = try run(["bind", "--tpm", "--allow-open-lockout", "--name", "bob", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(bound.status == 0 && bound.stderr.contains("does not limit PIN guesses"), "\(bound.stderr)")
        #expect(try run(["list"]).stdout.split(separator: "\n").allSatisfy { $0.hasSuffix("\ttpm") })
        // The flag is for a binding only.
        #expect(try run(["signup", "--name", "carol", "--allow-open-lockout", "--pin-stdin"], stdin: "\(pin)\n").status == 64)
        // Once protected, no flag is needed and nothing is said about it.
        _ = try protect()
        let protected = try run(["signup", "--name", "alice", "--tpm", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(protected.status == 0 && !protected.stderr.contains("does not limit"), "\(protected.stderr)")
    }

    @Test(.softwareTPM) func onlyTheCodeResetsTheCounterOnceProtected() throws {
        let code = try protect()
        #expect(code.count == 65 && code.split(separator: "-").map(\.count) == Array(repeating: 5, count: 11), "\(code)")
        try signUpBound()
        #expect(try run(["login", "--name", "alice", "--pin-stdin"], stdin: "111111\n").status == 3)
        #expect(try state()["failures"] as? Int == 1)
        #expect(!resetWithoutTheCode())
        #expect(try state()["failures"] as? Int == 1)
        usleep(1_500_000)  // the lockout hierarchy's recovery time after tpm2-tools' wrong (empty) authorization
        let reset = try run(["tpm-reset-lockout", "--code-stdin"], stdin: code.lowercased() + "\n")
        #expect(reset.status == 0 && reset.stderr.contains("reset"), "\(reset.stderr)")
        #expect(try state()["failures"] as? Int == 0)
        // The code never reaches the command line, nor any output.
        #expect(try run(["tpm-reset-lockout", code]).status == 10)
    }

    @Test(.softwareTPM) func twelveGuessesWithResetsInBetweenStillReachLockout() throws {
        _ = try protect()
        try signUpBound()
        var statuses: [Int32] = []
        for guess in 0..<12 {
            let wrong = try run(["login", "--name", "alice", "--pin-stdin"], stdin: String(format: "%06d\n", 100_000 + guess * 7))
            statuses.append(wrong.status)
            #expect(!resetWithoutTheCode(), "guess \(guess)")
            try? FileManager.default.removeItem(atPath: "\(home.path)/.alice.throttle")  // keystore's own counter: a file
        }
        #expect(statuses == [3, 3, 3] + Array(repeating: 4, count: 9), "\(statuses)")
        let right = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(right.status == 4 && right.stderrLines.count == 1, "\(right.stderr)")
        // Protected: only the code ends it, and tpm2-tools' line (which would need it) is not offered.
        #expect(right.stderr.contains("keystore tpm-reset-lockout") && !right.stderr.contains("tpm2_dictionarylockout"), "\(right.stderr)")
    }

    @Test(.softwareTPM) func aWrongCodeResetsNothingAndATypoNeverReachesTheTPM() throws {
        let code = try protect()
        try signUpBound()
        #expect(try run(["login", "--name", "alice", "--pin-stdin"], stdin: "111111\n").status == 3)
        // A typo: caught by the checksum, so the TPM neither sees nor counts it.
        var typo = Array(code)
        typo[0] = typo[0] == "A" ? "B" : "A"
        let mistyped = try run(["tpm-reset-lockout", "--code-stdin"], stdin: String(typo) + "\n")
        #expect(mistyped.status == 2 && mistyped.stderr.contains("typo") && !mistyped.stderr.contains(code), "\(mistyped.stderr)")
        for malformed in ["", "ABCDE", code + "A", code.replacingOccurrences(of: "-", with: "1")] {
            let result = try run(["tpm-reset-lockout", "--code-stdin"], stdin: malformed + "\n")
            #expect(result.status == 2 && result.stderrLines.count == 1, "\(malformed): \(result.stderr)")
        }
        // Another well-formed code: the TPM refuses and counts it; the counter is untouched.
        let other = try SoftwareTPM()
        defer { other.stop() }
        var otherProcess = home.keystore
        otherProcess.environment["KEYSTORE_TPM_TCTI"] = other.tcti
        let otherCode = try otherProcess.run(["tpm-protect", "--print-code"]).stdout
        let wrong = try run(["tpm-reset-lockout", "--code-stdin"], stdin: otherCode)
        #expect(wrong.status == 3 && wrong.stderrLines.count == 1 && wrong.stderr.contains("refused the lockout code"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains(otherCode.trimmingCharacters(in: .newlines)))
        #expect(try state()["failures"] as? Int == 1)
        // Locked for its recovery time, then the right code works.
        let locked = try run(["tpm-reset-lockout", "--code-stdin"], stdin: code + "\n")
        #expect(locked.status == 4 && locked.stderr.contains("nothing was tried"), "\(locked.stderr)")
        usleep(1_500_000)
        #expect(try run(["tpm-reset-lockout", "--code-stdin"], stdin: code + "\n").status == 0)
        #expect(try state()["failures"] as? Int == 0)
    }

    @Test(.softwareTPM) func protectingTwiceChangesNothingTheSecondTime() throws {
        let code = try protect()
        let again = try run(["tpm-protect", "--print-code"])
        #expect(again.status == 0 && again.stdout.isEmpty && again.stderr.contains("set already"), "\(again.stderr)")
        let json = try run(["tpm-protect", "--print-code", "--json"])
        #expect(json.status == 0 && json.stdout == #"{"changed":false,"lockoutAuthSet":true}"# + "\n")
        // The first code still holds.
        #expect(try run(["tpm-reset-lockout", "--code-stdin"], stdin: code + "\n").status == 0)
    }

    @Test(.softwareTPM) func theCodeIsPrintedToAPipeOnlyWhenAskedAndNeverLost() throws {
        let refused = try run(["tpm-protect"])
        #expect(refused.status == 10 && refused.stdout.isEmpty && refused.stderr.contains("--print-code"), "\(refused.stderr)")
        #expect(try state()["lockoutAuthSet"] as? Bool == false)
        // Standard output full: the code reaches nobody, so the TPM must not keep it.
        let full = try run(["tpm-protect", "--print-code"], prefix: ["sh", "-c", "exec \"$0\" \"$@\" > /dev/full"])
        #expect(full.status == 11 && full.stderrLines.count == 1 && full.stderr.contains("set back to empty"), "\(full.stderr)")
        #expect(try state()["lockoutAuthSet"] as? Bool == false)
        let json = try run(["tpm-protect", "--print-code", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: Any], "\(json.stderr)")
        let code = try #require(object["lockoutCode"] as? String)
        #expect(object["changed"] as? Bool == true && code.count == 65)
        #expect(try run(["tpm-reset-lockout", "--code-stdin"], stdin: code + "\n").status == 0)
    }

    /// Standard output a pipe whose reader is gone (`tpm-protect --print-code | true`, without the race of `true`
    /// still running), and standard output closed: the code reaches nobody, so the TPM must not keep it, and the
    /// command says so in one line instead of dying of SIGPIPE with the new authorization set.
    @Test(.softwareTPM) func aCodeNobodyCanReadIsNeverKept() throws {
        // A FIFO opened for writing while a reader existed, then that reader closed: a pipe nobody reads.
        let readerGone = ["bash", "-c", #"f="$(mktemp -u)"; mkfifo -m 600 "$f"; exec 3<>"$f" 4>"$f"; rm "$f"; exec 3<&-; exec "$0" "$@" >&4 4>&-"#]
        let closed = ["sh", "-c", #"exec "$0" "$@" >&-"#]
        for (prefix, reason) in [(closed, "Bad file descriptor"), (readerGone, "Broken pipe")] {
            let result = try run(["tpm-protect", "--print-code"], prefix: prefix)
            #expect(result.status == 11 && result.stderrLines.count == 1 && result.stderr.contains("set back to empty")
                    && result.stderr.contains(reason), "exit \(result.status): \(result.stderr)")
            #expect(try state()["lockoutAuthSet"] as? Bool == false, "\(reason)")
        }
    }

    /// SIGINT, SIGTERM or SIGHUP while the TPM takes the new authorization (a debug-build switch pauses there
    /// until a signal is held): the command still ends by that signal, but only once the authorization is set back
    /// to empty, since the code was never shown.
    @Test(.softwareTPM, arguments: [SIGINT, SIGTERM, SIGHUP])
    func aSignalDuringTheChangeLeavesNoCodeNobodySaw(_ signal: Int32) throws {
        var process = home.keystore
        process.environment["KEYSTORE_TPM_TCTI"] = try SoftwareTPM.required().tcti
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        process.environment["KEYSTORE_TEST_PAUSE_AFTER_LOCKOUT_CHANGE"] = "1"
        let running = try process.start(["tpm-protect", "--print-code"])
        let stderr = running.scratch.appendingPathComponent("stderr")
        for _ in 0..<3000 { guard !((try? String(contentsOf: stderr, encoding: .utf8)) ?? "").contains("test pause") else { break }; usleep(10_000) }
        kill(running.pid, signal)
        let ended = try running.wait(timeout: 60)
        #expect(ended.stderr.contains("test pause: lockout authorization changed"), "\(ended.stderr)")
        #expect(ended.status == 128 + signal, "exit \(ended.status): \(ended.stderr)")
        // Not set, or set with the code on standard output; here, with the signal there before the code was
        // written, not set.
        #expect(try state()["lockoutAuthSet"] as? Bool == false && ended.stdout.isEmpty, "\(ended.stdout)")
    }

    @Test(.softwareTPM) func withAnOpenLockoutTheResetNeedsNoCode() throws {
        try SoftwareTPM.required().setDictionaryAttackParameters(maximumFailures: 3, intervalSeconds: 1000, recoverySeconds: 1)
        let signup = try run(["signup", "--name", "alice", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"],
                             stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        #expect(try run(["login", "--name", "alice", "--pin-stdin"], stdin: "111111\n").status == 3)
        let reset = try run(["tpm-reset-lockout"])  // no terminal, no --code-stdin: nothing is asked
        #expect(reset.status == 0 && reset.stderr.contains("no code was needed"), "\(reset.stderr)")
        #expect(try state()["failures"] as? Int == 0)
    }
}
