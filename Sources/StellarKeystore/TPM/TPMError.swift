/// What can go wrong between a TPM-bound vault and the TPM. Each case says what to do next; none carries a
/// secret or a PIN.
public enum TPMError: KeystoreError, Equatable {
    /// No TPM at the configured TCTI, or no permission to use it.
    case unavailable(tcti: String, reason: String)
    /// The TPM refused the authorisation value derived from the PIN, and counted it (`TPM_RC_AUTH_FAIL`).
    case wrongPIN(state: TPM.DictionaryAttackState?)
    /// The TPM is in dictionary-attack lockout and tries nothing (`TPM_RC_LOCKOUT`).
    case lockedOut(state: TPM.DictionaryAttackState?)
    /// The sealed object does not load: another TPM made it, or this one was cleared since.
    case boundElsewhere
    /// The vault's sealed object is not a TPM2B_PUBLIC and a TPM2B_PRIVATE.
    case malformedObject
    case failed(operation: String, detail: String)

    public var message: String {
        switch self {
        case .unavailable(let tcti, let reason):
            "No usable TPM at \(TerminalText.escaped(tcti, limit: nil)) (\(TerminalText.escaped(reason, limit: nil))). For /dev/tpmrm0, join the 'tss' group (sudo usermod -aG tss $USER, then log in again); for another TPM, set KEYSTORE_TPM_TCTI or --tpm-tcti (e.g. swtpm:host=127.0.0.1,port=2321)."
        case .wrongPIN(let state?) where state.triesLeft > 0:
            "Incorrect PIN; the TPM counted it: \(state.triesLeft) more \(state.triesLeft == 1 ? "try" : "tries") before it locks out."
        case .wrongPIN(let state?):
            "Incorrect PIN; the TPM counted it and is now in lockout: \(Self.recovery(state))."
        case .wrongPIN(nil):
            "Incorrect PIN; the TPM counted it."
        case .lockedOut(let state?):
            "The TPM is in dictionary-attack lockout after too many wrong PINs and refuses every try: \(Self.recovery(state))."
        case .lockedOut(nil):
            "The TPM is in dictionary-attack lockout after too many wrong PINs and refuses every try; run 'keystore tpm-status' to see when it ends."
        case .boundElsewhere:
            "This vault is bound to a TPM that is not this one (another machine's, or this one's before it was cleared), so it cannot be opened here. Restore the key from its recovery phrase (keystore recover --tpm) or from an offline export."
        case .malformedObject:
            "The vault's sealed TPM object is malformed; restore the vault from a backup."
        case .failed(let operation, let detail):
            "The TPM could not \(operation): \(TerminalText.escaped(detail, limit: nil))."
        }
    }

    public var exitStatus: ExitStatus {
        switch self {
        case .wrongPIN: .incorrectPIN
        case .lockedOut: .throttled
        case .boundElsewhere, .malformedObject: .vaultDamaged
        case .unavailable, .failed: .system
        }
    }

    /// When a locked-out TPM takes tries again: it forgives one failure per interval (TPM 2.0 Part 1, 19.8.6).
    private static func recovery(_ state: TPM.DictionaryAttackState) -> String {
        guard state.intervalSeconds > 0 else {
            return "only its owner can end it (tpm2_dictionarylockout --clear-lockout)"
        }
        return "one try comes back within \(VaultError.duration(state.intervalSeconds)), or its owner can end it now (tpm2_dictionarylockout --clear-lockout)"
    }
}
