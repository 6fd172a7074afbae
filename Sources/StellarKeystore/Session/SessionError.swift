import StellarKeys
import StellarTransactions
import StellarText
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
            "That is not a session token."
        case .ended:
            "The session has ended (logged out or cleaned up)."
        case .forged:
            "The session token does not open its session file (forged, or the file was changed)."
        case .expired:
            "The session has expired."
        case .otherIdentity(let name):
            "The session belongs to identity '\(name)', not this one."
        case .invalidTTL:
            "A session lasts from 1 second to 24 hours."
        case .unsafeDirectory(let directory):
            "The session directory \(TerminalText.escaped(directory, limit: nil)) is not private to you (owner, mode 0700); remove it or set XDG_RUNTIME_DIR."
        case .vaultChanged(let name):
            "The session's identity '\(name)' no longer holds the key it was opened with (its vault was replaced)."
        case .none(let name):
            "No session is open for '\(name)'."
        }
    }

}
