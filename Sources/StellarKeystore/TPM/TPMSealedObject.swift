import StellarKeys
import StellarTransactions
/// A sealed object as a TPM-bound vault keeps it (docs/FORMAT.md, version 3): the TPM2B_PUBLIC and
/// TPM2B_PRIVATE that `TPM2_Create` returned, in the TPM's own marshalled form (big-endian, size-prefixed; TPM 2.0
/// Part 2), and the Name of the primary key it was made under (the name algorithm's 2-byte ID, then the digest
/// of the primary's public area).
public struct TPMSealedObject: Sendable, Equatable {
    public let primaryName: [UInt8]
    public let publicArea: [UInt8]
    public let privateArea: [UInt8]

    /// The most either area can hold: TPM2B_PUBLIC and TPM2B_PRIVATE are a few hundred bytes on every TPM.
    static let largestArea = 2048

    /// Nil unless `primaryName` is a SHA-256 Name and each area is exactly one size-prefixed TPM2B of a
    /// plausible size: what can be checked without a TPM (the TPM target reads each area whole before use).
    public init?(primaryName: [UInt8], publicArea: [UInt8], privateArea: [UInt8]) {
        func isOneTPM2B(_ bytes: [UInt8]) -> Bool {
            bytes.count > 2 && bytes.count <= Self.largestArea && Int(bytes[0]) << 8 | Int(bytes[1]) == bytes.count - 2
        }
        guard primaryName.count == 34, primaryName.prefix(2) == [0x00, 0x0B], isOneTPM2B(publicArea), isOneTPM2B(privateArea)
        else { return nil }
        self.primaryName = primaryName
        self.publicArea = publicArea
        self.privateArea = privateArea
    }
}
