import StellarKeys
import StellarTransactions
import StellarText
/// Everything that can go wrong between a vault file and its key. Messages name files and identities, never
/// a PIN or a seed, and show text from outside keystore (names given, paths, fields of a file) escaped.
public enum VaultError: KeystoreError, Equatable {
    case invalidName(String)
    case notFound(name: String, directory: String)
    /// The name is taken; signing up may replace the identity.
    case alreadyExists(name: String)
    /// Another sign-up holds the name while it makes the identity's key (in a token).
    case beingCreated(name: String)
    /// The name an account derived from a phrase was to be kept under is taken; a derived account is only ever
    /// kept under a new name, never in place of another identity.
    case derivedNameTaken(name: String)
    case incorrectPIN(triesBeforeWait: Int, waitSeconds: Int)
    case throttled(secondsLeft: Int)
    case corrupt(path: String, reason: String)
    case unsupportedVersion(path: String, version: Int)
    case unsafeParameters(path: String)
    case tampered(path: String, reason: String)
    /// The file's name says one identity and the vault inside says another.
    case misnamed(path: String, inside: String)
    /// Another command changed the vault between the moment this one read it and the moment it got the lock.
    case changedWhileWaiting(name: String)
    case keyDerivationFailed(memLimit: UInt64)
    /// A PIN attempt could not be counted, so none is made.
    case cannotRecordAttempts(directory: String, reason: String)
    case io(operation: String, path: String, reason: String)
    /// Neither `KEYSTORE_HOME`, `XDG_DATA_HOME` nor `HOME` says where the vaults are.
    case noHomeDirectory
    /// The vault is a P-256 key in the TPM (`TPMKeyVault`), asked for something only a Stellar (Ed25519) key does.
    case p256Key(path: String)

    public var message: String {
        switch self {
        case .invalidName(let name):
            "'\(TerminalText.escaped(name))' is not a valid identity name: use 1 to 64 of a-z 0-9 . _ - starting with a letter or digit, without '.vault', '.backup-' or '.tmp-' in it."
        case .notFound(let name, let directory):
            "No identity named '\(name)' in \(Self.shown(directory))."
        case .alreadyExists(let name):
            "An identity named '\(name)' already exists."
        case .beingCreated(let name):
            "An identity named '\(name)' is being created by another process."
        case .derivedNameTaken(let name):
            "An identity named '\(name)' already exists; a derived account is kept only under a new name."
        case .incorrectPIN(let tries, _) where tries > 0:
            "Incorrect PIN; \(tries) more \(tries == 1 ? "try" : "tries") before a waiting period."
        case .incorrectPIN(_, let wait):
            "Incorrect PIN; too many in a row, try again in \(Self.duration(wait))."
        case .throttled(let seconds):
            "Too many incorrect PINs; try again in \(Self.duration(seconds))."
        case .corrupt(let path, let reason):
            "The vault \(Self.shown(path)) is damaged (\(reason)); restore it from a backup."
        case .p256Key(let path):
            "The vault \(Self.shown(path)) is a P-256 key in this machine's TPM: it has no Stellar account, and signs only as a smart account's signer; nothing was done."
        case .unsupportedVersion(let path, let version):
            "The vault \(Self.shown(path)) has format version \(version), newer than this program reads."
        case .unsafeParameters(let path):
            "The vault \(Self.shown(path)) asks for key-derivation costs beyond safe bounds; it was not made by this program. Restore it from a backup."
        case .tampered(let path, let reason):
            "The vault \(Self.shown(path)) has been tampered with (\(reason)); do not use it, restore it from a backup."
        case .misnamed(let path, let inside):
            "The vault \(Self.shown(path)) holds identity '\(inside)', not the one its file name says; it was copied or renamed. Rename it back to \(inside).vault."
        case .changedWhileWaiting(let name):
            "The vault of '\(name)' was changed by another command while this one waited; nothing was changed and no attempt was counted. Run the command again."
        case .keyDerivationFailed(let memLimit):
            "Not enough memory for key derivation at this cost (\(memLimit >> 20) MiB); free memory or raise the limit (ulimit -v)."
        case .cannotRecordAttempts(let directory, let reason):
            "Cannot record failed PIN attempts in \(Self.shown(directory)) (\(reason)), so no PIN was tried; fix the directory or free some space."
        case .io(let operation, let path, let reason):
            "Could not \(operation) \(Self.shown(path)): \(reason)."
        case .noHomeDirectory:
            "Could not find the directory of the vaults: HOME is not set; set KEYSTORE_HOME."
        }
    }


    /// A path as a message shows it: escaped, but whole, since a cut path is no help.
    static func shown(_ path: String) -> String { TerminalText.escaped(path, limit: nil) }

    static func duration(_ seconds: Int) -> String {
        seconds < 120 ? "\(seconds) s" : "\((seconds + 59) / 60) min"
    }
}
