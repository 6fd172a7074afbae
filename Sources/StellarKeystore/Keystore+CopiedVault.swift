import StellarKeys

/// What a copy of a vault file that the PIN alone opens gives whoever takes it (a backup, a synced folder, a
/// stolen disk): every PIN can be tried offline, with no throttle, and one GPU does it in `allPINsOnOneGPU`.
public struct CopiedVaultExposure: Sendable, Equatable {
    /// The estimate for the vault's costs (`KDFParameters.allPINsOnOneGPU`).
    public let allPINsOnOneGPU: Duration
    /// This machine's TPM, when it answers: binding the vault to it would make a copy worthless. Its
    /// `lockoutAuthSet` says whether a binding can be made now or needs the lockout authorization set first.
    public let tpm: TPMDictionaryAttackState?
}

extension Keystore {
    /// What a copy of `name`'s vault file would give whoever takes it, for a person who has just made it (or is
    /// deciding where to keep it); nil for a TPM-bound vault, whose copy is worthless without this machine's TPM,
    /// and for a token's key, whose vault holds no secret.
    /// Asks the TPM only for its state, and takes its absence (or tpm2-tss's, or no permission) as no TPM.
    public func copiedVaultExposure(of name: IdentityName) throws -> CopiedVaultExposure? {
        let vault = try vaults.vault(named: name)
        guard let kdf = vault.kdf, !vault.isTPMBound else { return nil }
        return CopiedVaultExposure(allPINsOnOneGPU: kdf.allPINsOnOneGPU, tpm: try? tpmStatus())
    }
}
