/// SEP-53 signed messages: Ed25519 over SHA-256("Stellar Signed Message:\n" + message), so that a signed message
/// can never be mistaken for a signed transaction.
public enum SignedMessage {
    public static let prefix = Array("Stellar Signed Message:\n".utf8)

    /// The 32-byte hash that is signed for `message`.
    public static func hash(of message: UnsafeRawBufferPointer) -> [UInt8] {
        prefix.withUnsafeBytes { Sodium.sha256(parts: [$0, message]) }
    }

    public static func hash(of message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { hash(of: $0) }
    }
}

extension KeyPair {
    /// The SEP-53 signature of `message` (64 bytes).
    public func messageSignature(for message: [UInt8]) -> [UInt8] {
        signature(for: SignedMessage.hash(of: message))
    }

    public func messageSignature(for message: UnsafeRawBufferPointer) -> [UInt8] {
        signature(for: SignedMessage.hash(of: message))
    }
}

extension PublicKey {
    public func isValidMessageSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        isValidSignature(signature, for: SignedMessage.hash(of: message))
    }
}
