import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

/// The `keystore` executable's whole body: its `main.swift` calls `main()` and nothing else.
public enum KeystoreTool {
    /// The process: what only a process may do (protect its memory, take a full disk as an error rather than a
    /// signal), one run of its command line on its own descriptors, terminal and environment, and the exit.
    public static func main() {
        // Before any secret is read: no core dump, no same-user debugger, no crash handler may ever see it.
        ProcessProtection.enable()
        // A full disk or a file-size limit must come back as an error we can report, not a signal.
        signal(SIGXFSZ, SIG_IGN)
        let status = run(CommandLine.arguments)
        Glibc.exit(status)
    }

    /// Runs one command line (`commandLine[0]` is the name it was run under) on `console`, and returns its exit
    /// status instead of exiting. It changes nothing of the process (no signal, no directory, no descriptor of
    /// its own), so that tests run many at once in one process.
    static func run(_ commandLine: [String], on console: Console.Run = Console.Run()) -> Int32 {
        Console.$current.withValue(console) { KeystoreCommand.exitStatus(of: commandLine) }
    }
}

struct KeystoreCommand: ParsableCommand {
    static let version = "0.4.0"
    /// Every subcommand names it as its `_superCommandName`: argument-parser then skips, for a subcommand parsed
    /// on its own (`parse()`'s fast path), the search for a completion-script request, which builds two more
    /// commands by reflection (14% of a session `sign`, by `perf record`). It affects nothing else unless the
    /// subcommand is the root, which it is only there, and only when no completion script was asked for.
    ///
    /// Run as `stellar-keystore` (a symlink: stellar-cli runs `stellar-X` from PATH for `stellar X …`, with the
    /// remaining arguments), it is `stellar keystore`, so that usage lines and help show what the user typed.
    static let name = invokedName == pluginName ? "stellar keystore" : "keystore"

    /// The name stellar-cli looks for on PATH for `stellar keystore …`.
    static let pluginName = "stellar-keystore"

