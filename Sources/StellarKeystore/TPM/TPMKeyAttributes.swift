/// What a TPM key's public area (TPMT_PUBLIC, TPM 2.0 Part 2, 12.2.4) says it is and what the TPM lets it do, as
/// read back from its TPM2B_PUBLIC (`TPMSealer.attributes(of:)`).
public struct TPMKeyAttributes: Sendable, Equatable {
    /// An ECC key on NIST P-256 (`TPM_ALG_ECC`, `TPM_ECC_NIST_P256`), named with SHA-256.
    public let isNISTP256: Bool
    /// Its scheme is ECDSA with SHA-256: the TPM makes no other kind of signature with it.
    public let isECDSASHA256: Bool
    /// `sign`: it signs.
    public let signs: Bool
    /// `decrypt`: it decrypts.
    public let decrypts: Bool
    /// `restricted`: it signs only what the TPM itself produced (quotes, certifications), or digests it hashed.
    public let restricted: Bool
    /// `userWithAuth`: its authorisation value alone authorises its use, no policy needed.
    public let userWithAuth: Bool
    /// `noDA`: wrong authorisation values are not counted towards the TPM's dictionary-attack lockout.
    public let noDA: Bool
    /// `fixedTPM`: it cannot be duplicated to another TPM.
    public let fixedTPM: Bool
    /// `fixedParent`: it cannot be duplicated to another parent.
    public let fixedParent: Bool
    /// `sensitiveDataOrigin`: the TPM generated the private key; nobody supplied it.
    public let sensitiveDataOrigin: Bool

    public init(isNISTP256: Bool, isECDSASHA256: Bool, signs: Bool, decrypts: Bool, restricted: Bool, userWithAuth: Bool,
                noDA: Bool, fixedTPM: Bool, fixedParent: Bool, sensitiveDataOrigin: Bool) {
        self.isNISTP256 = isNISTP256
        self.isECDSASHA256 = isECDSASHA256
        self.signs = signs
        self.decrypts = decrypts
        self.restricted = restricted
        self.userWithAuth = userWithAuth
        self.noDA = noDA
        self.fixedTPM = fixedTPM
        self.fixedParent = fixedParent
        self.sensitiveDataOrigin = sensitiveDataOrigin
    }

    /// Signs any digest given and decrypts nothing.
    public var isSignOnly: Bool { signs && !decrypts && !restricted }
}
