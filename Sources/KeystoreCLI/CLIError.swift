import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

/// Errors of the command line itself (input shape, refusals), with the same one-line, exit-code contract as the
/// library's.
enum CLIError: CommandLineError {
    case secretOnCommandLine(String)
    case pinOnCommandLine
    case invalidHex
    case noTerminal(what: String, alternatives: String)
    case unreadableSecret(source: String, reason: String)
    /// A payload or envelope file that does not exist or cannot be read: the input is wrong, not the system.
    case unreadableInput(source: String, reason: String)
    /// An input file that is not a regular file (a FIFO, a directory, a device): refused before a byte is read.
    case notRegularInput(source: String, kind: String)
    /// A FIFO or pipe given as an input file that ended before a byte came: no writer, or one that wrote nothing.
    case nothingWritten(source: String)
    case secretLineTooLong(source: String)
    case conflictingOptions(String)
    /// A secret that would go to a pipe or a file, where no person reads it: what it is, and what to do instead.
    case secretToNonTerminal(String, instead: String)
    case codeNotDelivered(reason: String)
    case backupKeyNotDelivered(reason: String)
    /// `advice`: what to do instead, where there is something (a payload to sign: its hash).
    case inputTooLarge(source: String, limit: Int, advice: String? = nil)
    case emptyPayload(source: String, verb: String)
    case malformedSignature
    case malformedBase64
    /// `verify`: the signature does not match.
    case invalidSignature
    /// Some of a batch's items failed (each said on its own line): how many, of how many, and what that means.
    case someFailed(Int, of: Int, String)
    /// `signup --import`: the seed's own error, restated so that it cannot be mistaken for a PIN problem.
    case invalidImportedSeed(reason: String)
    /// `policy check`: a request would be refused or asked about.
    case policyWouldNotSignEvery

    var message: String {
        switch self {
        case .secretOnCommandLine(let what):
            "Refusing to read \(what) (the command line is visible to other users)."
        case .pinOnCommandLine:
            "A PIN is never taken from the command line (other users can see it); use \(PINOptions.alternatives), or type it at the prompt."
        case .invalidHex:
            "The payload is not valid hex (an even number of 0-9, a-f)."
        case .noTerminal(let what, let alternatives):
            "There is no terminal to ask for \(what) on; pass it with \(alternatives)."
        case .unreadableSecret(let source, let reason):
            "Cannot read from \(source): \(reason)."
        case .unreadableInput(let source, let reason):
            "Cannot read \(source): \(reason)."
        case .notRegularInput(let source, let kind):
            "\(TerminalText.escaped(source, limit: nil)) is \(kind), not a regular file or a pipe; it was not read."
        case .nothingWritten(let source):
            "Nothing was written to \(TerminalText.escaped(source, limit: nil)) (a FIFO or pipe with no writer, or an empty one)."
        case .secretLineTooLong(let source):
            "The line read from \(source) is too long to be a PIN, a seed or a recovery phrase; check what is being passed."
        case .conflictingOptions(let options):
            "Use only one of \(options)."
        case .secretToNonTerminal(let what, let instead):
            "Refusing to print \(what) to a pipe or file; \(instead)"
        case .codeNotDelivered(let reason):
            "Could not write the lockout code to standard output (\(reason)), so the TPM's lockout authorization was set back to empty: nothing was changed."
        case .backupKeyNotDelivered(let reason):
            "Could not write the backup's new key to standard output (\(reason)), so the backup was not written (a file there stays as it was) and nothing was recorded."
        case .inputTooLarge(let source, let limit, let advice):
            // A path as given (a capital would name another file); a limit under a MiB in KiB.
            "\(source == "standard input" ? "Standard input" : source) is larger than "
                + (limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB") + ", the most keystore reads" + (advice.map { "; \($0)" } ?? "") + "."
        case .emptyPayload(let source, let verb):
            "\(source.prefix(1).uppercased() + source.dropFirst()) is empty, so there is nothing to \(verb) (did the step before fail?); to \(verb) an empty payload, pass --hex ''."
        case .malformedSignature: "The signature is not 64 bytes of base64 or 128 hex digits."
        case .malformedBase64: "The payload is not valid base64."
        case .invalidSignature: "The signature does not match this message and address."
        case .someFailed(let failed, let total, let what): "\(failed) of \(total) \(what)"
        case .invalidImportedSeed(let reason): "The imported secret seed is not valid: \(reason)"
        case .policyWouldNotSignEvery: "The policy would not sign every request."
        }
    }

    /// Refuses `secret` to a pipe or a file, where no person reads it, unless the command's flag `allowed` says so.
    static func refuseNonTerminal(for secret: String, unless allowed: Bool, instead: String) throws {
        if !allowed && isatty(STDOUT_FILENO) == 0 { throw secretToNonTerminal(secret, instead: instead) }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .secretOnCommandLine, .pinOnCommandLine, .secretToNonTerminal: .refused
        case .codeNotDelivered, .backupKeyNotDelivered: .outputFailed
        // A PIN file or descriptor that cannot be read is a wrong input, as a --file is: one code for both.
        case .invalidHex, .secretLineTooLong, .inputTooLarge, .emptyPayload, .unreadableInput, .notRegularInput, .nothingWritten, .unreadableSecret,
             .malformedSignature, .malformedBase64, .someFailed, .invalidImportedSeed: .invalidInput
        case .invalidSignature: .invalidSignature
        case .policyWouldNotSignEvery: .policyRefused
        case .noTerminal, .conflictingOptions: .usage
        }
    }
}
