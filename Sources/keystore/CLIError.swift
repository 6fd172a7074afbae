import StellarKeystore

/// Errors of the command line itself (input shape, refusals), with the same one-line, exit-code contract as the
/// library's.
enum CLIError: KeystoreError {
    case secretOnCommandLine(String)
    case invalidHex

    var message: String {
        switch self {
        case .secretOnCommandLine(let what):
            "Refusing to read \(what) (the command line is visible to other users)."
        case .invalidHex:
            "The payload is not valid hex (an even number of 0-9, a-f)."
        }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .secretOnCommandLine: .refused
        case .invalidHex: .invalidInput
        }
    }
}
