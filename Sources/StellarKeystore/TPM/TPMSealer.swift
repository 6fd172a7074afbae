import StellarKeys
import StellarTransactions
/// A TPM 2.0 as a vault uses it: seal a secret under an authorisation value, give it back for that value only,
/// and the dictionary-attack protection that counts every wrong one. This library holds no TPM code: the
/// `StellarKeystoreTPM` product's `TPM` is the implementation (tpm2-tss, loaded only when used), plugged into a
/// `Keystore`; an app without it opens and makes vaults that the PIN alone protects, and is told
/// `TPMError.notSupported` for a TPM-bound one.
public protocol TPMSealer: Sendable {
    /// Which TPM, for messages: a tpm2-tss TCTI such as `device:/dev/tpmrm0`.
    var name: String { get }

    /// Seals `secret` (at most 128 bytes) so that only this TPM, given `authValue` (at most 32 bytes), gives it
    /// back. `primaryName`: the Name recorded by the binding this seal renews (a PIN change, an upgrade), which
    /// the TPM's primary key must still have; nil makes a new binding, which a TPM whose guess limit would not
    /// hold refuses (`TPMError.lockoutOpen`) unless the person allowed it.
    func seal(_ secret: SecureBytes, authValue: SecureBytes, primaryName: [UInt8]?) throws -> TPMSealedObject

    /// The secret sealed in `object`, if `authValue` is its authorisation value. A wrong one is counted by the
    /// TPM (`TPMError.wrongPIN`); in lockout nothing is tried (`TPMError.lockedOut`); another TPM's object is
    /// `TPMError.boundElsewhere`.
    func unseal(_ object: TPMSealedObject, authValue: SecureBytes) throws -> SecureBytes

    /// Refuses, without sealing anything, a new binding that could not happen or whose guess limit would not hold.
    func checkReadyToSeal() throws

    /// Makes a new NIST P-256 ECDSA key in this TPM, under the primary key that sealing uses, usable only with
    /// `authValue` (at most 32 bytes), every wrong one counted by the TPM's dictionary-attack protection. A new
    /// key is a new binding: a TPM whose guess limit would not hold refuses it (`TPMError.lockoutOpen`) unless
    /// the person allowed it.
    func createSigningKey(authValue: SecureBytes) throws -> TPMSigningKey

    /// What `key`'s public area says of it, read from its TPM2B_PUBLIC without asking the TPM.
    func attributes(of key: TPMSigningKey) throws -> TPMKeyAttributes

    func dictionaryAttackState() throws -> TPMDictionaryAttackState

    /// Sets a new random lockout authorization and returns it; nil, with nothing changed, when one is set.
    func protectLockout() throws -> LockoutCode?
    /// Sets the lockout authorization back to empty, with the `code` it has now.
    func unprotectLockout(code: LockoutCode) throws
    /// Ends a lockout and resets the counter; `code` nil where the lockout authorization is empty.
    func resetLockout(code: LockoutCode?) throws
}

/// A TPM that signs with the P-256 keys it made (`TPMSealer.createSigningKey`). Not public, and apart from
/// `TPMSealer` because a public protocol cannot have a `package` requirement: a TPM signature is reached only
/// through a review and a counted PIN (`TPMResidentKey`), never by an app calling the TPM. `StellarKeystoreTPM`'s
/// `TPM` is one; a `TPMSealer` that is not cannot open a P-256 key (`TPMError.notSupported`).
package protocol TPMKeySigning: TPMSealer {
    /// The ECDSA signature (r, s; each 32 bytes, big-endian) of `key` over the 32-byte SHA-256 `digest`, if
    /// `authValue` is its authorisation value. A wrong one is counted by the TPM (`TPMError.wrongPIN`); in
    /// lockout nothing is tried (`TPMError.lockedOut`); another TPM's key is `TPMError.boundElsewhere`.
    func signature(for digest: [UInt8], with key: TPMSigningKey, authValue: SecureBytes) throws -> (r: [UInt8], s: [UInt8])
}

/// The TPM's dictionary-attack protection as `TPM2_GetCapability` reports it (TPM 2.0 Part 2, 6.13).
public struct TPMDictionaryAttackState: Sendable, Equatable {
    /// Authorisation failures counted and not yet forgiven (`TPM2_PT_LOCKOUT_COUNTER`).
    public let failures: Int
    /// Failures before lockout (`TPM2_PT_MAX_AUTH_FAIL`).
    public let maximumFailures: Int
    /// Seconds after which one failure is forgiven (`TPM2_PT_LOCKOUT_INTERVAL`); 0: never by itself.
    public let intervalSeconds: Int
    /// Seconds before the lockout hierarchy may be tried again after a failure (`TPM2_PT_LOCKOUT_RECOVERY`).
    public let recoverySeconds: Int
    public let inLockout: Bool
    /// Whether the lockout hierarchy has an authorization value (`TPMA_PERMANENT_LOCKOUTAUTHSET`). Without one,
    /// `TPM2_DictionaryAttackLockReset` needs no secret, and any process that can open the TPM can reset
    /// `failures` to zero between guesses.
    public let lockoutAuthSet: Bool

    public init(failures: Int, maximumFailures: Int, intervalSeconds: Int, recoverySeconds: Int, inLockout: Bool,
                lockoutAuthSet: Bool) {
        self.failures = failures
        self.maximumFailures = maximumFailures
        self.intervalSeconds = intervalSeconds
        self.recoverySeconds = recoverySeconds
        self.inLockout = inLockout
        self.lockoutAuthSet = lockoutAuthSet
    }

    public var triesLeft: Int { max(maximumFailures - failures, 0) }
}
