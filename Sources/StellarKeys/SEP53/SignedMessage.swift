/// SEP-53 signed messages: Ed25519 over SHA-256("Stellar Signed Message:\n" + message), so that a signed message
/// can never be mistaken for a signed transaction.
package enum SignedMessage {
    package static let prefix = Array("Stellar Signed Message:\n".utf8)

    /// The 32-byte hash that is signed for `message`.
    package static func hash(of message: UnsafeRawBufferPointer) -> [UInt8] {
        prefix.withUnsafeBytes { Sodium.sha256(parts: [$0, message]) }
    }

    package static func hash(of message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { hash(of: $0) }
    }

    /// The message that text typed or piped on standard input stands for: without one final newline (`\n`, or
    /// `\r\n`), as `stellar message sign` reads it, so that `echo hi` piped to either signer signs the same
    /// bytes. A file or base64 is taken byte for byte instead.
    package static func fromStandardInput(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.last == 0x0A else { return bytes }
        return Array(bytes.dropLast(bytes.dropLast().last == 0x0D ? 2 : 1))
    }
}

extension KeyPair {
    /// The SEP-53 signature of `message` (64 bytes).
    package func messageSignature(for message: [UInt8]) -> [UInt8] {
        signature(for: SignedMessage.hash(of: message))
    }

    package func messageSignature(for message: UnsafeRawBufferPointer) -> [UInt8] {
        signature(for: SignedMessage.hash(of: message))
    }
}

extension PublicKey {
    public func isValidMessageSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        isValidSignature(signature, for: SignedMessage.hash(of: message))
    }
}
