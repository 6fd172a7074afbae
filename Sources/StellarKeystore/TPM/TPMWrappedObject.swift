import StellarKeys
/// A secret sealed for another machine's TPM: a keyedhash data object duplicated (TPM2_Duplicate, TPM 2.0 Part 1
/// "Duplication", Part 3 23.3) to that TPM's storage key, with the outer wrapper only. Only the TPM whose storage
/// key's private part matches can recover the seed that protects it (ECDH on P-256 and KDFe, Part 1 C.6.1), so
/// these bytes may rest anywhere: another TPM's TPM2_Import refuses them (TPM_RC_INTEGRITY), as it refuses a
/// changed byte.
package struct TPMWrappedObject: Sendable, Equatable {
    /// The object's TPM2B_PUBLIC, as TPM2_Import takes it (its Name is bound into the wrapper's HMAC).
    package let publicArea: [UInt8]
    /// The TPM2B_PRIVATE TPM2_Duplicate returned: the sensitive area, AES-CFB-encrypted and HMAC-protected under
    /// keys derived from the seed.
    package let duplicate: [UInt8]
    /// The TPM2B_ENCRYPTED_SECRET: the seed, as an ephemeral P-256 point for the target's storage key.
    package let encryptedSeed: [UInt8]

    package init(publicArea: [UInt8], duplicate: [UInt8], encryptedSeed: [UInt8]) {
        self.publicArea = publicArea
        self.duplicate = duplicate
        self.encryptedSeed = encryptedSeed
    }
}

/// A TPM that moves a secret to another TPM (`Keystore.wrapForTPMMove`, `Keystore.importTPMMove`). Not public, as
/// `TPMKeySigning` is not: what `unwrap` gives back is an identity's seed, reached only through the identity's PIN
/// on the source and a new PIN on the target, never by an app calling the TPM. `StellarKeystoreTPM`'s `TPM` is one.
package protocol TPMMoving: TPMSealer {
    /// This TPM's storage key (the primary a vault binds under) as a marshalled TPM2B_PUBLIC: public, and what a
    /// source wraps to.
    func storageKeyPublicArea() throws -> [UInt8]
    /// `secret` (at most 128 bytes) wrapped so that only the TPM whose storage key is `target` can import it, and
    /// only with `authValue` unseal it there; a `target` that is not a P-256 storage key is refused (`TPMError.failed`).
    func wrap(_ secret: SecureBytes, toStorageKey target: [UInt8], authValue: SecureBytes) throws -> TPMWrappedObject
    /// The secret in `wrapped`, if it was wrapped to this TPM's storage key and is unchanged (otherwise
    /// `TPMError.wrappedElsewhere`) and `authValue` is the one it was wrapped with (otherwise `TPMError.wrongPIN`,
    /// counted by the TPM's dictionary-attack lockout).
    func unwrap(_ wrapped: TPMWrappedObject, authValue: SecureBytes) throws -> SecureBytes
}
