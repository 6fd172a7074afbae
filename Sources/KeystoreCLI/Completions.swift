import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions

/// What Tab offers beyond argument-parser's own completion scripts: the values of `--network` and `--name`, and, in
/// bash, a command's name while it is typed. A completion runs on every Tab, so it never prompts and never prints
/// an error: whatever goes wrong offers nothing.
enum Completions {
    /// `--network`: the well-known networks by every name that selects one.
    static let networks = StellarNetwork.wellKnown.compactMap(\.name) + StellarNetwork.aliases.keys.sorted()

    /// `--name`: the identities in the keystore that `--home` names among the words typed so far, else in the
    /// default one (`KEYSTORE_HOME`, …). Words come as the shell has them, quotes and all: one pair of quotes around
    /// the directory is taken off, and a leading `~/` is the home directory. The shell keeps those that fit.
    @Sendable static func identities(_ words: [String], _: Int, _: String) -> [String] {
        let environment = Environment.values
        var home: String?
        for (index, word) in words.enumerated() {
            if word == "--home", index + 1 < words.count { home = unquoted(words[index + 1], environment) }
            if word.hasPrefix("--home=") { home = unquoted(String(word.dropFirst("--home=".count)), environment) }
        }
        guard let directory = home ?? (try? VaultStore.defaultDirectory(environment: environment)),
              let names = try? VaultStore(directory: directory).names()
        else { return [] }
        return names.map(\.rawValue)
    }

    private static func unquoted(_ word: String, _ environment: [String: String]) -> String {
        var word = word
        if word.count >= 2, let first = word.first, first == "'" || first == "\"", word.last == first {
            word = String(word.dropFirst().dropLast())
        }
        if word.hasPrefix("~/"), let home = environment["HOME"] { word = home + word.dropFirst() }
        return word
    }

    /// The script `--generate-completion-script` prints: argument-parser's, and for bash a function of ours that
    /// bash calls instead of argument-parser's `_keystore`, which it then calls.
    static func script(for shell: CompletionShell) -> String {
        let script = KeystoreCommand.completionScript(for: shell)
        let registration = "complete -o filenames -F _keystore keystore"
        guard shell == .bash, script.contains(registration) else { return script }
        return script + bashFunction
    }

    /// argument-parser's bash function takes a word that names a command for that finished command even while it
    /// is still being typed (`keystore sign<Tab>` offered nothing, not `sign-message`, `sign-tx` or `sign-auth`),
    /// and knows no alias (`whoami`). This completes the command word itself, and hands an alias's line on as its
    /// command's (bash's variables are dynamically scoped: the `local` copies are what `_keystore` reads).
    static var bashFunction: String {
        let names = (KeystoreCommand.commands.flatMap(\.names) + ["help"]).joined(separator: " ")
        let aliases = KeystoreCommand.commands.flatMap { entry in entry.names.dropFirst().map { "    \($0)) command=\(entry.names[0]) ;;" } }
        return ([
            "",
            "",
            "# keystore's own: a command's name (or alias) while it is typed; after it, argument-parser's _keystore, an",
            "# alias's line handed on as its command's.",
            "_keystore_command_names() {",
            "    if [[ \"${COMP_CWORD}\" -eq 1 && \"${2}\" != -* ]]; then",
            "        COMPREPLY=($(compgen -W '\(names)' -- \"${2}\"))",
            "        return",
            "    fi",
            "    local command=",
            "    case \"${COMP_WORDS[1]}\" in",
        ] + aliases + [
            "    esac",
            "    if [[ -n \"${command}\" ]]; then",
            "        local -r alias=\"${COMP_WORDS[1]}\"",
            "        local -a COMP_WORDS=(\"${COMP_WORDS[0]}\" \"${command}\" \"${COMP_WORDS[@]:2}\")",
            "        local COMP_LINE=\"${COMP_LINE%%\"${alias}\"*}${command}${COMP_LINE#*\"${alias}\"}\"",
            "        local COMP_POINT=$((COMP_POINT + ${#command} - ${#alias}))",
            "    fi",
            "    _keystore \"${@}\"",
            "}",
            "complete -o filenames -F _keystore_command_names keystore",
        ]).joined(separator: "\n")
    }
}
