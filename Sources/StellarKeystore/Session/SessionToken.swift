import StellarKeys
import StellarTransactions
/// The half of a signed-in session that the caller holds: which session file, and the key that decrypts it.
///
/// The other half, the session file, holds the seed encrypted under `key`. Neither half alone gives the seed:
/// the token has no seed in it, and the file cannot be opened without the token's key.
///
/// Text form: `kss1-` + 32 hex digits of session id + `-` + 64 hex digits of key (shell-safe, fixed length).
public struct SessionToken: Sendable {
    static let prefix = "kss1-"
    static let idBytes = 16

    public let id: [UInt8]
    let key: SecureBytes

    static func random() -> SessionToken {
        SessionToken(id: Sodium.randomBytes(count: idBytes), key: .random(count: Sodium.secretBoxKeyBytes))
    }

    private init(id: [UInt8], key: SecureBytes) {
        self.id = id
        self.key = key
    }

    public init(_ text: String) throws {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.hasPrefix(Self.prefix), parts.count == 3,
              let id = Hex.bytes(String(parts[1])), id.count == Self.idBytes,
              var key = Hex.bytes(String(parts[2])), key.count == Sodium.secretBoxKeyBytes
        else { throw SessionError.malformed }
        self.id = id
        self.key = SecureBytes(consuming: &key)
    }

    /// The token as text, to hand to the shell. It is a credential: print it only where the user asked for it.
    public var stringValue: String {
        Self.prefix + Hex.string(id) + "-" + key.withUnsafeBytes { Hex.string(Array($0)) }
    }

    var fileName: String { Hex.string(id) + ".session" }
}

extension SessionToken: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SessionToken(\(Hex.string(id)), key redacted)" }
    public var debugDescription: String { description }
}
