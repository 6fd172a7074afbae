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
            fail(error.message, error.exitStatus)
        } catch let exit as ExitCode where exit.rawValue == ExitStatus.invalidSignature.rawValue {
            Self.exit(withError: exit)  // `verify --json` has said so already
        } catch {
            // argument-parser's own: help and --version exit 0 as it prints them; everything else is a usage
            // error, made one line like ours.
            guard exitCode(for: error) != .success else { Self.exit(withError: error) }
            let words = message(for: error).split(whereSeparator: { $0.isWhitespace })
            fail(words.joined(separator: " ") + " (see --help)", .usage)
        }
    }

    /// Our one line on stderr, and with `--json` one object on stdout too, then the documented exit code.
    private static func fail(_ message: String, _ status: ExitStatus) -> Never {
        Console.error(message)
        if wantsJSON {
            struct Failure: Encodable {
                struct Body: Encodable { let code: Int32; let kind, message: String }
                let error: Body
            }
            let body = Failure.Body(code: status.rawValue, kind: status.kind, message: TerminalText.escaped(message, limit: nil))
            try? Console.printJSON(Failure(error: body))
        }
        Self.exit(withError: ExitCode(status.rawValue))
    }

    /// Whether `--json` was asked for, read from the arguments themselves, since a command line that failed to
    /// parse has no parsed flag to ask.
    private static var wantsJSON: Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }
}
