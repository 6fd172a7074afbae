import StellarKeys
import StellarTransactions

/// A P-256 key resident in this machine's TPM, opened with its authorisation value: it signs authorization
/// payloads as an OpenZeppelin smart account's External signer, in the form its verifier checks (`form`). The TPM
/// makes each ECDSA signature; the private key never leaves it. A high S is made low (the host refuses it).
///
/// Unlike an Ed25519 key's, a signature is not verified here against the public key: no P-256 verifier is linked
/// (libsodium has none); the tests verify every form with Python's `cryptography`.
package struct TPMResidentKey: P256Signing {
    package let name: IdentityName
    let vault: TPMKeyVault
    let authValue: SecureBytes
    let tpm: any TPMKeySigning
    var form: P256SignatureForm = .webAuthn

    package var signerKey: AuthorizationSigner.Key { .p256(vault.publicKey) }

    package func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8] {
        try payload.preimage.check(on: network)
        let digest = payload.digest
        let (r, s) = try tpm.signature(for: try form.digestToSign(for: digest), with: vault.key, authValue: authValue)
        return try form.credentialSignature(r: r, s: s, for: digest)
    }
}

extension Keystore {
    /// Opens the P-256 key with `pin`: the TPM signs one throwaway digest, so that a wrong PIN is found (and
    /// counted, by the TPM and as every PIN here is) before anything is signed.
    func openTPMKey(_ vault: TPMKeyVault, pin: PIN) throws -> TPMResidentKey {
        guard let tpm = try tpm() as? any TPMKeySigning else { throw TPMError.notSupported }
        let (before, _) = try vaults.attempts.record(vault.name)
        do {
            let key = TPMResidentKey(name: vault.name, vault: vault, authValue: try vault.authValue(pin: pin), tpm: tpm)
            _ = try tpm.signature(for: [UInt8](repeating: 0, count: 32), with: vault.key, authValue: key.authValue)
            try? vaults.attempts.clear(vault.name)
            return key
        } catch let error as TPMError where error.isWrongPIN {
            throw error  // counted here too; the TPM's own count is the one its message gives
        } catch {
            try? vaults.attempts.restore(vault.name, to: before)
            throw error
        }
    }

    // MARK: Making one

    /// `signUp` with `NewKey.p256InTPM`: identity `name` made a new NIST P-256 signing key inside this machine's
    /// TPM, under the storage key TPM-bound vaults use, its authorisation value derived from a new PIN (checked
    /// for strength) at `kdf`'s cost (`auto`: the lightest, `interactive`, since the TPM limits guesses and a copy
    /// of the vault is worth nothing without it), dictionary-attack protection on. The vault keeps the TPM's
    /// wrapped key and the public key, which a smart account registers as `External(verifier, key)`. `pin` is
    /// asked once the name is free and the TPM ready. An existing identity is refused unless `replacing` (its
    /// vault kept as a backup).
    func signUpInTPM(name: IdentityName, kdf: KDFChoice, replacing: Bool, pin: () throws -> PIN) throws -> Created {
        try refuseExisting(name, replacing: replacing)
        try checkTPMReadyToBind()
        let pin = try pin()
        try pin.checkStrength()
        let vault = try TPMKeyVault.create(name: name, pin: pin, kdf: try cost(of: kdf == .auto ? .interactive : kdf).parameters, tpm: tpm())
        let backup = try vaults.create(vault, replacing: replacing)
        warnAboutPermissions(name)
        return Created(name: name, key: .p256(vault.publicKey), path: vaults.path(of: name), backup: backup)
    }
}
