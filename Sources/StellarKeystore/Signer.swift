import StellarKeys
import StellarTransactions
/// An opened identity: its key, for as long as the value lives.
public struct Signer: Sendable {
    public let name: IdentityName
    let keyPair: KeyPair
    /// Whether it was made from a recovery phrase; nil when opened from a session, which does not say.
    public let isFromPhrase: Bool?

    package init(name: IdentityName, keyPair: KeyPair, isFromPhrase: Bool?) {
        self.name = name
        self.keyPair = keyPair
        self.isFromPhrase = isFromPhrase
    }

    public var publicKey: PublicKey { keyPair.publicKey }
    public var address: String { keyPair.publicKey.accountID }

    /// A raw Ed25519 signature of `bytes` (64 bytes), e.g. of a transaction hash.
    public func sign(_ bytes: [UInt8]) -> [UInt8] { keyPair.signature(for: bytes) }
    public func sign(_ bytes: UnsafeRawBufferPointer) -> [UInt8] { keyPair.signature(for: bytes) }

    /// A SEP-53 message signature (64 bytes).
    public func signMessage(_ message: [UInt8]) -> [UInt8] { keyPair.messageSignature(for: message) }
    public func signMessage(_ message: UnsafeRawBufferPointer) -> [UInt8] { keyPair.messageSignature(for: message) }

    /// The secret seed StrKey (`S…`) in guarded memory, for a deliberate backup.
    public func exportSecretSeed() -> SecureBytes { keyPair.secretSeedStrKey() }
}

extension Signer: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "Signer(\(name), \(address), key redacted)" }
    public var debugDescription: String { description }
}
