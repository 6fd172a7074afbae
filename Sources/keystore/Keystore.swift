import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import StellarKeystore

@main
struct Keystore: ParsableCommand {
    static let version = "0.2.0"

    static let configuration = CommandConfiguration(
        commandName: "keystore",
        abstract: "An encrypted local keystore for Stellar keys.",
        discussion: """
            Secrets (PINs, seeds) are never taken from the command line: they come from the terminal, \
            standard input, a file descriptor or a file. Exit codes are listed in the README.
            """,
        version: version,
        subcommands: [
            Signup.self, Login.self, Logout.self, Status.self, ChangePIN.self, Export.self, List.self, Remove.self,
            Address.self, Sign.self, SignMessage.self, Verify.self, Recover.self, Derive.self, BenchKDF.self,
            StrKeyCommand.self,
        ]
    )

    /// Runs the command, turning our own errors into one line on stderr and their documented exit code.
    static func main() {
        // Before any secret is read: no core dump, no same-user debugger, may ever see it.
        CoreDumps.disable()
        // A full disk or a file-size limit must come back as an error we can report, not a signal.
        signal(SIGXFSZ, SIG_IGN)
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as KeystoreError {
            Console.error(error.message)
            Self.exit(withError: ExitCode(error.exitStatus.rawValue))
        } catch {
            Self.exit(withError: error)
        }
    }
}
