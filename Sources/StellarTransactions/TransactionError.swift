import StellarKeys
import StellarText
/// What can be wrong with a transaction to sign, or with the network it is for. All say the input is wrong, but
/// `noNetwork`, which says the caller did not name the network at all.
public enum TransactionError: KeystoreError, Equatable {
    case empty
    case tooLarge(Int)
    case notBase64
    /// Hex digits only, which is not what an envelope is given as.
    case hexNotBase64
    case invalidXDR(XDRError)
    /// The envelope already has the 20 signatures XDR allows.
    case full
    case unknownNetwork(String)
    case noNetwork
    case conflictingNetworks

    public var message: String {
        switch self {
        case .empty:
            "The transaction envelope is empty."
        case .tooLarge(let count):
            "The transaction envelope is \(count) bytes, more than the 1 MiB that is read."
        case .notBase64:
            "The transaction envelope is not base64."
        case .hexNotBase64:
            "The transaction envelope looks like hex; give it as base64 XDR, as stellar-cli and the SDKs print it (e.g. xxd -r -p | base64 -w0)."
        case .invalidXDR(let error):
            "The transaction envelope is not valid XDR: at byte \(error.offset), expected \(error.expected)."
        case .full:
            "The envelope already has 20 signatures, the most XDR allows; nothing was signed."
        case .unknownNetwork(let name):
            "Unknown network '\(TerminalText.escaped(name))'."
        case .noNetwork:
            "No network was given, and none is ever guessed."
        case .conflictingNetworks:
            "STELLAR_NETWORK and STELLAR_NETWORK_PASSPHRASE name different networks; set only one."
        }
    }

}
