import StellarKeys

/// What can go wrong moving a key from one machine's TPM to another's (`Keystore.wrapForTPMMove`,
/// `Keystore.importTPMMove`); a TPM's own refusal is a `TPMError` (`wrappedElsewhere` for a file this TPM cannot open).
public enum TPMMoveError: KeystoreError, Equatable {
    /// The file is not a keystore TPM-move (or move-target) file of a version this keystore reads.
    case malformed(what: String, reason: String)
    case futureVersion(what: String, version: Int)
    case noSuchIdentity(String)
    /// The key the target's TPM gave back is not the one the file names: refused, nothing written.
    case addressMismatch(inFile: String, unwrapped: String)
    case outputExists(path: String)
    /// The move-target file's storage key is not the one whose fingerprint was confirmed: the file is not the one the
    /// target machine wrote (swapped or changed on the way), and wrapping to it would hand the key to its maker.
    case fingerprintMismatch(inFile: String, confirmed: String)
    /// The transfer code is not 16 hex digits.
    case malformedTransferCode
    /// The transfer code is not the one the move file was made with; the TPM counted it towards its lockout.
    case wrongTransferCode(triesLeft: Int?)

    public var message: String {
        switch self {
        case .malformed(let what, let reason): "That is not a \(what) file: \(reason). Nothing was written."
        case .futureVersion(let what, let version):
            "That \(what) file is of version \(version), newer than this library reads; nothing was written."
        case .noSuchIdentity(let name): "There is no identity '\(name)' to move; nothing was written."
        case .addressMismatch(let inFile, let unwrapped):
            "The moved key is \(unwrapped), not \(inFile) as the file says; nothing was written."
        case .outputExists(let path): "\(path) exists already; choose another path. Nothing was written."
        case .malformedTransferCode: "A transfer code is 16 hex digits (xxxx-xxxx-xxxx-xxxx); nothing was written."
        case .wrongTransferCode(let triesLeft):
            "That is not the move file's transfer code (the TPM counts it as a wrong guess\(triesLeft.map { "; \($0) left before its lockout" } ?? "")); nothing was written."
        case .fingerprintMismatch(let inFile, let confirmed):
            "The move-target file's storage key has the fingerprint \(inFile), not \(confirmed) as confirmed: it is not the file the new machine wrote. Nothing was wrapped or written."
        }
    }
}