    /// The last component of argv[0]: the name this binary was run under.
    static var invokedName: Substring {
        (CommandLine.arguments.first ?? "").split(separator: "/").last ?? ""
    }

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "An encrypted local keystore for Stellar keys.",
        discussion: """
            Secrets (PINs, seeds) are never taken from the command line: they come from the terminal, \
            standard input, a file descriptor or a file. Every failure is one line on standard error (with \
            --json, also an object on standard output), and one of these exit codes:

            """ + ExitStatus.table,
        version: "\(version) (reads vault formats 1 to \(Vault.currentVersion))",
        subcommands: commands.map { $0.command() }
    )

    /// Every subcommand, in the order help lists them, with each name (and alias) that selects it: the one
    /// list. The root's subcommands and `parse()`'s table come from it, and a test checks it against each
    /// command's own configuration. Each command names itself there (`commandName`, as a test checks):
    /// argument-parser would otherwise derive each name from the type's by `String(describing:)`, whose casts
    /// scan every conformance in the binary, on every run that builds the tree (help, `--version`, a usage
    /// error): 60% of `--version`'s instructions. Each type is behind a closure: making a command's metatype a
    /// `ParsableCommand.Type` instantiates its conformance's witness table, and a run that parses one command
    /// (`sign`, once per signature) made all 34 (2.5% of a session `sign`, by `perf record`).
    static let commands: [(names: [String], command: @Sendable () -> ParsableCommand.Type)] = [
        (["signup"], { Signup.self }), (["login"], { Login.self }), (["logout"], { Logout.self }), (["status"], { Status.self }),
        (["agent"], { Agent.self }), (["policy"], { PolicyCommand.self }),
        (["change-pin"], { ChangePIN.self }), (["export"], { Export.self }), (["list"], { List.self }), (["remove"], { Remove.self }),
        (["address", "whoami"], { Address.self }), (["sign"], { Sign.self }), (["sign-message"], { SignMessage.self }),
        (["sign-tx"], { SignTx.self }), (["sign-auth"], { SignAuth.self }), (["show-tx"], { ShowTx.self }),
        (["combine-tx"], { CombineTx.self }), (["share-tx"], { ShareTx.self }), (["web-auth"], { WebAuth.self }),
        (["verify"], { Verify.self }), (["recover"], { Recover.self }),
        (["derive"], { Derive.self }), (["backup"], { BackupCommand.self }), (["restore"], { Restore.self }), (["upgrade"], { Upgrade.self }), (["import-stellar-cli"], { ImportStellarCLI.self }),
        (["bench-kdf"], { BenchKDF.self }), (["bind"], { Bind.self }), (["unbind"], { Unbind.self }), (["tpm-status"], { TPMStatus.self }),
        (["tpm-protect"], { TPMProtect.self }), (["tpm-reset-lockout"], { TPMResetLockout.self }), (["tpm-move"], { TPMMove.self }), (["strkey"], { StrKeyCommand.self }),
    ]

    /// The subcommand a name selects.
    static func command(named name: String) -> ParsableCommand.Type? {
        commands.first { $0.names.contains(name) }?.command()
    }

    /// Runs the command line, turning our own errors into one line on stderr; returns the documented exit code.
    static func exitStatus(of commandLine: [String]) -> Int32 {
        let arguments = Array(commandLine.dropFirst())
        func fail(_ message: String, _ status: ExitStatus) -> Int32 {
            Self.fail(message, status, arguments: arguments)
        }
        func lostOutput() -> Int32? { Console.outputError.map { fail($0.message, $0.exitStatus) } }
        do {
            if (commandLine.first ?? "").split(separator: "/").last == SignerPlugin.name[...] {
                try SignerPlugin.run(arguments: arguments)
                return lostOutput() ?? 0
            }
            var command = try parse(arguments)
            try command.run()
            return lostOutput() ?? 0
        } catch let error as KeystoreError {
            return fail(Hints.withHint(error), ExitStatus(of: error))
        } catch let exit as ExitCode where exit.rawValue == ExitStatus.invalidSignature.rawValue {
            return exit.rawValue  // `verify --json` has said so already
        } catch {
            // argument-parser's own: help and --version exit 0 as it prints them; everything else is a usage
            // error, made one line like ours.
            if exitCode(for: error) == .success {
                // Help, --version, completions: argument-parser's texts, but for bash's script, ours.
                guard completionShellRequested(arguments) == .bash else { return status(printing: error) }
                Console.print(Completions.script(for: .bash))
                return lostOutput() ?? 0
            }
            // A completion (bash calls `keystore ---completion …` on Tab) prints no error into the line being typed.
            if arguments.first == "---completion" { return ExitCode.failure.rawValue }
            // `--pin 493817`: the way to give a PIN, not argument-parser's nearest option; the PIN is not repeated.
            if SecretArguments.containPINOption(arguments) { return fail(CLIError.pinOnCommandLine.message, CLIError.pinOnCommandLine.exitStatus) }
            // A mistyped command, before argument-parser blames whatever option follows it.
            if let first = arguments.first, !first.hasPrefix("-"), command(named: first) == nil, first != "help" {
                let guess = nearestCommand(to: first).map { "; did you mean '\($0)'?" } ?? ""
                return fail("Unknown command '\(first)'\(guess) (see --help)", .usage)
            }
            let words = message(for: error).split(whereSeparator: { $0.isWhitespace })
            let usage = words.joined(separator: " ")
            // `login 270419`: a PIN typed where no argument goes is refused without being repeated. Only here, where
            // the command line did not parse: a six-digit name or amount elsewhere is no one's PIN.
            if SecretArguments.quotesPIN(usage, arguments: arguments) { return fail(CLIError.pinOnCommandLine.message, CLIError.pinOnCommandLine.exitStatus) }
            return fail(usage + " (see --help)", .usage)
        }
    }

    /// What argument-parser's `exit(withError:)` does, without the exit: its text for `error` (help, a version, a
    /// completion script) on stdout when that is success, else on stderr, and its exit code. The width is the
    /// run's: `COLUMNS`, else its standard output's terminal, else 80, as argument-parser measures the process's.
    private static func status(printing error: Error) -> Int32 {
        var size = winsize()
        let reported = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : nil
        let columns = Environment["COLUMNS"].flatMap { Int($0) } ?? reported ?? 80
        let text = fullMessage(for: error, columns: columns)
        let code = exitCode(for: error)
        if !text.isEmpty {
            if code == .success { Console.print(text) } else { Console.write(Array((text + "\n").utf8), to: STDERR_FILENO) }
        }
        if code == .success, let lost = Console.outputError { return fail(lost.message, lost.exitStatus, arguments: []) }
        return code.rawValue
    }

    /// The command line, parsed. argument-parser builds the whole command tree by reflection on every run
    /// (half the cost of a session `sign`, by `perf record`), so a command named in `argv[1]` is parsed on its
    /// own. Anything that shows the tree (help, `--version`, completion scripts) and any command line that does
    /// not parse that way goes through the full parse, so that help, usage and error texts stay exactly
    /// argument-parser's (fixtures/cli holds them; a test compares).
    static func parse(_ arguments: [String]) throws -> ParsableCommand {
        // An array, not a `Set`: a set of strings is instantiated by its mangled name, whose `String: Hashable`
        // is looked up by a scan of every conformance in the binary (1.3% of a session `sign`).
        let showsTree = ["-h", "--help", "-help", "help", "--version", "--generate-completion-script",
                         "--experimental-dump-help"]
        if let name = arguments.first, let command = command(named: name),
           !arguments.contains(where: { showsTree.contains($0) || $0.hasPrefix("--generate-completion-script=") }),
           let parsed = try? command.parseAsRoot(Array(arguments.dropFirst())) {
            return parsed
        }
        return try parseAsRoot(arguments)
    }

    /// The shell `--generate-completion-script` asked a script for: its value, else the one argument-parser
    /// detects from `$SHELL`.
    private static func completionShellRequested(_ arguments: [String]) -> CompletionShell? {
        let option = "--generate-completion-script"
        guard let index = arguments.firstIndex(where: { $0 == option || $0.hasPrefix(option + "=") }) else { return nil }
        if arguments[index].hasPrefix(option + "=") { return CompletionShell(rawValue: String(arguments[index].dropFirst(option.count + 1))) }
        if index + 1 < arguments.count, let shell = CompletionShell(rawValue: arguments[index + 1]) { return shell }
        return CompletionShell.autodetected()
    }

    /// The command within two edits (insertions, deletions, substitutions) of `typed`, if exactly one is nearest.
    static func nearestCommand(to typed: String) -> String? {
        let typed = Array(typed.lowercased())
        let scored = commands.flatMap(\.names).map { ($0, EditDistance.between(typed, Array($0))) }.filter { $0.1 <= 2 }
        guard let best = scored.map(\.1).min() else { return nil }
        let nearest = scored.filter { $0.1 == best }.map(\.0)
        return nearest.count == 1 ? nearest[0] : nil
    }

    /// Our one line on stderr, and with `--json` one object on stdout too; returns the documented exit code. Every
    /// error passes here: one that would repeat a secret typed as an argument (argument-parser quotes what it did
    /// not expect; a name that is a seed is quoted as a bad name) is the refusal instead.
    private static func fail(_ message: String, _ status: ExitStatus, arguments: [String]) -> Int32 {
        // The refusal is not screened again: its own words ("pass it on standard input") may be a phrase's.
        if message != SecretArguments.refusal.message && SecretArguments.isQuoted(in: message, arguments: arguments) {
            return fail(SecretArguments.refusal.message, SecretArguments.refusal.exitStatus, arguments: arguments)
        }
        Console.error(message)
        if wantsJSON(arguments) {
            struct Failure: Encodable {
                struct Body: Encodable { let code: Int32; let kind, message: String }
                let error: Body
            }
            let body = Failure.Body(code: status.rawValue, kind: status.kind, message: TerminalText.escaped(message, limit: nil))
            try? Console.printJSON(Failure(error: body))
        }
        return status.rawValue
    }

    /// Whether `--json` was asked for, read from the arguments themselves, since a command line that failed to
    /// parse has no parsed flag to ask.
    private static func wantsJSON(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }
}
