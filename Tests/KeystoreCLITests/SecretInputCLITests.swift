import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// Reading secrets: a PIN source that fails or is too costly, a phrase with a typo, a message typed at the terminal. Each test was written failing first (issue 11 and later).
@Suite(.offThePool) struct SecretInputCLITests: CLIExpectations {
    // MARK: Errors while a secret is read or derived

    @Test(arguments: [
        (["login", "--pin-fd", "99"], "descriptor 99"),
        (["login", "--pin-file", "/tmp"], "/tmp"),
        (["login", "--pin-fd", "1"], "descriptor 1"),
    ])
    func anUnreadablePINSourceIsOneLineNotACrash(_ arguments: [String], _ message: String) throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let before = home.vaults()
        let result = try home.run(arguments + ["--name", Self.golden.name])
        // Bad input, as a --file that cannot be read is (README, Exit codes): issue 28, 9.10.
        expectOneLine(result, status: 2, message)
        #expect(home.vaults() == before)
    }

    @Test func argon2OutOfMemoryIsExit8NamingTheMemory() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addFixture(Self.moderate.name)
        let before = home.vaults()
        let login = try home.run(["login", "--name", Self.moderate.name, "--pin-stdin"], stdin: Self.moderate.pin + "\n",
                                 prefix: Self.limitMemory)
        expectOneLine(login, status: 8, "256 MiB")
        #expect(login.stderr.contains("--kdf interactive"))
        #expect(home.vaults() == before)
        #expect(!home.snapshot().keys.contains { $0.hasSuffix(".throttle") }, "running out of memory is not a wrong PIN")

        let signup = try home.run(["signup", "--name", "new", "--kdf", "moderate", "--pin-stdin"], stdin: "270419\n",
                                  prefix: Self.limitMemory)
        expectOneLine(signup, status: 8, "256 MiB")
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("new")))
        // --kdf auto takes the limit as part of what this machine affords.
        let auto = try home.run(["signup", "--name", "new", "--pin-stdin"], stdin: "270419\n", prefix: Self.limitMemory)
        #expect(auto.status == 0 && auto.stderr.contains("--kdf auto chose interactive"), "\(auto.stderr)")

        let bench = try home.run(["bench-kdf", "--levels", "moderate", "--runs", "1"], prefix: Self.limitMemory)
        expectOneLine(bench, status: 8, "256 MiB")
    }

    // MARK: A typo in a typed phrase

    @Test func aTypoIsNotAnsweredWithTheSecretWordOffTheTerminal() throws {
        let home = try KeystoreHome(inProcess: true)
        let typo = "illness spike retreat truth genius clock brain pass fit cave bargian toe"
        let result = try home.run(["recover", "--pin-stdin", "--kdf", "interactive"], stdin: typo + "\n270419\n")
        expectOneLine(result, status: 2, "Word 11 of the recovery phrase is not in the BIP39 English list")
        #expect(!result.stderr.contains("bargain") && !result.stderr.contains("margin"))
    }

    // MARK: A message typed at the terminal

    @Test func signMessageAsksForTheMessageOnATerminal() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let terminal = try PseudoTerminal()
        let sign = try home.keystore.start(["sign-message", "--name", Self.golden.name, "--pin-fd", "3"],
                                           files: [3: Array("\(Self.golden.pin)\n".utf8)], terminal: terminal.path)
        terminal.waitFor("Message (end with Ctrl-D):")
        terminal.type("hi")
        _ = [UInt8(4)].withUnsafeBytes { write(terminal.master, $0.baseAddress, 1) }
        let result = try sign.wait(timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let signature = try #require(Data(base64Encoded: result.stdout.trimmingCharacters(in: .newlines)))
        // The line typed loses its final newline, as stellar-cli reads standard input (issue 15).
        #expect(try PublicKey(accountID: Self.golden.address).isValidMessageSignature(Array(signature), for: Array("hi".utf8)))
    }

    @Test func signMessageHelpSaysWhatBecomesOfTheFinalNewline() throws {
        let result = try KeystoreProcess(runsInProcess: true).run(["sign-message", "--help"])
        #expect(result.stdout.contains("without\none final newline") || result.stdout.contains("without one final newline"),
                "\(result.stdout)")
    }
}
