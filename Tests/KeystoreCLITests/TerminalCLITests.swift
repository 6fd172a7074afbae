import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal playing the person at the keyboard: it waits for a prompt, types an answer, and keeps
/// everything the program showed on the screen.
final class PseudoTerminal {
    let master: Int32
    let path: String
    private(set) var screen = ""
    private var cursor: String.Index

    init() throws {
        master = PseudoTerminal.posixOpenpt(O_RDWR | O_NOCTTY)
        var name = [CChar](repeating: 0, count: 128)
        guard master >= 0, PseudoTerminal.grantpt(master) == 0, PseudoTerminal.unlockpt(master) == 0,
              PseudoTerminal.ptsnameR(master, &name, name.count) == 0
        else { throw POSIXError(.ENOTTY) }
        path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        cursor = screen.startIndex
    }

    // Swift's Glibc module leaves out the X/Open pseudo-terminal functions, so they are looked up by name.
    nonisolated(unsafe) private static let libc = dlopen(nil, RTLD_NOW)  // written once, by the lazy initializer
    private static func function<F>(_ name: String, as type: F.Type) -> F {
        unsafeBitCast(dlsym(libc, name)!, to: type)
    }
    private static let posixOpenpt = function("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
    private static let grantpt = function("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    private static let unlockpt = function("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    private static let ptsnameR = function(
        "ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)

    deinit { close(master) }

    /// Reads the screen until `text` shows after what was already matched; records an issue after 30 s.
    func waitFor(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date() + 30
        while Date() < deadline {
            if let found = screen[cursor...].range(of: text) {
                cursor = found.upperBound
                return
            }
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { continue }
            if poller.revents & Int16(POLLIN) != 0 {
                var buffer = [UInt8](repeating: 0, count: 1024)
                let count = read(master, &buffer, buffer.count)
                if count > 0 {
                    screen += String(decoding: buffer[0..<count], as: UTF8.self)
                    cursor = min(cursor, screen.endIndex)
                    continue
                }
            }
            if poller.revents & Int16(POLLHUP | POLLERR) != 0 { break }
        }
        Issue.record("the terminal never showed \(text.debugDescription); it showed \(screen.debugDescription)",
                     sourceLocation: sourceLocation)
    }

    func type(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    var echoIsOn: Bool {
        var settings = termios()
        return tcgetattr(master, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
    }
}

/// The interactive prompts, through a real (pseudo-)terminal: what a person sees and that what they type
/// never shows.
@Suite(.offThePool) struct TerminalCLITests {
    let home: KeystoreHome
    let terminal: PseudoTerminal

    init() throws {
        home = try KeystoreHome()
        terminal = try PseudoTerminal()
    }

    func start(_ arguments: [String]) throws -> KeystoreProcess.Running {
        try home.keystore.start(arguments, terminal: terminal.path)
    }

    /// A person signing a transaction sees what it does on the terminal before being asked for the PIN, even
    /// when standard error goes elsewhere.
    @Test func signTxShowsTheSummaryOnTheTerminalBeforeThePIN() throws {
        try home.addGolden()
        let payment = try #require(Envelopes.loaded.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        let file = home.path + "/payment.xdr"
        try payment.envelope.write(toFile: file, atomically: false, encoding: .utf8)
        let signing = try start(["sign-tx", "--name", KeystoreHome.golden.name, "--network", "testnet", "--file", file])
        terminal.waitFor("Transaction on testnet")
        terminal.waitFor("hash        \(payment.hash)")
        terminal.waitFor("1. payment")
        terminal.waitFor("PIN: ")
        terminal.type(KeystoreHome.golden.pin)
        let signed = try signing.wait()
        #expect(signed.status == 0 && signed.stdout == payment.signed + "\n", "\(signed.stderr)")
        #expect(signed.stderr.contains("1. payment"), "and on standard error, for the log")
    }

    @Test func signupAsksTwiceWithoutEchoAndLoginOpens() throws {
        let signup = try start(["signup", "--kdf", "interactive"])
        terminal.waitFor("New PIN (6 digits): ")
        #expect(!terminal.echoIsOn)
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let created = try signup.wait()
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.hasPrefix("G") && created.stdout.count == 57)
        #expect(terminal.echoIsOn, "echo is back on for the shell")

        let login = try start(["login"])
        terminal.waitFor("PIN: ")
        terminal.type("270419")
        let opened = try login.wait()
        #expect(opened.status == 0 && opened.stdout == created.stdout)
        #expect(!terminal.screen.contains("270419"), "the PIN was echoed: \(terminal.screen)")
    }

    @Test func threeMismatchedConfirmationsCreateNothing() throws {
        let signup = try start(["signup", "--kdf", "interactive"])
        for _ in 0..<3 {
            terminal.waitFor("New PIN (6 digits): ")
            terminal.type("270419")
            terminal.waitFor("Repeat the PIN: ")
            terminal.type("270418")
        }
        let result = try signup.wait(timeout: 60)
        #expect(result.status == 2 && result.stderr == "keystore: The two PINs did not match; nothing was changed. Run the command again.\n")
        #expect(home.snapshot().keys.filter { $0.hasSuffix(".vault") }.isEmpty)
    }

    @Test func aWeakPINIsRefusedBeforeTheConfirmation() throws {
        let signup = try start(["signup", "--kdf", "interactive"])
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("111111")
        terminal.waitFor("it repeats one digit")
        terminal.waitFor("New PIN (6 digits): ")
        #expect(!terminal.screen.contains("Repeat"))
        kill(signup.pid, SIGTERM)
        _ = try signup.wait(timeout: 30)
    }

    @Test func anImportedSeedIsNotEchoedEither() throws {
        let signup = try start(["signup", "--import", "--kdf", "interactive"])
        terminal.waitFor("Secret seed (S…): ")
        terminal.type(KeystoreHome.golden.seed)
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let result = try signup.wait()
        #expect(result.status == 0 && result.stdout == KeystoreHome.golden.address + "\n", "\(result.stderr)")
        #expect(!terminal.screen.contains(KeystoreHome.golden.seed))
    }

    @Test func changePINChecksTheCurrentPINBeforeAskingForANewOne() throws {
        try home.addGolden()
        let wrong = try start(["change-pin", "--name", KeystoreHome.golden.name])
        terminal.waitFor("Current PIN: ")
        terminal.type("503816")
        let refused = try wrong.wait()
        #expect(refused.status == 3 && !terminal.screen.contains("New PIN"))

        let change = try start(["change-pin", "--name", KeystoreHome.golden.name])
        terminal.waitFor("Current PIN: ")
        terminal.type("270419")
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("918273")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("918273")
        let changed = try change.wait()
        #expect(changed.status == 0, "\(changed.stderr)")
        let login = try home.run(["login", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "918273\n")
        #expect(login.status == 0 && login.stdout == KeystoreHome.golden.address + "\n")
    }

    static let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
    static let phraseAddress = "GDRXE2BQUC3AZNPVFSCEZ76NJ3WWL25FYFK6RGZGIEKWE4SOOHSUJUJ6"

    /// One typo does not end `recover`: an unknown word is asked again by itself, a phrase whose checksum fails is
    /// asked again whole, and what was typed never shows.
    @Test func recoverAsksAgainForAMistypedWordAndForAPhraseThatDoesNotAddUp() throws {
        let recover = try start(["recover", "--kdf", "interactive"])
        terminal.waitFor("Recovery phrase: ")
        terminal.type(Self.phrase.replacingOccurrences(of: "retreat", with: "retraet"))
        terminal.waitFor("Word 3 of the recovery phrase is not in the BIP39 English list")
        terminal.waitFor("Word 3: ")
        terminal.type("retreat")
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let recovered = try recover.wait()
        #expect(recovered.status == 0 && recovered.stdout == Self.phraseAddress + "\n", "\(recovered.stderr)")

        let swapped = Self.phrase.replacingOccurrences(of: "spike retreat", with: "retreat spike")
        let again = try start(["recover", "--name", "second", "--kdf", "interactive"])
        terminal.waitFor("Recovery phrase: ")
        terminal.type(swapped)
        terminal.waitFor("checksum does not match")
        terminal.waitFor("Recovery phrase: ")
        terminal.type(Self.phrase)
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        #expect(try again.wait().stdout == Self.phraseAddress + "\n")
        #expect(!terminal.screen.contains("spike") && !terminal.screen.contains("retraet"), "\(terminal.screen)")

        // Three times wrong: it gives up, with the reason, and creates nothing.
        let giving = try start(["recover", "--name", "third", "--kdf", "interactive"])
        for _ in 0..<3 {
            terminal.waitFor("Recovery phrase: ")
            terminal.type(swapped)
        }
        let refused = try giving.wait()
        #expect(refused.status == 2 && refused.stderr.contains("checksum"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("third")))
    }

    /// `login --session` typed bare at a prompt prints the export line to the screen, where it does nothing:
    /// the person is told how to use it.
    @Test func aSessionStartedOnATerminalSaysHowToUseIt() throws {
        try home.addGolden()
        var keystore = try home.keystoreWithRuntime()
        keystore.environment["KEYSTORE_HOME"] = home.path
        let login = try keystore.start(["login", "--session", "--name", KeystoreHome.golden.name], terminal: terminal.path,
                                       prefix: ["sh", "-c", "exec \"$0\" \"$@\" > /dev/tty"])
        terminal.waitFor("PIN: ")
        terminal.type(KeystoreHome.golden.pin)
        terminal.waitFor("export KEYSTORE_SESSION=")
        let result = try login.wait()
        #expect(result.status == 0 && result.stderr.contains("eval \"$(keystore login --session)\""), "\(result.stderr)")
        // Captured by eval (standard output not a terminal), nothing more is said.
        let scripted = try keystore.run(["login", "--session", "--name", KeystoreHome.golden.name, "--pin-stdin"],
                                        stdin: Array((KeystoreHome.golden.pin + "\n").utf8))
        #expect(scripted.status == 0 && !scripted.stderr.contains("eval"), "\(scripted.stderr)")
        _ = try keystore.run(["logout", "--all", "--name", KeystoreHome.golden.name])
    }

    /// import-stellar-cli says what it found before a person chooses the PIN that will protect it.
    @Test func importSaysWhatItFoundBeforeThePIN() throws {
        let config = home.path + "/stellar"
        try FileManager.default.createDirectory(atPath: config + "/identity", withIntermediateDirectories: true)
        try "secret_key = \"\(KeystoreHome.golden.seed)\"\n".write(toFile: config + "/identity/alice.toml", atomically: false, encoding: .utf8)
        let importing = try start(["import-stellar-cli", "--config-dir", config, "--kdf", "interactive"])
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let result = try importing.wait()
        #expect(result.status == 0, "\(result.stderr)")
        // The note goes to standard error (a file here) before the PIN closure asks on the terminal.
        #expect(result.stderr.contains("importing 1 stellar-cli identity from \(config): alice"), "\(result.stderr)")
        #expect(result.stdout.hasPrefix("alice\timported"), "\(result.stdout)")
    }
}
