import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// Prompts on a terminal: Ctrl-Z at a prompt, and asking again. Each test was written failing first (issue 11 and later).
@Suite(.offThePool) struct PromptCLITests: CLIExpectations {
    // MARK: Ctrl-Z at a prompt

    @Test func echoStaysOffAfterCtrlZAndFg() throws {
        let home = try KeystoreHome(inProcess: true)
        let terminal = try PseudoTerminal()
        let signup = try home.keystore.start(["signup", "--kdf", "interactive"], terminal: terminal.path)
        terminal.waitFor("New PIN (6 digits): ")
        kill(signup.pid, SIGTSTP)
        usleep(200_000)
        kill(signup.pid, SIGCONT)
        terminal.waitFor("New PIN (6 digits): ")
        #expect(!terminal.echoIsOn, "echo is on after the stop and continue")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let result = try signup.wait(timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!terminal.screen.contains("270419"), "the PIN was echoed: \(terminal.screen.debugDescription)")
    }

    /// The same under real job control: an interactive bash in tmux, where Ctrl-Z stops keystore and `fg`
    /// continues it (the test above runs keystore in an orphaned process group, where the kernel drops the stop).
    @Test(.enabled(if: Tmux.isInstalled, "tmux is not installed"))
    func ctrlZInAShellStopsAndFgAsksAgainWithEchoOff() throws {
        let home = try KeystoreHome(inProcess: true)
        let tmux = try Tmux(running: "env KEYSTORE_HOME=\(home.path) bash --norc --noprofile")
        try tmux.type("\(KeystoreProcess.binary) signup --kdf interactive", "Enter")
        _ = try tmux.screen(until: "New PIN (6 digits):")
        try tmux.type("C-z")
        #expect(try tmux.screen(until: "Stopped").contains("Stopped"), "Ctrl-Z did not stop keystore")
        try tmux.type("fg", "Enter")
        #expect(try tmux.screen(until: "New PIN (6 digits):", occurrences: 2).components(separatedBy: "New PIN").count == 3,
                "the question was not asked again after fg")
        try tmux.type("270419", "Enter")
        _ = try tmux.screen(until: "Repeat the PIN:")
        try tmux.type("270419", "Enter")
        let shown = try tmux.screen(until: "\nG")
        #expect(!shown.contains("270419"), "the PIN was echoed: \(shown)")
        #expect(FileManager.default.fileExists(atPath: home.vaultPath("default")))
    }

    // MARK: Retrying on the terminal

    @Test func aWeakOrMismatchedNewPINIsAskedAgainOnTheTerminal() throws {
        let home = try KeystoreHome(inProcess: true)
        let terminal = try PseudoTerminal()
        let signup = try home.keystore.start(["signup", "--kdf", "interactive"], terminal: terminal.path)
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("111111")
        terminal.waitFor("it repeats one digit")
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270418")
        terminal.waitFor("did not match")
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let result = try signup.wait(timeout: 60)
        #expect(result.status == 0 && result.stdout.hasPrefix("G"), "\(result.stderr)")
    }

    @Test func threeBadNewPINsOnTheTerminalGiveUp() throws {
        let home = try KeystoreHome(inProcess: true)
        let terminal = try PseudoTerminal()
        let signup = try home.keystore.start(["signup", "--kdf", "interactive"], terminal: terminal.path)
        for _ in 0..<3 {
            terminal.waitFor("New PIN (6 digits): ")
            terminal.type("111111")
        }
        let result = try signup.wait(timeout: 60)
        expectOneLine(result, status: 2, "it repeats one digit")
        #expect(home.vaults().isEmpty)
    }
}
