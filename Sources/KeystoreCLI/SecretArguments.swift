import StellarKeystore
import StellarKeys
import StellarTransactions

/// Spots a secret typed as an argument, so that an error never repeats it: argument-parser quotes an unexpected
/// argument in its message ("Unexpected argument 'S…'"), keystore's own errors quote a name or a network, and that
/// line lands on stderr, in `--json` output and in logs.
///
/// Only what an error would print is screened, and only what a secret can be counts as one: a seed, a TPM lockout
/// code, an age identity, or a recovery phrase (12 to 24 BIP39 words). Everyday English has three list words in a row ("I control
/// this account"), and a message to sign or verify may be any text: a command that failed for another reason keeps
/// its own error and exit code.
enum SecretArguments {
    /// A recovery phrase is 12, 15, 18, 21 or 24 list words. A longer run of them still holds one (a phrase pasted
    /// after a name that is a list word, `--name wallet abandon …`), so any run of at least 12 is taken for one.
    static let phraseLength = Mnemonic.wordCounts.min() ?? 12

    /// What must not be repeated: a seed or a lockout code as typed, or the words of a phrase.
    enum Secret: Equatable {
        case text(Substring)
        case words([Substring])
    }

    /// The secrets among `arguments`: each valid `S…` seed and TPM lockout code, and each run of at least
    /// `phraseLength` BIP39 words, whether given as one quoted argument or as several (an option ends a run).
    static func secrets(in arguments: [String]) -> [Secret] {
        var found: [Secret] = []
        var run: [Substring] = []
        func endRun() {
            if run.count >= phraseLength { found.append(.words(run)) }
            run = []
        }
        for argument in arguments {
            if isLockoutCode(argument) || holdsAgeIdentity(argument) { found.append(.text(argument[...])) }
            for token in argument.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "," }) {
                if isSeed(token) { found.append(.text(token)) }
                if Mnemonic.isWord(token) { run.append(token) } else { endRun() }
            }
            if argument.hasPrefix("-") { endRun() }
        }
        endRun()
        return found
    }

    /// Whether `message` repeats any part of a secret among `arguments`: twelve characters in a row of a seed or a
    /// lockout code, or two words in a row of a phrase. A part is enough, since a quoted value is cut to fit a line
    /// (`TerminalText`), and a phrase's words may be quoted one argument at a time ("'illness', 'spike', …").
    static func isQuoted(in message: String, arguments: [String]) -> Bool {
        let secrets = secrets(in: arguments)
        guard !secrets.isEmpty else { return false }
        let words = message.lowercased().split { !$0.isLetter }
        return secrets.contains { secret in
            switch secret {
            case .text(let text):
                let characters = Array(text)
                let piece = min(12, characters.count)
                return (0...(characters.count - piece)).contains { message.contains(String(characters[$0..<$0 + piece])) }
            case .words(let phrase):
                let pairs = Set(zip(phrase, phrase.dropFirst()).map { "\($0.lowercased()) \($1.lowercased())" })
                return zip(words, words.dropFirst()).contains { pairs.contains("\($0) \($1)") }
            }
        }
    }

    /// Whether an option looks like one that gives a PIN (`--pin 493817`, `--PIN=…`, `--new-pin`, `--pin-code`)
    /// without being one of the real ones, which say where to read it: there is deliberately no option that takes
    /// a PIN, and argument-parser's nearest option ("Did you mean '--json'?") would not say so.
    static func containPINOption(_ arguments: [String]) -> Bool {
        let real: Set = ["pin-stdin", "pin-file", "pin-fd", "new-pin-file", "new-pin-fd"]
        return arguments.prefix { $0 != "--" }.contains { argument in
            guard argument.hasPrefix("--") else { return false }
            let name = argument.dropFirst(2).prefix { $0 != "=" }.lowercased()
            return !real.contains(name) && name.split { $0 == "-" || $0 == "_" }.contains { $0 == "pin" || $0 == "pincode" }
        }
    }

    /// Whether a usage error quotes an argument shaped like a PIN (exactly six ASCII digits). Not a general screen:
    /// a six-digit name, amount or ledger is ordinary text, and keystore's own errors may quote it.
    static func quotesPIN(_ message: String, arguments: [String]) -> Bool {
        arguments.contains { argument in
            argument.utf8.count == 6 && argument.utf8.allSatisfy { (0x30...0x39).contains($0) } && message.contains("'\(argument)'")
        }
    }

    private static func isLockoutCode(_ argument: String) -> Bool {
        guard argument.utf8.count >= 55, argument.utf8.count <= 80 else { return false }
        var bytes = Array(argument.utf8)
        return (try? LockoutCode(typed: SecureBytes(consuming: &bytes))) != nil
    }

    /// An age identity (`AGE-SECRET-KEY-1…`, a backup's recovery key among them, or a plugin's `AGE-PLUGIN-…`) opens
    /// every file encrypted to its recipient. Taken whatever its case and spacing, since a recovery key is shown in
    /// groups of four and read back in any case; no checksum is asked, as an error may quote one copied wrong.
    private static func holdsAgeIdentity(_ argument: String) -> Bool {
        let compact = argument.uppercased().filter { !$0.isWhitespace }
        return compact.contains("AGE-SECRET-KEY-1") || compact.contains("AGE-PLUGIN-")
    }

    private static func isSeed(_ token: Substring) -> Bool {
        token.first == "S" && token.count == 56 && (try? StrKey(String(token)))?.kind == .secretSeed
    }

    static let refusal = CLIError.secretOnCommandLine(
        "a secret (a seed, a recovery phrase, a lockout code or an age identity) from the command line; pass it on standard input or at the prompt instead")
}
