import StellarKeys

// The host's rule for a P-256 signature, read at stellar/rs-soroban-env v26.1.4, soroban-env-host/src/crypto/mod.rs,
// `ecdsa_signature_from_bytes`: 64 bytes r ‖ s, each in [1, n − 1] (`Signature::try_from`), and s not "high"
// (`s.is_high()`, s > (n − 1) / 2): a high-S signature is refused ("ECDSA signature 's' part is not normalized to
// low form"), so that (r, s) and (r, n − s), both valid ECDSA signatures of one digest, are not two signatures.

/// A P-256 ECDSA signature (r, s) as the network takes it: r ‖ s, 32 bytes each, big-endian, with s low. A TPM or
/// any other signer makes either s or n − s at random; this keeps the low one, the same signature.
package struct P256Signature: Sendable, Hashable {
    /// 32 bytes, big-endian, in [1, n − 1].
    package let r: [UInt8]
    /// 32 bytes, big-endian, in [1, (n − 1) / 2].
    package let s: [UInt8]

    /// The order n of P-256's base point (SEC 2, §2.4.2), big-endian.
    static let order = Hex.bytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!
    /// (n − 1) / 2: an s above it is high.
    static let halfOrder = Hex.bytes("7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a8")!

    /// From r and s as a signer gives them, big-endian, each at most 32 bytes (a shorter one is taken with its
    /// leading zero bytes left off, as a TPM's sized buffer may hold it). A high s becomes n − s. Refused: r or s
    /// zero or not below n, or longer than 32 bytes.
    package init(r: [UInt8], s: [UInt8]) throws {
        guard r.count <= 32 else { throw P256Error.signatureLength(r.count) }
        guard s.count <= 32 else { throw P256Error.signatureLength(s.count) }
        let r = [UInt8](repeating: 0, count: 32 - r.count) + r
        var s = [UInt8](repeating: 0, count: 32 - s.count) + s
        guard r.contains(where: { $0 != 0 }), P256PublicKey.isBelow(r, Self.order) else { throw P256Error.rOutOfRange }
        guard s.contains(where: { $0 != 0 }), P256PublicKey.isBelow(s, Self.order) else { throw P256Error.sOutOfRange }
        if P256PublicKey.isBelow(Self.halfOrder, s) { s = Self.subtract(Self.order, s) }
        self.r = r
        self.s = s
    }

    /// From r ‖ s, 64 bytes.
    package init(rawRepresentation bytes: [UInt8]) throws {
        guard bytes.count == 64 else { throw P256Error.signatureLength(bytes.count) }
        try self.init(r: Array(bytes[0..<32]), s: Array(bytes[32..<64]))
    }

    /// r ‖ s, s low: the `BytesN<64>` that `secp256r1_verify` takes.
    package var rawRepresentation: [UInt8] { r + s }

    /// a − b for big-endian numbers of the same length, a ≥ b. The numbers are public (a signature), so the
    /// branches on them leak nothing.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        precondition(a.count == b.count && !P256PublicKey.isBelow(a, b))
        var result = [UInt8](repeating: 0, count: a.count)
        var borrow = 0
        for index in stride(from: a.count - 1, through: 0, by: -1) {
            var digit = Int(a[index]) - Int(b[index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            result[index] = UInt8(digit)
        }
        return result
    }
}
