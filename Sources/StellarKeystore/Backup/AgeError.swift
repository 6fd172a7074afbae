import StellarKeys
import StellarText

/// Why an age file could not be written or read. Each case is a different fault, so that a person (and a test)
/// can tell a wrong key from a damaged file: the header's MAC fails only when a key did open the file, the payload's
/// tags only when the header was intact. Messages never repeat an identity or a passphrase.
package enum AgeError: KeystoreError, Equatable {
    // The file's shape.
    case notAgeFile
    case unsupportedVersion(String)
    case malformedHeader(String)
    case malformedArmor(String)
    case tooLarge(limit: Int)
    // Keys.
    case noMatchingIdentity(stanzaTypes: [String])
    case wrongPassphrase
    case workFactorTooHigh(Int, limit: Int)
    case scryptFailed
    // Integrity, once a key opened the file.
    case headerAltered
    case payloadAltered(chunk: Int)
    case finalChunkAltered
    case truncated
    case emptyFinalChunk
    case trailingData
    // Encrypting, and reading recipients and identities.
    case noRecipients
    case passphraseNotAlone
    case invalidRecipient(String)
    case invalidIdentity(String)
    // Age plugins (age-plugin.md), each named by its plugin's name (`yubikey` for `age-plugin-yubikey`).
    case pluginNotFound(String)
    case pluginFailed(String, reason: String)
    case pluginTimedOut(String, seconds: Int)
    case pluginBrokeProtocol(String, reason: String)
    /// The plugin's own error (`error`), in its words; `unanswered` names a request of its that nobody could answer.
    case pluginRefused(String, message: String, unanswered: String?)

    package var message: String {
        switch self {
        case .notAgeFile:
            "That is not an age file (it does not begin with \"age-encryption.org/\")."
        case .unsupportedVersion(let version):
            "The age file is of version \(TerminalText.escaped(version, limit: 40)); only age-encryption.org/v1 is read here."
        case .malformedHeader(let reason):
            "The age file's header is malformed: \(reason)."
        case .malformedArmor(let reason):
            "The age file's ASCII armor is malformed: \(reason)."
        case .tooLarge(let limit):
            "An age file here is at most \(limit >> 20) MiB, and this one (or the plaintext to encrypt) is larger."
        case .noMatchingIdentity(let types):
            "None of the identities given opens this age file (it is encrypted to: "
                + types.map { TerminalText.escaped($0, limit: 40) }.joined(separator: ", ") + ")."
        case .wrongPassphrase:
            "The passphrase does not open this age file."
        case .workFactorTooHigh(let factor, let limit):
            "The age file asks for an scrypt work factor of \(factor), over the \(limit) accepted here (it would take too long or too much memory)."
        case .scryptFailed:
            "scrypt could not run (not enough memory for the file's work factor)."
        case .headerAltered:
            "The age file's header has been altered: its MAC does not match (the key opened it, but the header was changed)."
        case .payloadAltered(let chunk):
            "The age file's payload has been altered or damaged: chunk \(chunk) does not authenticate."
        case .finalChunkAltered:
            "The age file's last chunk does not authenticate: the file is cut short, or its end was altered."
        case .truncated:
            "The age file is truncated: it ends at a chunk boundary before its final chunk."
        case .emptyFinalChunk:
            "The age file ends with an empty chunk after a full one, which age never writes."
        case .trailingData:
            "The age file has data after its final chunk."
        case .noRecipients:
            "An age file needs at least one recipient."
        case .passphraseNotAlone:
            "A passphrase must be an age file's only recipient (age-encryption.org/v1, scrypt)."
        case .invalidRecipient(let reason):
            "That is not an age recipient: \(reason)."
        case .invalidIdentity(let reason):
            "That is not an age identity: \(reason)."
        case .pluginNotFound(let name):
            "The age plugin age-plugin-\(name) is not installed: no directory of PATH has it."
        case .pluginFailed(let name, let reason):
            "The age plugin age-plugin-\(name) \(reason)."
        case .pluginTimedOut(let name, let seconds):
            "The age plugin age-plugin-\(name) said nothing for \(seconds) seconds and was stopped."
        case .pluginBrokeProtocol(let name, let reason):
            "The age plugin age-plugin-\(name) broke the plugin protocol: \(reason); it was stopped."
        case .pluginRefused(let name, let message, let unanswered):
            "The age plugin age-plugin-\(name) failed: \(message)"
                + (unanswered.map { " (it asked for \($0), and there was nobody to ask)" } ?? "") + "."
        }
    }
}
