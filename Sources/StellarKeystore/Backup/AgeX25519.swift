import StellarKeys

/// An age X25519 recipient, `age1…` (age.md, "The X25519 recipient type"): a Curve25519 public key.
package struct AgeX25519Recipient: AgeRecipient, Hashable, CustomStringConvertible {
    static let prefix = Array("age".utf8)
    static let stanzaType = "X25519"
    static let label = "age-encryption.org/v1/X25519"

    package let publicKey: [UInt8]

    init(publicKey: [UInt8]) {
        precondition(publicKey.count == Sodium.x25519Bytes)
        self.publicKey = publicKey
    }

    /// Reads `age1…` (Bech32, lower case, as age writes and reads it).
    package init(_ text: String) throws(AgeError) {
        let bytes = Array(text.utf8)
        let key: [UInt8]
        do throws(Bech32.Failure) {
            key = try bytes.withUnsafeBytes { bytes in Result { () throws(Bech32.Failure) in try Bech32.decode(bytes, prefix: Self.prefix) } }.get()
        } catch {
            throw .invalidRecipient(error == .wrongPrefix ? "an X25519 recipient begins with \"age1\"" : "its Bech32 is malformed")
        }
        guard key.count == Sodium.x25519Bytes else { throw .invalidRecipient("an X25519 key is 32 bytes") }
        self.init(publicKey: key)
    }

    package var description: String {
        String(decoding: publicKey.withUnsafeBytes { Bech32.encode(prefix: Self.prefix, data: $0) }, as: UTF8.self)
    }

    package func stanzas(wrapping fileKey: SecureBytes) throws(AgeError) -> [AgeStanza] {
        let ephemeralSecret = SecureBytes.random(count: Sodium.x25519ScalarBytes)
        var share = [UInt8](repeating: 0, count: Sodium.x25519Bytes)
        var sharedSecret: SecureBytes?
        ephemeralSecret.withUnsafeBytes { secret in
            share.withUnsafeMutableBytes { Sodium.x25519Base(scalar: secret, output: $0) }
            var agreed = false
            let shared = SecureBytes(count: Sodium.x25519Bytes) { out in
                agreed = publicKey.withUnsafeBytes { Sodium.x25519(scalar: secret, point: $0, output: out) }
            }
            if agreed { sharedSecret = shared }
        }
        // A recipient of small order gives an all-zero secret that anyone could compute: refuse it.
        guard let sharedSecret else { throw .invalidRecipient("its key is a point of small order") }
        let wrapKey = HKDF.sha256(key: sharedSecret, salt: share + publicKey, info: Self.label)
        return [AgeStanza(type: Self.stanzaType, arguments: [String(decoding: AgeBase64.encode(share), as: UTF8.self)],
                          body: FileKeyWrap.sealed(fileKey, with: wrapKey))]
    }
}

/// An age X25519 identity, `AGE-SECRET-KEY-1…`: the secret scalar that opens files encrypted to its `recipient`.
package struct AgeX25519Identity: AgeIdentity {
    static let prefix = Array("AGE-SECRET-KEY-".utf8)

    let secretKey: SecureBytes
    package let recipient: AgeX25519Recipient

    package init(secretKey: SecureBytes) {
        precondition(secretKey.count == Sodium.x25519ScalarBytes)
        self.secretKey = secretKey
        var publicKey = [UInt8](repeating: 0, count: Sodium.x25519Bytes)
        secretKey.withUnsafeBytes { secret in publicKey.withUnsafeMutableBytes { Sodium.x25519Base(scalar: secret, output: $0) } }
        recipient = AgeX25519Recipient(publicKey: publicKey)
    }

    package static func generate() -> AgeX25519Identity {
        AgeX25519Identity(secretKey: .random(count: Sodium.x25519ScalarBytes))
    }

    /// Reads `AGE-SECRET-KEY-1…` (Bech32, upper case, as age-keygen writes it) from `text`, which is a secret.
    package init(encoded text: UnsafeRawBufferPointer) throws(AgeError) {
        var key: [UInt8]
        do throws(Bech32.Failure) {
            key = try Bech32.decode(text, prefix: Self.prefix)
        } catch {
            throw .invalidIdentity(error == .wrongPrefix ? "an X25519 identity begins with \"AGE-SECRET-KEY-1\"" : "its Bech32 is malformed")
        }
        guard key.count == Sodium.x25519ScalarBytes else {
            Sodium.zero(&key)
            throw .invalidIdentity("an X25519 identity is 32 bytes")
        }
        self.init(secretKey: SecureBytes(consuming: &key))
    }

    package init(encoded text: SecureBytes) throws(AgeError) {
        self = try text.withUnsafeBytes { text in Result { () throws(AgeError) in try AgeX25519Identity(encoded: text) } }.get()
    }

    /// `AGE-SECRET-KEY-1…`, in guarded memory: it is the secret itself.
    package var encoded: SecureBytes {
        var text = secretKey.withUnsafeBytes { Bech32.encode(prefix: Self.prefix, data: $0, uppercase: true) }
        return SecureBytes(consuming: &text)
    }

    package func fileKey(from stanzas: [AgeStanza]) throws(AgeError) -> SecureBytes? {
        for stanza in stanzas where stanza.type == AgeX25519Recipient.stanzaType {
            guard stanza.arguments.count == 1, let share = AgeBase64.decode(stanza.arguments[0].utf8),
                  share.count == Sodium.x25519Bytes
            else { throw .malformedHeader("an X25519 stanza's argument is not one base64 32-byte share") }
            guard stanza.body.count == FileKeyWrap.bodyBytes else {
                throw .malformedHeader("an X25519 stanza's body is not 32 bytes")
            }
            var agreed = false
            let sharedSecret = SecureBytes(count: Sodium.x25519Bytes) { out in
                agreed = secretKey.withUnsafeBytes { secret in
                    share.withUnsafeBytes { Sodium.x25519(scalar: secret, point: $0, output: out) }
                }
            }
            // age.md: "If the shared secret is all 0x00 bytes, the identity implementation MUST abort."
            guard agreed else { throw .malformedHeader("an X25519 stanza's share is a point of small order") }
            let wrapKey = HKDF.sha256(key: sharedSecret, salt: share + recipient.publicKey, info: AgeX25519Recipient.label)
            if let fileKey = FileKeyWrap.opened(stanza.body, with: wrapKey) { return fileKey }
        }
        return nil
    }
}
