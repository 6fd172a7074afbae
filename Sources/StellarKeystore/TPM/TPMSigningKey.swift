/// A NIST P-256 signing key that lives in a TPM (`TPMSealer.createSigningKey`), as a vault keeps it: the
/// TPM2B_PUBLIC and TPM2B_PRIVATE that `TPM2_Create` returned, in the TPM's own marshalled form (big-endian,
/// size-prefixed; TPM 2.0 Part 2), the Name of the primary key it was made under, and its public key. The private
/// area is wrapped by the primary, which only this TPM can regenerate: the private key never leaves the TPM in a
/// form anything else can use, and signs only for the authorisation value it was made with.
public struct TPMSigningKey: Sendable, Equatable {
    /// The primary key's Name: the name algorithm's 2-byte ID, then the digest of the primary's public area.
    public let primaryName: [UInt8]
    public let publicArea: [UInt8]
    public let privateArea: [UInt8]
    /// The public key as SEC 1 (2.3.3) writes it uncompressed: 0x04, then X and Y, each 32 bytes big-endian. The
    /// TPM checks, when it signs, that this is the point in `publicArea`.
    public let publicKey: [UInt8]

    /// The size of an uncompressed NIST P-256 point.
    public static let publicKeyBytes = 65

    /// Nil unless `primaryName` is a SHA-256 Name, each area is exactly one size-prefixed TPM2B of a plausible
    /// size, and `publicKey` is an uncompressed P-256 point's size and form: what can be checked without a TPM.
    public init?(primaryName: [UInt8], publicArea: [UInt8], privateArea: [UInt8], publicKey: [UInt8]) {
        guard let object = TPMSealedObject(primaryName: primaryName, publicArea: publicArea, privateArea: privateArea),
              publicKey.count == Self.publicKeyBytes, publicKey.first == 0x04
        else { return nil }
        self.primaryName = object.primaryName
        self.publicArea = object.publicArea
        self.privateArea = object.privateArea
        self.publicKey = publicKey
    }
}
