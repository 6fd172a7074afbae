import StellarKeys

/// age-encryption.org/v1 files, whole, in memory: encrypted to X25519 recipients (`AgeX25519Recipient`) or to a
/// passphrase (`AgePassphrase`), readable by the age tool and reading what it writes.
///
/// ```swift
/// let identity = AgeX25519Identity.generate()
/// let file = try AgeFile.encrypt(plaintext, to: [identity.recipient])
/// let opened = try AgeFile.decrypt(file, with: [identity])
/// ```
///
/// Written from the specification, C2SP's age.md at commit 5ba5ee830903e91240fc6f9f3a7a9293d49e69c9, and checked
/// against the reference implementation, FiloSottile/age at 10561a774f9f6de47c8d23ddc58537b6a18b083d, whose
/// strictness it follows where the specification leaves a choice (armor whitespace, scrypt's work-factor ceiling).
/// Decryption releases all of the plaintext or none of it: the file is bounded (`maximumFileSize`), so there is no
/// need to stream, and no caller ever sees the first chunks of a file whose end was cut or altered.
package enum AgeFile {
    /// The largest (binary) age file read or written here: backups of keys are kilobytes; this leaves room for
    /// thousands of them and keeps a hostile file from taking the machine's memory.
    package static let maximumFileSize = 64 << 20
    /// The largest plaintext encrypted here, so that its file is within `maximumFileSize` (headers, tags).
    package static let maximumPlaintextSize = 63 << 20

    /// `plaintext` encrypted to every one of `recipients`, armored (PEM, for 7-bit channels) when asked.
    package static func encrypt(_ plaintext: SecureBytes, to recipients: [any AgeRecipient], armored: Bool = false) throws(AgeError) -> [UInt8] {
        guard !recipients.isEmpty else { throw .noRecipients }
        guard plaintext.count <= maximumPlaintextSize else { throw .tooLarge(limit: maximumFileSize) }
        let fileKey = SecureBytes.random(count: FileKeyWrap.fileKeyBytes)
        var stanzas: [AgeStanza] = []
        for recipient in recipients { stanzas += try recipient.stanzas(wrapping: fileKey) }
        // age.md: a passphrase stanza must be alone, so that a passphrase-encrypted file is known to come from
        // someone who knew the passphrase.
        guard !stanzas.contains(where: { $0.type == AgePassphrase.stanzaType }) || stanzas.count == 1 else {
            throw .passphraseNotAlone
        }
        var file = AgeHeader.encoded(stanzas)
        file += [UInt8(ascii: " ")] + AgeBase64.encode(headerMAC(of: file[...], fileKey: fileKey)) + [UInt8(ascii: "\n")]
        file += AgePayload.sealed(plaintext, fileKey: fileKey)
        return armored ? AgeArmor.armored(file) : file
    }

    /// The plaintext of `file` (binary or armored), opened by the first of `identities` that a stanza is addressed to.
    package static func decrypt(_ file: [UInt8], with identities: [any AgeIdentity]) throws(AgeError) -> SecureBytes {
        // Armor adds a third and a line feed per 64 columns: its limit is the binary one, decoded.
        guard file.count <= maximumFileSize / 3 * 4 + maximumFileSize / 48 + 2 * AgeArmor.maximumWhitespace + 128 else {
            throw .tooLarge(limit: maximumFileSize)
        }
        let binary = AgeArmor.isArmored(file) ? try AgeArmor.dearmored(file) : file
        guard binary.count <= maximumFileSize else { throw .tooLarge(limit: maximumFileSize) }

        let header = try AgeHeader.parse(binary)
        let isPassphraseFile = header.stanzas.contains { $0.type == AgePassphrase.stanzaType }
        guard !isPassphraseFile || header.stanzas.count == 1 else {
            throw .malformedHeader("an scrypt stanza is not the header's only one")
        }
        var fileKey: SecureBytes?
        for identity in identities {
            fileKey = try identity.fileKey(from: header.stanzas)
            if fileKey != nil { break }
        }
        guard let fileKey else {
            throw isPassphraseFile && identities.contains(where: { $0 is AgePassphrase })
                ? .wrongPassphrase : .noMatchingIdentity(stanzaTypes: header.stanzas.map(\.type))
        }
        // A key opened a stanza; only now can the MAC be checked, and a mismatch means the header was changed.
        let mac = headerMAC(of: header.authenticatedBytes, fileKey: fileKey)
        let macMatches = mac.withUnsafeBytes { a in header.mac.withUnsafeBytes { Sodium.constantTimeEqual(a, $0) } }
        guard macMatches else { throw .headerAltered }
        return try AgePayload.opened(binary[header.payloadOffset...], fileKey: fileKey)
    }

    /// HMAC-SHA-256 under HKDF-SHA-256(file key, empty salt, "header") of the header up to "---" (age.md, "Header MAC").
    private static func headerMAC(of header: ArraySlice<UInt8>, fileKey: SecureBytes) -> [UInt8] {
        let key = HKDF.sha256(key: fileKey, salt: [], info: "header")
        var mac = [UInt8](repeating: 0, count: Sodium.hmacSHA256Bytes)
        key.withUnsafeBytes { key in
            header.withUnsafeBytes { header in mac.withUnsafeMutableBytes { Sodium.hmacSHA256(key: key, parts: [header], output: $0) } }
        }
        return mac
    }
}
