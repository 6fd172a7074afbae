import StellarKeystore
import StellarKeys
import StellarTransactions

/// The exit codes as `keystore --help` and the main man page list them: an installed binary has no README.
extension ExitStatus {
    /// At most 55 characters, so that each line of the table fits 80 columns unwrapped.
    var meaning: String {
        switch self {
        case .success: "the command did what it says"
        case .invalidSignature: "the signature does not verify (verify)"
        case .invalidInput: "malformed input or file, a weak PIN, a bad name"
        case .incorrectPIN: "incorrect PIN or lockout code; tries left are said"
        case .throttled: "too many wrong PINs: wait as said; or TPM lockout"
        case .vaultNotFound: "no such identity"
        case .vaultExists: "the identity exists already"
        case .vaultDamaged: "vault damaged, of a newer format, or for another TPM"
        case .system: "the system refused: files, memory, the TPM"
        case .session: "no usable session"
        case .refused: "refused without a flag: a secret on argv or to a pipe"
        case .outputFailed: "standard output could not be written"
        case .usage: "a command line that does not parse; no network given"
        }
    }

    /// One line per code, for the root command's discussion.
    static var table: String {
        allCases.map { status in
            let code = String(status.rawValue)
            return "  " + code + String(repeating: " ", count: 4 - code.count) + status.kind
                + String(repeating: " ", count: 19 - status.kind.count) + status.meaning
        }.joined(separator: "\n")
    }
}
