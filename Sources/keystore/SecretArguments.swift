import StellarKeystore
import StellarKeys
import StellarTransactions

/// Spots a secret typed as an argument, so that an error never repeats it: argument-parser quotes an unexpected
/// argument in its message ("Unexpected argument 'S…'"), and that line lands on stderr, in `--json` output and in
/// logs. Only the error path is screened: a message to sign may well be any text.
enum SecretArguments {
    /// A run of this many BIP39 words in a row is taken for (part of) a recovery phrase.
    static let phraseRun = 3

    /// Whether any argument is a valid `S…` seed or a TPM lockout code, or the arguments hold a run of BIP39
    /// words, whether given as one quoted argument or as several.
    static func containSecret(_ arguments: [String]) -> Bool {
        var run = 0
        for argument in arguments {
            if isLockoutCode(argument) { return true }
            for token in argument.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "," }) {
                if isSeed(token) { return true }
                run = Mnemonic.isWord(token) ? run + 1 : 0
                if run >= phraseRun { return true }
            }
            if argument.hasPrefix("-") { run = 0 }
        }
        return false
    }

    private static func isLockoutCode(_ argument: String) -> Bool {
        guard argument.utf8.count >= 55, argument.utf8.count <= 80 else { return false }
        var bytes = Array(argument.utf8)
        return (try? LockoutCode(typed: SecureBytes(consuming: &bytes))) != nil
    }

    private static func isSeed(_ token: Substring) -> Bool {
        token.first == "S" && token.count == 56 && (try? StrKey(String(token)))?.kind == .secretSeed
    }

    static let refusal = CLIError.secretOnCommandLine(
        "a secret (a seed, a recovery phrase or a lockout code) from the command line; pass it on standard input or at the prompt instead")
}
