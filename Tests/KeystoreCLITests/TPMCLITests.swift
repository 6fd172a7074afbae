import Foundation
import Testing
import TestFixtures
import SoftwareTPM
import StellarKeystore
import StellarKeystoreTPM
#if canImport(Glibc)
import Glibc
#endif

/// `keystore` with TPM-bound vaults, as a user or a script sees it, against the suite's own swtpm (3 wrong
/// PINs before lockout, one forgiven per 1,000 s, an empty lockout authorization: swtpm's defaults, so that the
/// tests can end lockouts as an owner would; bindings say --allow-open-lockout). TPMLockoutCLITests covers a
/// protected lockout. Serialized: the tests share the TPM's
/// dictionary-attack counter, and each that adds failures clears them before it ends.
@Suite(.offThePool, .serialized, .softwareTPM, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
final class TPMCLITests {
    let home = try! KeystoreHome()
    let pin = "270419"
    var swtpm: SoftwareTPM { SoftwareTPM.current! }
    var tcti: String { swtpm.tcti }

    /// `keystore` pointed at the suite's TPM through the environment, as a user would configure it.
    var keystore: KeystoreProcess {
        var process = home.keystore
        process.environment["KEYSTORE_TPM_TCTI"] = tcti
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        return process
    }

    func run(_ arguments: [String], stdin: String = "", tpm: String? = nil) throws -> KeystoreProcess.Result {
        var process = keystore
        if let tpm { process.environment["KEYSTORE_TPM_TCTI"] = tpm }
        return try process.run(arguments, stdin: Array(stdin.utf8))
    }

    func signUpBound(_ name: String = "alice") throws -> String {
        let signup = try run(["signup", "--name", name, "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        return signup.stdout.trimmingCharacters(in: .newlines)
    }

    func failures() throws -> Int {
        let status = try run(["tpm-status", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdoutBytes)) as? [String: Any], "\(status.stderr)")
        return try #require(object["failures"] as? Int)
    }

    func vaultBytes(_ name: String = "alice") throws -> Data { try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(name))) }

    init() throws {
        _ = try home.keystoreWithRuntime()
    }

    @Test func signupLoginAndSignRoundTrip() throws {
        let signup = try run(["signup", "--name", "alice", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        #expect(signup.stderr.contains("can only ever be opened on this machine") && signup.stderr.contains("--mnemonic"))
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        #expect(try run(["list"]).stdout == "alice\t\(address)\ttpm\n")
        let listed = try JSONSerialization.jsonObject(with: Data(try run(["list", "--json"]).stdoutBytes)) as? [String: Any]
        let identities = try #require(listed?["identities"] as? [[String: Any]])
        #expect(identities.first?["tpm"] as? Bool == true)
        let login = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(login.status == 0 && login.stdout == address + "\n", "\(login.stderr)")
        let signed = try run(["sign", "--name", "alice", "--hex", "c0ffee", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(signed.status == 0, "\(signed.stderr)")
        let signature = signed.stdout.trimmingCharacters(in: .newlines)
        let verify = try run(["verify", "--raw", "--address", address, "--signature", signature, "--hex", "c0ffee"])
        #expect(verify.status == 0 && verify.stdout == "valid\n", "\(verify.stderr)")
        let export = try run(["export", "--force", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(export.status == 0 && export.stdout.hasPrefix("S") && export.stdout.count == 57, "\(export.stderr)")
        // A session holds the seed under a session key, as for any vault: signing then needs no TPM at all.
        let session = try run(["login", "--session", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n")
        let token = String(session.stdout.dropFirst("export KEYSTORE_SESSION=".count)).trimmingCharacters(in: .newlines)
        var withSession = keystore
        withSession.environment["KEYSTORE_SESSION"] = token
        withSession.environment["KEYSTORE_TPM_TCTI"] = "device:/dev/keystore-no-such-tpm"
        let bySession = try withSession.run(["sign", "--hex", "c0ffee"])
        #expect(bySession.status == 0 && bySession.stdout == signed.stdout, "\(bySession.stderr)")
        #expect(try withSession.run(["logout"]).status == 0)
    }

    @Test func aWrongPINRaisesTheTPMsCounter() throws {
        defer { try? swtpm.clearLockout() }
        _ = try signUpBound()
        let before = try failures()
        let vault = try vaultBytes()
        let wrong = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "270418\n")
        #expect(wrong.status == 3)
        #expect(wrong.stderrLines == ["keystore: Incorrect PIN; the TPM counted it: 2 more tries before it locks out."])
        #expect(try failures() == before + 1)
        #expect(try vaultBytes() == vault)
    }

    @Test func afterMaxAuthFailTheRightPINIsRefusedEvenWithoutOurCounter() throws {
        defer { try? swtpm.clearLockout() }
        _ = try signUpBound()
        let vault = try vaultBytes()
        for tries in [2, 1] {
            let wrong = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "111111\n")
            #expect(wrong.status == 3 && wrong.stderr.contains("\(tries) more tr"), "\(wrong.stderr)")
        }
        let last = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "111111\n")
        #expect(last.status == 3 && last.stderr.contains("is now in lockout"), "\(last.stderr)")
        // keystore's own counter is only a file the attacker can delete: the TPM's is not.
        try FileManager.default.removeItem(atPath: "\(home.path)/.alice.throttle")
        let right = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(right.status == 4, "\(right.stderr)")
        // Said before any PIN is read: with nothing on standard input, the answer is still the lockout.
        let unasked = try run(["login", "--name", "alice", "--pin-stdin"])
        #expect(unasked.status == 4 && unasked.stderr == right.stderr, "\(unasked.stderr)")
        #expect(right.stderrLines.count == 1 && right.stderr.contains("dictionary-attack lockout") && right.stderr.contains("17 min"))
        // What to type to end it, aimed at this TPM: tpm2-tools would otherwise open /dev/tpmrm0. The TCTI is one
        // shell word as it is (letters, digits, ':', '=', '.', ','), so it is not quoted.
        #expect(right.stderr.contains("keystore tpm-reset-lockout")
                && right.stderr.contains("tpm2_dictionarylockout --clear-lockout -T \(tcti))"), "\(right.stderr)")
        #expect(try vaultBytes() == vault)
        let status = try run(["tpm-status"])
        #expect(status.stdout.contains("in lockout:        yes"))
        // The owner clears the lockout: the right PIN is let in.
        try swtpm.clearLockout()
        let after = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test func aFreshTPMGivesExitSeven() throws {
        _ = try signUpBound()
        let vault = try vaultBytes()
        let other = try SoftwareTPM()
        defer { other.stop() }
        let login = try run(["login", "--name", "alice", "--pin-stdin", "--tpm-tcti", other.tcti], stdin: "\(pin)\n")
        #expect(login.status == 7)
        #expect(login.stderrLines.count == 1 && login.stderr.contains("bound to a TPM that is not this one")
                && login.stderr.contains("recovery phrase"), "\(login.stderr)")
        #expect(try vaultBytes() == vault)
        // Not a wrong PIN: nothing was counted, and the right TPM still opens it.
        #expect(!FileManager.default.fileExists(atPath: "\(home.path)/.alice.throttle"))
        #expect(try run(["login", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n").status == 0)
    }

    @Test func noTPMIsExitEightBeforeAnyPINIsRead() throws {
        let missing = "device:/dev/keystore-no-such-tpm"
        // Standard input is empty: had the PIN been read first, the error would be about the PIN.
        let signup = try run(["signup", "--name", "bob", "--tpm", "--pin-stdin"], tpm: missing)
        #expect(signup.status == 8 && signup.stderrLines.count == 1, "\(signup.stderr)")
        #expect(signup.stderr.contains("does not exist") && signup.stderr.contains("tss") && signup.stderr.contains("KEYSTORE_TPM_TCTI"))
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("bob")))
        _ = try signUpBound()
        let vault = try vaultBytes()
        let login = try run(["login", "--name", "alice", "--pin-stdin"], stdin: "\(pin)\n", tpm: "swtpm:host=127.0.0.1,port=1")
        #expect(login.status == 8 && login.stderrLines.count == 1, "\(login.stderr)")
        #expect(try vaultBytes() == vault)
        #expect(try run(["tpm-status"], tpm: missing).status == 8)
    }

    /// `signup --tpm --mnemonic` is not advised to run `signup --mnemonic`: it is making the phrase (issue 28, 9.10).
    @Test func aPhraseMadeKeyIsNotAdvisedToBeMadeFromAPhrase() throws {
        let signup = try run(["signup", "--name", "fay", "--tpm", "--allow-open-lockout", "--mnemonic", "--print-phrase", "--kdf", "interactive",
                              "--pin-stdin"], stdin: "\(pin)\n")
        #expect(signup.status == 0 && signup.stderr.contains("can only ever be opened on this machine"), "\(signup.stderr)")
        #expect(!signup.stderr.contains("signup --mnemonic") && signup.stderr.contains("recovery phrase"), "\(signup.stderr)")
    }

    @Test func recoverAndDeriveKeepTheBinding() throws {
        // SEP-5 Test 1's phrase; account 1 is golden-mnemonic's address (fixtures/vaults/vaults.json).
        let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
        let recover = try run(["recover", "--name", "erin", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"], stdin: "\(phrase)\n\(pin)\n")
        #expect(recover.status == 0 && recover.stderr.contains("can only ever be opened on this machine"), "\(recover.stderr)")
        // The key comes from a phrase already: no advice to make one (issue 28, 9.10).
        #expect(!recover.stderr.contains("signup --mnemonic") && recover.stderr.contains("recovery phrase"), "\(recover.stderr)")
        let derive = try run(["derive", "--name", "erin", "--account", "1", "--add", "erin-1", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(derive.status == 0, "\(derive.stderr)")
        let list = try run(["list"]).stdout
        #expect(list.contains("erin\t") && list.contains("erin-1\tGBAW5XGWORWVFE2XTJYDTLDHXTY2Q2MO73HYCGB3XMFMQ562Q2W2GJQX\ttpm"), "\(list)")
        #expect(list.split(separator: "\n").allSatisfy { $0.hasSuffix("\ttpm") })
    }

    @Test func aTPMWithoutPermissionSaysWhatToDo() throws {
        // A stand-in for /dev/tpmrm0 (root:tss 0660 on Debian) that the user may not open.
        let directory = home.path + "-dev"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let device = directory + "/tpmrm0"
        #expect(FileManager.default.createFile(atPath: device, contents: nil, attributes: [.posixPermissions: 0o000]))
        var process = keystore
        process.environment["KEYSTORE_TPM_TCTI"] = "device:\(device)"
        let result = try process.run(["tpm-status"], prefix: BadInputCLITests.unprivilegedPrefix)
        #expect(result.status == 8 && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("no permission on \(device)") && result.stderr.contains("join the 'tss' group"))
    }

    @Test func anOwnerPasswordIsNamedAsTheProblem() throws {
        try swtpm.setOwnerPassword("owner-secret")
        defer { try? swtpm.setOwnerPassword("", current: "owner-secret") }
        let signup = try run(["signup", "--name", "frank", "--tpm", "--allow-open-lockout", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(signup.status == 8 && signup.stderrLines.count == 1, "\(signup.stderr)")
        #expect(signup.stderr.contains("the owner hierarchy has a password"), "\(signup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("frank")))
    }

    @Test func bindChangePINAndUnbindRoundTrip() throws {
        let signup = try run(["signup", "--name", "carol", "--kdf", "interactive", "--pin-stdin"], stdin: "\(pin)\n")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        let bind = try run(["bind", "--tpm", "--name", "carol", "--allow-open-lockout", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(bind.status == 0 && bind.stdout == "carol (\(address)) is now bound to this machine's TPM\n", "\(bind.stderr)")
        #expect(try run(["list"]).stdout == "carol\t\(address)\ttpm\n")
        #expect(try run(["bind", "--tpm", "--name", "carol", "--allow-open-lockout", "--pin-stdin"], stdin: "\(pin)\n").status == 2)
        #expect(try run(["bind", "--name", "carol"]).status == 64)
        let change = try run(["change-pin", "--name", "carol", "--pin-stdin", "--new-pin-fd", "0"], stdin: "\(pin)\n918273\n")
        #expect(change.status == 0, "\(change.stderr)")
        #expect(try run(["login", "--name", "carol", "--pin-stdin"], stdin: "918273\n").stdout == address + "\n")
        let unbind = try run(["unbind", "--name", "carol", "--pin-stdin", "--json"], stdin: "918273\n")
        let object = try JSONSerialization.jsonObject(with: Data(unbind.stdoutBytes)) as? [String: Any]
        #expect(object?["tpm"] as? Bool == false && object?["address"] as? String == address, "\(unbind.stderr)")
        #expect(try run(["list"]).stdout == "carol\t\(address)\n")
        // Unbound, it opens with no TPM anywhere.
        let login = try run(["login", "--name", "carol", "--pin-stdin"], stdin: "918273\n", tpm: "device:/dev/keystore-no-such-tpm")
        #expect(login.status == 0 && login.stdout == address + "\n", "\(login.stderr)")
        #expect(try run(["unbind", "--name", "carol", "--pin-stdin"], stdin: "918273\n").status == 2)
    }

    /// SIGKILL at every write step of `bind` and of `change-pin` on a bound vault: each time the vault is either
    /// the old file, whole, or a new one that opens through the TPM with the PIN it was meant to have.
    @Test(arguments: ["bind", "change-pin"])
    func aCrashAtEveryStepLosesNothing(command: String) throws {
        _ = try signUpBound("dave")
        if command == "bind" {
            _ = try run(["unbind", "--name", "dave", "--pin-stdin"], stdin: "\(pin)\n")
        }
        let original = try vaultBytes("dave")
        let arguments = command == "bind"
            ? ["bind", "--tpm", "--name", "dave", "--allow-open-lockout", "--pin-stdin"]
            : ["change-pin", "--name", "dave", "--pin-stdin", "--new-pin-fd", "0"]
        let newPIN = command == "bind" ? pin : "918273"
        var steps: [String] = []
        for stop in 1...30 {
            try original.write(to: URL(fileURLWithPath: home.vaultPath("dave")))
            var process = keystore
            process.environment["KEYSTORE_TEST_CRASH_AT"] = String(stop)
            let result = try process.run(arguments, stdin: Array("\(pin)\n\(newPIN)\n".utf8))
            let now = try vaultBytes("dave")
            if now != original {
                let vault = try Vault(file: Array(now), path: "dave.vault")
                #expect(vault.isTPMBound, "after step \(stop)")
                #expect(throws: Never.self, "after step \(stop) the new vault does not open") {
                    try vault.open(pin: PIN(newPIN), tpm: TPM(tcti: tcti))
                }
            }
            try? FileManager.default.removeItem(atPath: "\(home.path)/.dave.throttle")
            guard result.status == 128 + SIGKILL else {
                #expect(result.status == 0, "\(result.stderr)")
                break
            }
            steps.append(result.stderrLines.last.map(String.init) ?? "")
        }
        #expect(steps.count == 2 * CrashConsistencyTests.writeSteps.count, "\(steps)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.contains(".tmp-") }.isEmpty)
    }
}
