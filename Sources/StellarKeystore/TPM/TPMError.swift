import StellarKeys
import StellarTransactions
import StellarText
/// What can go wrong between a TPM-bound vault and the TPM. Each case says what happened in words an app can show;
/// the command line adds what to type (`Sources/KeystoreCLI/Hints.swift`). None carries a secret or a PIN.
public enum TPMError: KeystoreError, Equatable {
    /// No TPM at the configured TCTI, or no permission to use it.
    case unavailable(tcti: String, reason: String)
    /// This program was built without TPM support (no `TPMSealer` was given to the `Keystore`).
    case notSupported
    /// The TPM software (tpm2-tss) is not installed, or not whole.
    case softwareMissing(detail: String)
    /// The TPM has no room for another object: without a resource manager, another program left some loaded.
    case outOfObjectMemory(detail: String)
    /// The TPM refused the authorisation value derived from the PIN, and counted it (`TPM_RC_AUTH_FAIL`).
    case wrongPIN(state: TPMDictionaryAttackState?)
    /// The TPM is in dictionary-attack lockout and tries nothing (`TPM_RC_LOCKOUT`).
    case lockedOut(state: TPMDictionaryAttackState?, tcti: String)
    /// The sealed object or signing key does not load: another TPM made it, or this one was cleared since.
    case boundElsewhere
    /// The vault's TPM object (a sealed object or a signing key) is not a TPM2B_PUBLIC and a TPM2B_PRIVATE, or its
    /// public key is not the one in its public area.
    case malformedObject
    /// This TPM made the object's primary key, yet refuses to load the object: the vault is damaged.
    case damagedObject(detail: String)
    /// A new binding was asked of a TPM whose lockout authorization is empty, where its guess limit does not hold.
    case lockoutOpen
    /// The lockout code typed is not one `LockoutCode` could have shown (nothing was sent to the TPM).
    case malformedLockoutCode(reason: String)
    /// The TPM refused the lockout code, and counted it against the lockout hierarchy.
    case wrongLockoutCode(recoverySeconds: Int?)
    /// The lockout hierarchy itself is locked after a wrong code, for the TPM's lockout-recovery time.
    case lockoutHierarchyLocked(recoverySeconds: Int?)
    /// A lockout code was set but could not be handed over, nor set back: the TPM holds an authorization nobody has.
    case lockoutCodeLost(detail: String)
    /// A signal that asks the process to end arrived before the new lockout code was handed over, so the
    /// authorization was set back to empty.
    case lockoutChangeInterrupted
    /// TPM2_Import refused a wrapped object: made for another TPM's storage key, or changed since.
    case wrappedElsewhere(detail: String)
    case failed(operation: String, detail: String)

    public var message: String {
        switch self {
        case .unavailable(let tcti, let reason):
            "No usable TPM at \(TerminalText.escaped(tcti, limit: nil)) (\(TerminalText.escaped(reason, limit: nil)))."
        case .softwareMissing(let detail):
            "The TPM software is missing: \(TerminalText.escaped(detail, limit: nil))."
        case .outOfObjectMemory(let detail):
            "The TPM has no room for another object (\(TerminalText.escaped(detail, limit: nil))): another program left objects loaded in it."
        case .notSupported:
            "This program has no TPM support, which a TPM-bound vault needs; open the vault with a program that has it, or restore the key from its recovery phrase."
        case .wrongPIN(let state?) where state.triesLeft > 0:
            "Incorrect PIN; the TPM counted it: \(state.triesLeft) more \(state.triesLeft == 1 ? "try" : "tries") before it locks out."
        case .wrongPIN(let state?):
            "Incorrect PIN; the TPM counted it and is now in lockout: \(Self.recovery(state))."
        case .wrongPIN(nil):
            "Incorrect PIN; the TPM counted it."
        case .lockedOut(let state?, _):
            "The TPM is in dictionary-attack lockout after too many wrong PINs and refuses every try: \(Self.recovery(state))."
        case .lockedOut(nil, _):
            "The TPM is in dictionary-attack lockout after too many wrong PINs and refuses every try."
        case .boundElsewhere:
            "This vault is bound to a TPM that is not this one (another machine's, or this one's before it was cleared), so it cannot be opened here; restore the key from its recovery phrase or from an offline export."
        case .malformedObject:
            "The vault's TPM object is malformed; restore the vault from a backup."
        case .damagedObject(let detail):
            "This TPM made the vault's primary key but refuses its TPM object (\(TerminalText.escaped(detail, limit: nil))): the vault is damaged; restore it from a backup."
        case .lockoutOpen:
            "This TPM's lockout authorization is not set, so anyone who can open the TPM can reset its wrong-PIN counter, and its guess limit would not hold."
        case .malformedLockoutCode(let reason):
            "That is not a lockout code: \(reason). Nothing was sent to the TPM."
        case .wrongLockoutCode(let seconds):
            "The TPM refused the lockout code and counted it: it now refuses every lockout code for \(Self.lockoutRecovery(seconds))."
        case .lockoutHierarchyLocked(let seconds):
            "The TPM refuses every lockout code after a wrong one, for \(Self.lockoutRecovery(seconds)); nothing was tried."
        case .lockoutCodeLost(let detail):
            "The TPM's new lockout authorization could not be shown, nor set back to empty (\(TerminalText.escaped(detail, limit: nil))): nobody has it now, so only clearing the TPM, which destroys every key bound to it, ends a lockout."
        case .lockoutChangeInterrupted:
            "Interrupted before the lockout code was shown, so the TPM's lockout authorization was set back to empty: nothing was changed."
        case .wrappedElsewhere(let detail):
            "This TPM cannot open the moved key (\(TerminalText.escaped(detail, limit: nil))): it was wrapped for another TPM's storage key, or changed since it was written; wrap it again on the source machine to this TPM's storage key."
        case .failed(let operation, let detail):
            "The TPM could not \(operation): \(TerminalText.escaped(detail, limit: nil))."
        }
    }


    /// The TPM refused the PIN and counted it: a failure the vault's own counter keeps too.
    var isWrongPIN: Bool {
        if case .wrongPIN = self { return true }
        return false
    }

    /// When a locked-out TPM takes tries again: it forgives one failure per interval (TPM 2.0 Part 1, 19.8.6).
    private static func recovery(_ state: TPMDictionaryAttackState) -> String {
        guard state.intervalSeconds > 0 else { return "only the holder of its lockout authorization can end it" }
        return "one try comes back within \(VaultError.duration(state.intervalSeconds)), or the holder of its lockout authorization can end it now"
    }

    /// TPM 2.0 Part 1, 19.8.4: a lockout-recovery time of 0 means until the TPM is next reset (a reboot).
    private static func lockoutRecovery(_ seconds: Int?) -> String {
        guard let seconds else { return "its lockout-recovery time" }
        return seconds == 0 ? "as long as this machine runs (until its next reboot)" : VaultError.duration(seconds)
    }
}
