import StellarKeystore

/// The documented exit codes of `keystore`. Scripts branch on these, so a code never changes meaning.
enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    /// `verify`: the signature does not match the message and address.
    case invalidSignature = 1
    /// Malformed input: a StrKey, hex or base64 string, a PIN of the wrong shape, a weak PIN, a mismatched
    /// confirmation, an identity name outside `[a-z0-9._-]`.
    case invalidInput = 2
    case incorrectPIN = 3
    /// Too many wrong PINs in a row; the message says how long to wait.
    case throttled = 4
    case vaultNotFound = 5
    case vaultExists = 6
    /// The vault file is not one we can open: corrupt, tampered with, a newer format, or unsafe parameters.
    case vaultDamaged = 7
    /// The system said no: unreadable or unwritable directory, disk full, not enough memory for the KDF.
    case system = 8
    /// A session token that is expired, forged, malformed or for another identity; or, with `KEYSTORE_AGENT`, no
    /// agent there, or none holding the key (and no session or PIN to fall back on).
    case session = 9
    /// The command refused to do something risky without an explicit flag (e.g. a seed to a pipe).
    case refused = 10
    /// Standard output could not be written (a full disk, a file-size limit, a closed pipe): what the command was
    /// to print there is not there, whatever else it did.
    case outputFailed = 11
    /// `web-auth`: the sign-in challenge broke a SEP-10 or SEP-45 rule; nothing was signed or sent.
    case challengeRefused = 12
    /// `web-auth`: the server could not be reached, or answered with an error or with something else.
    case server = 13
    /// The signing agent's person declined the request (`agent start --confirm`).
    case rejected = 14
    /// `sign-tx`: a SEP-7 request's origin did not check out (a signature that is not its domain's key's, one
    /// without a domain, a domain without one); nothing was signed.
    case requestRefused = 15
    /// `policy check`: the policy would refuse a request, or ask its person about one.
    case policyRefused = 16
    /// argument-parser's own code for a command line it cannot parse.
    case usage = 64

    /// A stable name for scripts, one per code: the `kind` of `--json`'s error object (docs/guides/scripting.md, Exit codes).
    var kind: String { row.kind }

    /// What the code means, as `keystore --help` and the main man page list it (an installed binary has no README):
    /// at most 55 characters, so that each line of the table fits 80 columns unwrapped.
    var meaning: String { row.meaning }

    private var row: (kind: String, meaning: String) {
        switch self {
        case .success: ("success", "the command did what it says")
        case .invalidSignature: ("invalid-signature", "the signature does not verify (verify)")
        case .invalidInput: ("invalid-input", "malformed input or file, a weak PIN, a bad name")
        case .incorrectPIN: ("incorrect-pin", "incorrect PIN or lockout code; tries left are said")
        case .throttled: ("throttled", "too many wrong PINs: wait as said; or TPM lockout")
        case .vaultNotFound: ("not-found", "no such identity")
        case .vaultExists: ("exists", "the identity exists already")
        case .vaultDamaged: ("vault-damaged", "vault damaged, of a newer format, or for another TPM")
        case .system: ("system", "the system refused: files, memory, TPM, an age plugin")
        case .session: ("session", "no usable session, or no agent holding the key")
        case .refused: ("refused", "refused without a flag: a secret on argv or to a pipe")
        case .outputFailed: ("output-failed", "standard output could not be written")
        case .challengeRefused: ("challenge-refused", "a sign-in challenge broke a rule; nothing signed")
        case .server: ("server", "a server: unreachable, TLS, an HTTP error, no token")
        case .rejected: ("rejected", "declined at the signing agent's terminal")
        case .requestRefused: ("request-refused", "a SEP-7 request's origin did not verify")
        case .policyRefused: ("policy-refused", "policy check: a request would not be signed")
        case .usage: ("usage", "a command line that does not parse; no network given")
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
