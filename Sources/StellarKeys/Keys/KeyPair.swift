/// An Ed25519 signing key pair. The secret half lives only in guarded memory and is never printed or compared.
public struct KeyPair: Sendable {
    public let publicKey: PublicKey
    /// libsodium's 64-byte secret key: the 32-byte seed followed by the public key.
    private let secretKey: SecureBytes

    /// A new random key pair.
    public static func random() -> KeyPair {
        try! KeyPair(seed: SecureBytes.random(count: Sodium.signSeedBytes))
    }

    /// The key pair of a 32-byte Ed25519 seed (RFC 8032 §5.1.5).
    public init(seed: SecureBytes) throws {
        try self.init(seedAt: 0..<seed.count, of: seed)
    }

    /// The key pair of the 32-byte seed at `range` of `bytes`, a decrypted record that holds one (a vault's, a
    /// session's): read in place, since a copy of its own would be one more guarded allocation, each of which
    /// is half a dozen system calls on every signature.
    package init(seedAt range: Range<Int>, of bytes: SecureBytes) throws {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard range.count == Sodium.signSeedBytes else {
            throw KeyError.invalidLength(expected: Sodium.signSeedBytes, found: range.count)
        }
        var publicKey = [UInt8](repeating: 0, count: Sodium.signPublicKeyBytes)
        secretKey = SecureBytes(count: Sodium.signSecretKeyBytes) { secret in
            bytes.withUnsafeBytes { bytes in
                let seed = UnsafeRawBufferPointer(rebasing: bytes[range])
                publicKey.withUnsafeMutableBytes { Sodium.signKeyPair(seed: seed, publicKey: $0, secretKey: secret) }
            }
        }
        self.publicKey = try PublicKey(rawRepresentation: publicKey)
    }

    /// The key pair of a secret seed StrKey (`S…`) given as ASCII bytes in guarded memory.
    public init(secretSeed: SecureBytes) throws {
        let seed = try secretSeed.withUnsafeBytes { text throws in
            try StrKey.withDecoded(text) { kind, payload throws in
                guard kind == .secretSeed else { throw StrKeyError.wrongKind(expected: .secretSeed, found: kind) }
                return SecureBytes(copying: payload)
            }
        }
        try! self.init(seed: seed)  // a decoded secret seed is always 32 bytes
    }

    /// The key pair of a secret seed StrKey (`S…`). Prefer `init(secretSeed: SecureBytes)`: a `String` cannot be
    /// zeroed after use.
    public init(secretSeed: String) throws {
        var ascii = Array(secretSeed.utf8)
        try self.init(secretSeed: SecureBytes(consuming: &ascii))
    }

    /// The 32-byte seed, in guarded memory.
    public var seed: SecureBytes {
        secretKey.slice(0..<Sodium.signSeedBytes)
    }

    /// The secret seed StrKey (`S…`) as ASCII bytes in guarded memory, for a deliberate backup.
    public func secretSeedStrKey() -> SecureBytes {
        secretKey.withUnsafeBytes { secret in
            let seed = UnsafeRawBufferPointer(rebasing: secret[0..<Sodium.signSeedBytes])
            return SecureBytes(count: StrKey.encodedCount(payloadCount: seed.count)) {
                StrKey.encode(.secretSeed, payload: seed, into: $0)
            }
        }
    }

    /// The detached Ed25519 signature of `message` (64 bytes).
    public func signature(for message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { signature(for: $0) }
    }

    public func signature(for message: UnsafeRawBufferPointer) -> [UInt8] {
        secretKey.withUnsafeBytes { Sodium.signature(message: message, secretKey: $0) }
    }
}

extension KeyPair: Equatable {
    /// Two key pairs are equal when their public keys are: the public key is a function of the seed, and
    /// comparing public keys keeps the secret out of the comparison.
    public static func == (lhs: KeyPair, rhs: KeyPair) -> Bool { lhs.publicKey == rhs.publicKey }
}

extension KeyPair: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "KeyPair(\(publicKey.accountID), secret redacted)" }
    public var debugDescription: String { description }
}
