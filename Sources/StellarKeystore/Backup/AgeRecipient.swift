import StellarKeys

/// Whom an age file is encrypted to: each recipient wraps the file key into its own stanzas (age.md, "Recipient
/// stanza"). A recipient is public; what opens the file again is its `AgeIdentity`.
package protocol AgeRecipient: Sendable {
    func stanzas(wrapping fileKey: SecureBytes) throws(AgeError) -> [AgeStanza]
}

/// What opens an age file: the file key from the stanza addressed to this identity, nil when no stanza is (other
/// stanzas are ignored, as age.md asks). It throws only when a stanza of its own type is malformed.
package protocol AgeIdentity: Sendable {
    func fileKey(from stanzas: [AgeStanza]) throws(AgeError) -> SecureBytes?
}

/// The ChaCha20-Poly1305 wrap of a file key that the X25519 and scrypt stanzas share: a fixed all-zero nonce,
/// which is safe because each wrap key is used once (a fresh ephemeral share or salt each time).
enum FileKeyWrap {
    static let fileKeyBytes = 16
    static let bodyBytes = fileKeyBytes + 16
    private static let zeroNonce = [UInt8](repeating: 0, count: 12)

    static func sealed(_ fileKey: SecureBytes, with wrapKey: SecureBytes) -> [UInt8] {
        fileKey.withUnsafeBytes { key in
            wrapKey.withUnsafeBytes { Sodium.chaCha20Poly1305Seal(plaintext: key, nonce: zeroNonce, key: $0) }
        }
    }

    /// The file key in `body`, nil when it does not authenticate under `wrapKey`. The body's length is checked
    /// before anything else by the caller, as age.md asks against partitioning oracles.
    static func opened(_ body: [UInt8], with wrapKey: SecureBytes) -> SecureBytes? {
        precondition(body.count == bodyBytes)
        var opened = false
        let fileKey = SecureBytes(count: fileKeyBytes) { out in
            opened = wrapKey.withUnsafeBytes { key in
                body.withUnsafeBytes { Sodium.chaCha20Poly1305Open(ciphertext: $0, nonce: zeroNonce, key: key, plaintext: out) }
            }
        }
        return opened ? fileKey : nil
    }
}
