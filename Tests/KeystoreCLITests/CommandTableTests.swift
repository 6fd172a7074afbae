import ArgumentParser
import Foundation
import Testing
import TestFixtures
@testable import KeystoreCLI

/// `keystore` parses a command named in argv[1] without building the whole tree (KeystoreCommand.parse()). These pin
/// that nothing a user sees changed: the table names exactly the tree's commands, and help texts and completion
/// scripts are byte for byte those recorded in fixtures/cli from argument-parser's full parse.
@Suite(.offThePool) struct CommandTableTests {
    /// The one list names each command as its own configuration does (name, then aliases), and the tree is it.
    @Test func theListNamesEachCommandAsItsConfigurationDoes() {
        for (names, type) in KeystoreCommand.commands {
            let command = type()
            let configuration = command.configuration
            #expect(names == [configuration.commandName ?? command._commandName] + configuration.aliases, "\(command)")
            for name in names { #expect(KeystoreCommand.command(named: name) == command) }
        }
        #expect(KeystoreCommand.configuration.subcommands.map { String(describing: $0) }
                == KeystoreCommand.commands.map { String(describing: $0.command()) })
        #expect(KeystoreCommand.command(named: "sigup") == nil)
    }

    /// Every command's help, from the list, and the nested ones of strkey.
    static let helps = [""] + KeystoreCommand.commands.map { $0.names[0] } + ["strkey decode", "strkey encode"]
        + ["agent start", "agent list", "agent status", "agent remove", "agent lock", "agent stop"] + ["policy check"] + ["tpm-move target", "tpm-move wrap", "tpm-move import"]

    @Test(arguments: helps)
    func helpIsWhatArgumentParserPrints(_ command: String) throws {
        let file = command.isEmpty ? "help.txt" : "help-\(command.replacingOccurrences(of: " ", with: "-")).txt"
        let expected = try String(contentsOf: KeystoreHome.fixtures.appendingPathComponent("cli/\(file)"), encoding: .utf8)
        let words = command.split(separator: " ").map(String.init)
        #expect(try KeystoreProcess(runsInProcess: true).run(words + ["--help"]).stdout == expected)
        #expect(try KeystoreProcess(runsInProcess: true).run(["help"] + words).stdout == expected)
    }

    /// bash's is argument-parser's with keystore's own function after it (`Completions`; CompletionCLITests runs it).
    /// Each is written by a process of its own (`aCompletionScriptIsNeverWrittenInProcess`).
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsAreWhatArgumentParserPrints(_ shell: String) throws {
        let expected = try String(contentsOf: KeystoreHome.fixtures.appendingPathComponent("cli/completion.\(shell)"), encoding: .utf8)
        #expect(try KeystoreProcess().run(["--generate-completion-script", shell]).stdout == expected)
    }

    /// argument-parser keeps the shell it last wrote a completion script for in a variable of the process, and
    /// formats every later completion answer in that process for it: after zsh's script, an answer gains a line
    /// holding a space (zsh's script takes it off), so one test's script once changed another's answer
    /// (CompletionCLITests, in a CI run). A run in-process refuses to write a script; a process writes it.
    @Test func aCompletionScriptIsNeverWrittenInProcess() throws {
        #expect(throws: KeystoreInProcess.NeedsAProcess.self) { try KeystoreInProcess().run(["--generate-completion-script", "zsh"]) }
        #expect(throws: KeystoreInProcess.NeedsAProcess.self) { try KeystoreProcess(runsInProcess: true).run(["--generate-completion-script=bash"]) }
    }

    /// docs/man is generated from this dump (scripts/generate-man); a help text changed without regenerating the
    /// man pages fails here.
    @Test func theManPagesAreMadeFromTodaysHelp() throws {
        let dump = try String(contentsOf: KeystoreHome.fixtures.appendingPathComponent("cli/dump-help.json"), encoding: .utf8)
        #expect(try KeystoreProcess(runsInProcess: true).run(["--experimental-dump-help"]).stdout == dump, "run scripts/generate-man")
        let pages = try FileManager.default.contentsOfDirectory(
            atPath: KeystoreHome.fixtures.deletingLastPathComponent().appendingPathComponent("docs/man").path)
        // One page per command, and argument-parser's own `help`.
        let expected = Self.helps.map { "keystore\($0.isEmpty ? "" : "." + $0.replacingOccurrences(of: " ", with: ".")).1" }
        #expect(Set(pages) == Set(expected + ["keystore.help.1"]))
    }

    @Test func aCommandLineThatDoesNotParseGetsArgumentParsersMessage() throws {
        let result = try KeystoreProcess(runsInProcess: true).run(["sign", "--hex"])
        #expect(result.status == 64 && result.stderr == "keystore: Missing value for '--hex <hex>' (see --help)\n", "\(result.stderr)")
    }

    /// Every command's and subcommand's own configuration, with the words that name it.
    static func everyCommand() -> [(words: String, command: ParsableCommand.Type)] {
        func walk(_ words: String, _ command: ParsableCommand.Type) -> [(words: String, command: ParsableCommand.Type)] {
            [(words, command)] + command.configuration.subcommands.flatMap { walk(words + " " + ($0.configuration.commandName ?? $0._commandName), $0) }
        }
        return KeystoreCommand.commands.flatMap { walk($0.names[0], $0.command()) }
    }

    /// argument-parser names a command that does not name itself with `String(describing:)` of its type, whose
    /// dynamic casts scan every conformance in the binary: four scans a command on every run that builds the tree
    /// (help, --version, a usage error), most of `keystore --version`'s time. So each names itself.
    @Test func everyCommandNamesItself() {
        for (words, command) in Self.everyCommand() {
            #expect(command.configuration.commandName != nil, "keystore \(words)")
        }
        #expect(KeystoreCommand.configuration.commandName != nil)
    }

    /// `--help` is for a person in a hurry: no command's discussion is longer than 8 lines as argument-parser
    /// prints it at 80 columns (the recipes are in docs/guides, the reference in the man page's options). The root's
    /// discussion is the exit-code table, the one list of exit codes an installed binary carries, and is not counted.
    @Test func noCommandsDiscussionIsLongerThanEightLines() {
        let commands = Self.everyCommand()
        #expect(commands.count >= 35, "\(commands.map(\.words))")
        for (words, command) in commands {
            let help = KeystoreCommand.helpMessage(for: command, columns: 80).split(separator: "\n", omittingEmptySubsequences: false)
            // OVERVIEW's paragraph is the abstract; what follows, up to USAGE, is the discussion.
            let afterAbstract = help.drop { !$0.hasPrefix("OVERVIEW:") }.drop { !$0.isEmpty }
            let discussion = afterAbstract.prefix { !$0.hasPrefix("USAGE:") }
            let lines = discussion.drop { $0.isEmpty }.reversed().drop { $0.isEmpty }
            #expect(lines.count <= 8, "keystore \(words): \(lines.count) lines of discussion")
            #expect(help.contains { $0.hasPrefix("USAGE:") }, "keystore \(words)")
        }
    }
}
