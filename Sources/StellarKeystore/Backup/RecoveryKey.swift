import StellarKeys

/// A backup's recovery key as a person sees and types it: the age X25519 identity `AGE-SECRET-KEY-1…` (74
/// characters, Bech32 with its checksum, so that a character copied wrong is found rather than taken), shown in
/// groups of four after its prefix, and read back whatever the spaces and case.
extension AgeX25519Identity {
    /// The key as typed: spaces, tabs and line breaks dropped, lower case taken as upper, then read as `encoded`.
    package init(typed: SecureBytes) throws(AgeError) {
        var length = 0
        let compact = typed.withUnsafeBytes { input in
            SecureBytes(count: input.count) { output in
                for byte in input where ![0x20, 0x09, 0x0A, 0x0D].contains(byte) {
                    output[length] = (0x61...0x7A).contains(byte) ? byte - 0x20 : byte
                    length += 1
                }
            }
        }
        try self.init(encoded: compact.slice(0..<length))
    }

    /// `AGE-SECRET-KEY-1` and then the rest in groups of four, a space before each, for a person to copy by hand.
    package var grouped: SecureBytes {
        let text = encoded
        let prefixLength = Self.prefix.count + 1  // "AGE-SECRET-KEY-" and Bech32's separator "1"
        let groups = (text.count - prefixLength + 3) / 4
        return text.withUnsafeBytes { input in
            SecureBytes(count: text.count + groups) { output in
                var offset = 0
                for index in 0..<input.count {
                    if index >= prefixLength, (index - prefixLength) % 4 == 0 {
                        output[offset] = 0x20
                        offset += 1
                    }
                    output[offset] = input[index]
                    offset += 1
                }
            }
        }
    }
}

extension AgeFile {
    /// Whether `file` is encrypted to a passphrase (its one stanza scrypt), so that a passphrase, not a key, is
    /// what to ask for. Its header is read as `decrypt` reads it.
    package static func isPassphraseEncrypted(_ file: [UInt8]) throws(AgeError) -> Bool {
        guard file.count <= maximumFileSize / 3 * 4 + maximumFileSize / 48 + 2 * AgeArmor.maximumWhitespace + 128 else {
            throw .tooLarge(limit: maximumFileSize)
        }
        let binary = AgeArmor.isArmored(file) ? try AgeArmor.dearmored(file) : file
        return try AgeHeader.parse(binary).stanzas.contains { $0.type == AgePassphrase.stanzaType }
    }
}
