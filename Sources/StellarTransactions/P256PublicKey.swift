import StellarKeys

// A P-256 key as Soroban names it, read at stellar/rs-soroban-env v26.1.4, soroban-env-host/src/crypto/mod.rs
// (`secp256r1_decode_sec1_uncompressed_pubkey`: the SEC1 tag must be 0x04, uncompressed, and the point on the curve)
// and at OpenZeppelin/stellar-contracts 8af46e2c3ba3501ff6ddd0a5d72290e410ace9ca, packages/accounts/src/verifiers/
// webauthn.rs (`canonicalize_key`: a WebAuthn signer's `key_data` is the 65-byte point, then an optional credential
// id that the verifier ignores) and smart_account/storage.rs (`MAX_EXTERNAL_KEY_SIZE`).

/// A NIST P-256 (secp256r1) public key as an account contract names it: the 65-byte uncompressed SEC1 point
/// 0x04 ‖ x ‖ y that the host's `secp256r1_verify` takes, and, for a WebAuthn signer, the credential id registered
/// after it. A smart account matches its signers by these exact bytes (`keyData`), so a key registered with a
/// credential id signs with it.
public struct P256PublicKey: Sendable, Hashable {
    /// 0x04 ‖ x ‖ y, big-endian coordinates.
    public let point: [UInt8]
    /// The WebAuthn credential id registered after the point (empty when none): not part of the key, but of the
    /// signer's identity in the account.
    public let credentialID: [UInt8]

    /// The size of the uncompressed point.
    public static let pointSize = 65

    /// The field prime p of P-256 (SEC 2, §2.4.2), big-endian: each coordinate is below it.
    static let fieldPrime = Hex.bytes("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")!

    /// Refused: a point that is not 65 bytes, not uncompressed (0x04 first), or with a coordinate not below p;
    /// key data longer than a smart account registers (`SmartAccountCredential.maximumExternalKeySize`). Whether
    /// the point is on the curve is not checked here: the host checks it when it verifies.
    public init(point: [UInt8], credentialID: [UInt8] = []) throws {
        guard point.count == Self.pointSize else { throw P256Error.keyLength(point.count) }
        guard point[0] == 0x04 else { throw P256Error.keyNotUncompressed(point[0]) }
        guard Self.isBelow(Array(point[1..<33]), Self.fieldPrime), Self.isBelow(Array(point[33..<65]), Self.fieldPrime) else {
            throw P256Error.coordinateNotInField
        }
        let size = point.count + credentialID.count
        guard size <= SmartAccountCredential.maximumExternalKeySize else { throw P256Error.keyDataTooLong(size) }
        self.point = point
        self.credentialID = credentialID
    }

    /// From a signer's `key_data`: the point, then the credential id, if any.
    public init(keyData: [UInt8]) throws {
        guard keyData.count >= Self.pointSize else { throw P256Error.keyLength(keyData.count) }
        try self.init(point: Array(keyData.prefix(Self.pointSize)), credentialID: Array(keyData.dropFirst(Self.pointSize)))
    }

    /// What an account names the signer by: the point, then the credential id.
    public var keyData: [UInt8] { point + credentialID }

    /// `a < b` for big-endian numbers of the same length.
    static func isBelow(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        precondition(a.count == b.count)
        return a.lexicographicallyPrecedes(b)
    }
}

/// What can be wrong with a P-256 key, a signature from it, or what it is asked to sign for an account. All are bad
/// input; nothing is written.
public enum P256Error: KeystoreError, Equatable {
    /// The point is not 65 bytes (the length given).
    case keyLength(Int)
    /// The point's first byte (given) is not 0x04, uncompressed.
    case keyNotUncompressed(UInt8)
    /// A coordinate of the point is not below the field prime.
    case coordinateNotInField
    /// The point and credential id together are longer than a smart account registers (the length).
    case keyDataTooLong(Int)
    /// r ‖ s is not 64 bytes, or r or s more than 32 (the length given).
    case signatureLength(Int)
    /// r is zero or not below the group order n.
    case rOutOfRange
    /// s is zero or not below the group order n.
    case sOutOfRange
    /// What is signed for an account is a 32-byte digest, not this many bytes.
    case digestLength(Int)
    /// Authenticator flags the WebAuthn verifier refuses, or that the assertion does not carry (why).
    case flagsRefused(String)

    public var message: String {
        switch self {
        case .keyLength(let count): "A P-256 key is a 65-byte uncompressed point (0x04 ‖ x ‖ y), not \(count) bytes."
        case .keyNotUncompressed(let tag):
            "The P-256 key is not an uncompressed point: its first byte is 0x\(Hex.string([tag])), not 0x04, the only form the network takes."
        case .coordinateNotInField: "A coordinate of the P-256 key is not below the field prime, so it is not a point."
        case .keyDataTooLong(let count):
            "The P-256 key and its credential id are \(count) bytes, more than the \(SmartAccountCredential.maximumExternalKeySize) a smart account registers."
        case .signatureLength(let count): "A P-256 signature is r ‖ s, 32 bytes each, not \(count) bytes; nothing was signed."
        case .rOutOfRange: "The P-256 signature's r is zero or not below the group order, so it verifies nothing; nothing was signed."
        case .sOutOfRange: "The P-256 signature's s is zero or not below the group order, so it verifies nothing; nothing was signed."
        case .digestLength(let count): "A P-256 key signs a 32-byte digest for an account, not \(count) bytes; nothing was signed."
        case .flagsRefused(let why): "The WebAuthn assertion's flags are refused: \(why); nothing was signed."
        }
    }
}
