/// Everything that can go wrong between a vault file and its key. Messages name files and identities, never
/// a PIN or a seed.
public enum VaultError: KeystoreError, Equatable {
    case invalidName(String)
    case notFound(name: String, directory: String)
    case alreadyExists(name: String)
    case incorrectPIN(triesBeforeWait: Int, waitSeconds: Int)
    case throttled(secondsLeft: Int)
    case corrupt(path: String, reason: String)
    case unsupportedVersion(path: String, version: Int)
    case unsafeParameters(path: String)
    case tampered(path: String, reason: String)
    case keyDerivationFailed(memLimit: UInt64)
    case io(operation: String, path: String, reason: String)

    public var message: String {
        switch self {
        case .invalidName(let name):
            "'\(name.prefix(80))' is not a valid identity name: use 1 to 64 of a-z 0-9 . _ - starting with a letter or digit."
        case .notFound(let name, let directory):
            "No identity named '\(name)' in \(directory); create one with 'keystore signup --name \(name)'."
        case .alreadyExists(let name):
            "An identity named '\(name)' already exists; pick another with --name, or replace it with --replace (the old vault is kept as a backup)."
        case .incorrectPIN(let tries, _) where tries > 0:
            "Incorrect PIN; \(tries) more \(tries == 1 ? "try" : "tries") before a waiting period."
        case .incorrectPIN(_, let wait):
            "Incorrect PIN; too many in a row, try again in \(Self.duration(wait))."
        case .throttled(let seconds):
            "Too many incorrect PINs; try again in \(Self.duration(seconds))."
        case .corrupt(let path, let reason):
            "The vault \(path) is damaged (\(reason)); restore it from a backup."
        case .unsupportedVersion(let path, let version):
            "The vault \(path) has format version \(version), newer than this keystore reads; upgrade keystore."
        case .unsafeParameters(let path):
            "The vault \(path) asks for key-derivation costs beyond safe bounds; it was not made by keystore. Restore it from a backup."
        case .tampered(let path, let reason):
            "The vault \(path) has been tampered with (\(reason)); do not use it, restore it from a backup."
        case .keyDerivationFailed(let memLimit):
            "Not enough memory for key derivation (\(memLimit >> 20) MiB); close other programs and try again."
        case .io(let operation, let path, let reason):
            "Could not \(operation) \(path): \(reason)."
        }
    }

    public var exitStatus: ExitStatus {
        switch self {
        case .invalidName: .invalidInput
        case .notFound: .vaultNotFound
        case .alreadyExists: .vaultExists
        case .incorrectPIN: .incorrectPIN
        case .throttled: .throttled
        case .corrupt, .unsupportedVersion, .unsafeParameters, .tampered: .vaultDamaged
        case .keyDerivationFailed, .io: .system
        }
    }

    static func duration(_ seconds: Int) -> String {
        seconds < 120 ? "\(seconds) s" : "\((seconds + 59) / 60) min"
    }
}
