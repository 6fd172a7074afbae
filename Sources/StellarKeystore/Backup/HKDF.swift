import StellarKeys

/// HKDF-SHA-256 (RFC 5869) with 32 bytes of output, all age ever asks of it. libsodium 1.0.18 (Debian 12's) has
/// no HKDF, so it is built here from HMAC-SHA-256: with one output block, Expand is a single HMAC.
enum HKDF {
    static let outputBytes = 32

    /// Extract(`salt`, `key`), then Expand(`info`, 32). An empty salt is HMAC's all-zero key, as RFC 5869 §2.2 says.
    static func sha256(key: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: String) -> SecureBytes {
        let pseudorandomKey = SecureBytes(count: Sodium.hmacSHA256Bytes) { prk in
            Sodium.hmacSHA256(key: salt, parts: [key], output: prk)
        }
        let info = Array(info.utf8) + [1]
        return pseudorandomKey.withUnsafeBytes { prk in
            info.withUnsafeBytes { info in
                SecureBytes(count: outputBytes) { Sodium.hmacSHA256(key: prk, parts: [info], output: $0) }
            }
        }
    }

    static func sha256(key: SecureBytes, salt: [UInt8], info: String) -> SecureBytes {
        key.withUnsafeBytes { key in salt.withUnsafeBytes { sha256(key: key, salt: $0, info: info) } }
    }
}
