/// What every error of these libraries offers: one line for a person, saying what happened, in words an app can
/// show. It never contains a secret or a PIN, and never a command or an option of the `keystore` tool: the tool
/// adds those itself, with its exit codes.
public protocol KeystoreError: Error, CustomStringConvertible {
    var message: String { get }
}

extension KeystoreError {
    public var description: String { message }
}
