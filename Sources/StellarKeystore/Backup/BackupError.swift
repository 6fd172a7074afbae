/// Why a backup could not be made, read or restored. Each leaves every vault as it was, except `restoreStopped`,
/// which names the vaults it restored and kept.
public enum BackupError: KeystoreError, Equatable {
    /// The decrypted file is not a keystore backup bundle.
    case notABundle
    /// A bundle of a later format than this keystore reads.
    case futureVersion(Int)
    case malformed(line: Int, reason: String)
    /// A seed whose address is not the one the bundle names: the bundle was altered or made wrongly.
    case addressMismatch(name: String)
    /// A phrase's root whose account is not the seed beside it.
    case phraseMismatch(name: String, account: UInt32)
    /// An identity asked for that is not in the keystore, or not in the backup.
    case noSuchIdentity(String)
    /// Nothing to back up.
    case empty
    /// A different key under a name the keystore already has, which is replaced only when asked.
    case differentKeyHere(name: String, here: String, inBackup: String)
    /// A restored key that did not sign and verify its probe.
    case probeFailed(name: String)
    /// The backup file is there already, and replacing it was not asked.
    case outputExists(path: String)
    /// The backup cannot be written there.
    case unusableOutput(path: String, reason: String)
    /// Identities that were bound to a TPM, which a restore unbinds only when asked (the PIN alone would guard them).
    case wasTPMBound(names: [String])
    /// The identity here changed between the restore's plan and its writing (a vault made, replaced or removed).
    case changedSincePlan(name: String)
    /// A restore that failed after writing some vaults: those are kept (each checked by its probe), the rest not written.
    case restoreStopped(restored: [String], at: String, reason: String)
    /// A recipient that is not an age recipient (`age1…`, or a plugin's `age1NAME1…`), named by where it was
    /// given and never quoted; `isIdentity`: it is an age identity, a secret key given in its recipient's place.
    case badRecipient(RecipientPlace, isIdentity: Bool)
    /// Recipients were asked for and none was given (a recipients file of comments only).
    case noRecipient

    /// Where a recipient was given.
    public enum RecipientPlace: Sendable, Equatable {
        /// The nth of those given one by one, from 1.
        case given(Int)
        /// A line of the recipients file, from 1.
        case fileLine(Int)

        var name: String {
            switch self {
            case .given(let number): "Recipient \(number) of those given"
            case .fileLine(let number): "Line \(number) of the recipients file"
            }
        }
    }

    public var message: String {
        switch self {
        case .notABundle: "The file decrypted, but what it holds is not a backup bundle; nothing was written."
        case .futureVersion(let version):
            "The backup is of format v\(version), newer than this library reads (v\(BackupBundle.version)); nothing was written."
        case .malformed(let line, let reason): "The backup's line \(line) is not valid: \(reason). Nothing was written."
        case .addressMismatch(let name):
            "The backup's seed for '\(name)' is not the key of the address it names: the backup was altered. Nothing was written."
        case .phraseMismatch(let name, let account):
            "The backup's recovery-phrase root for '\(name)' does not give its seed at account \(account): the backup was altered. Nothing was written."
        case .noSuchIdentity(let name): "There is no identity '\(name)' to back up or restore; nothing was written."
        case .empty: "There is no identity to back up; nothing was written."
        case .differentKeyHere(let name, let here, let inBackup):
            "Identity '\(name)' here is \(here), and the backup's is \(inBackup); nothing was written."
        case .probeFailed(let name): "The restored key of '\(name)' did not sign and verify its probe; it was removed again."
        case .wasTPMBound(let names):
            "\(names.map { "'\($0)'" }.joined(separator: ", ")) \(names.count == 1 ? "was" : "were") bound to a TPM, and would be restored guarded by the PIN alone; nothing was written."
        case .changedSincePlan(let name):
            "Identity '\(name)' here changed since the restore was planned; nothing of it was written."
        case .restoreStopped(let restored, let name, let reason):
            "Restored \(restored.map { "'\($0)'" }.joined(separator: ", ")) (kept, each checked by its probe), then '\(name)' failed: \(reason)"
        case .outputExists(let path): "\(path) exists already; nothing was written."
        case .unusableOutput(let path, let reason): "Cannot write the backup to \(path): \(reason). Nothing was written."
        case .badRecipient(let place, let isIdentity):
            place.name + (isIdentity ? " is an age identity, a secret key, not a recipient (age1…); nothing was written."
                              : " is not an age recipient (age1…, or a plugin's age1NAME1…); nothing was written.")
        case .noRecipient: "The recipients file holds no recipient; nothing was written."
        }
    }
}
