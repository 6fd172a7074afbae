import StellarKeys
import StellarTransactions
public enum SessionError: KeystoreError, Equatable {
    case malformed
    case ended
    case forged
    case expired
    case otherIdentity(name: String)
    case invalidTTL
    case unsafeDirectory(String)
    case none(name: String)
    /// The identity's vault now holds another key than the session (replaced since the session began).
    case vaultChanged(name: String)

    public var message: String {
        switch self {
        case .malformed:
            "KEYSTORE_SESSION is not a session token; run 'keystore login --session' and eval its output."
        case .ended:
            "The session has ended (logged out or cleaned up); run 'keystore login --session' again."
        case .forged:
            "The session token does not open its session file (forged, or the file was changed); run 'keystore login --session' again."
        case .expired:
            "The session has expired; run 'keystore login --session' again."
        case .otherIdentity(let name):
            "The session belongs to identity '\(name)', not this one; pass --name \(name) or log in to this identity."
        case .invalidTTL:
            "A session lasts from 1 second to 24 hours, e.g. --ttl 90s, 15m, 8h."
        case .unsafeDirectory(let directory):
            "The session directory \(TerminalText.escaped(directory, limit: nil)) is not private to you (owner, mode 0700); remove it or set XDG_RUNTIME_DIR."
        case .vaultChanged(let name):
            "The session's identity '\(name)' no longer holds the key it was opened with (its vault was replaced); run 'keystore login --session' again."
        case .none(let name):
            "No session is open for '\(name)'; start one with 'keystore login --session'."
        }
    }

    public var exitStatus: ExitStatus {
        switch self {
        case .invalidTTL: .invalidInput
        case .unsafeDirectory: .system
        default: .session
        }
    }
}
