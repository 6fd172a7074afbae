import StellarKeys

/// A passphrase as an age recipient and identity (age.md, "The scrypt recipient type"): the file key wrapped under
/// scrypt(passphrase, "age-encryption.org/v1/scrypt" ‖ salt, N = 2^workFactor, r = 8, p = 1).
///
/// Whether a passphrase is strong enough for what it protects is the caller's judgement; this type only keeps
/// the scrypt cost bounded when reading, because the work factor is the file's to choose, not ours.
package struct AgePassphrase: AgeRecipient, AgeIdentity {
    static let stanzaType = "scrypt"
    static let label = Array("age-encryption.org/v1/scrypt".utf8)
    static let saltBytes = 16
    /// age's own choice for encrypting (about a second and 256 MiB).
    package static let defaultWorkFactor = 18
    /// age's own ceiling for decrypting (2^22 · 1 KiB = 4 GiB and some seconds): every file age writes opens here.
    package static let defaultMaximumWorkFactor = 22

    let passphrase: SecureBytes
    /// log2 N when encrypting.
    package let workFactor: Int
    /// The largest log2 N a file may ask for when decrypting.
    package let maximumWorkFactor: Int

    package init(_ passphrase: SecureBytes, workFactor: Int = defaultWorkFactor, maximumWorkFactor: Int = defaultMaximumWorkFactor) {
        precondition((1...30).contains(workFactor) && (1...30).contains(maximumWorkFactor))
        self.passphrase = passphrase
        self.workFactor = workFactor
        self.maximumWorkFactor = maximumWorkFactor
    }

    package func stanzas(wrapping fileKey: SecureBytes) throws(AgeError) -> [AgeStanza] {
        let salt = Sodium.randomBytes(count: Self.saltBytes)
        let wrapKey = try self.wrapKey(salt: salt, workFactor: workFactor)
        return [AgeStanza(type: Self.stanzaType,
                          arguments: [String(decoding: AgeBase64.encode(salt), as: UTF8.self), String(workFactor)],
                          body: FileKeyWrap.sealed(fileKey, with: wrapKey))]
    }

    /// `AgeFile` has already refused a header where an scrypt stanza is not alone.
    package func fileKey(from stanzas: [AgeStanza]) throws(AgeError) -> SecureBytes? {
        guard let stanza = stanzas.first(where: { $0.type == Self.stanzaType }) else { return nil }
        guard stanza.arguments.count == 2, let salt = AgeBase64.decode(stanza.arguments[0].utf8), salt.count == Self.saltBytes
        else { throw .malformedHeader("an scrypt stanza's arguments are not a base64 16-byte salt and a work factor") }
        // age.md: a decimal number of digits only, with no leading zero (^[1-9][0-9]*$).
        let factorText = stanza.arguments[1]
        guard let first = factorText.utf8.first, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first),
              factorText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { throw .malformedHeader("an scrypt stanza's work factor is not a decimal number without leading zeros") }
        guard factorText.utf8.count <= 2, let factor = Int(factorText), factor <= maximumWorkFactor else {
            throw .workFactorTooHigh(Int(factorText.prefix(6)) ?? Int.max, limit: maximumWorkFactor)
        }
        guard stanza.body.count == FileKeyWrap.bodyBytes else { throw .malformedHeader("an scrypt stanza's body is not 32 bytes") }
        return FileKeyWrap.opened(stanza.body, with: try wrapKey(salt: salt, workFactor: factor))
    }

    private func wrapKey(salt: [UInt8], workFactor: Int) throws(AgeError) -> SecureBytes {
        var succeeded = false
        let key = SecureBytes(count: Sodium.chaCha20Poly1305KeyBytes) { out in
            succeeded = passphrase.withUnsafeBytes {
                Sodium.scrypt(password: $0, salt: Self.label + salt, logN: workFactor, r: 8, p: 1, output: out)
            }
        }
        guard succeeded else { throw .scryptFailed }
        return key
    }
}
