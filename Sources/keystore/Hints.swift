import StellarKeystore
import StellarKeystoreTPM
import StellarKeys
import StellarTransactions

/// What to type next, added by the command line to a library error that says what happened (as age's
/// `errorWithHint` does): an app's user has no `keystore` command and no flags, so none of this is in the library.
enum Hints {
    /// The error's message, with the command-line hint when there is one.
    static func withHint(_ error: KeystoreError) -> String {
        guard let hint = hint(for: error) else { return error.message }
        return error.message + " " + hint
    }

    static func hint(for error: KeystoreError) -> String? {
        guard let error = error as? TPMError else { return nil }
        switch error {
        case .unavailable:
            return "For /dev/tpmrm0, join the 'tss' group (sudo usermod -aG tss $USER, then log in again); for another TPM, set KEYSTORE_TPM_TCTI or --tpm-tcti (e.g. swtpm:host=127.0.0.1,port=2321)."
        case .wrongPIN(let state?) where state.triesLeft == 0:
            return resetHint(state: state, tcti: nil)
        case .lockedOut(let state, let tcti):
            return resetHint(state: state, tcti: tcti)
        case .softwareMissing:
            return "Install tpm2-tss (Debian: sudo apt-get install libtss2-esys-3.0.2-0 libtss2-tctildr0 libtss2-mu0 libtss2-rc0)."
        case .outOfObjectMemory:
            return "Use device:/dev/tpmrm0 (the kernel's resource manager), or run tpm2_flushcontext -t."
        case .boundElsewhere:
            return "To restore it here: keystore recover --tpm."
        case .lockoutOpen:
            return "Set one first with 'keystore tpm-protect' (it is shown once, to keep offline), or bind anyway with --allow-open-lockout."
        case .wrongLockoutCode, .lockoutHierarchyLocked:
            return "'keystore tpm-status' shows the lockout-recovery time."
        default:
            return nil
        }
    }

    /// How the wrong-PIN lockout ends now: with the lockout code, or, where the lockout authorization is empty,
    /// tpm2-tools' own line too, aimed at the same TPM (`-T` unless it is the default device both use).
    private static func resetHint(state: TPMDictionaryAttackState?, tcti: String?) -> String {
        guard state?.lockoutAuthSet == false else { return "With the lockout code: keystore tpm-reset-lockout." }
        var raw = "tpm2_dictionarylockout --clear-lockout"
        if let tcti, tcti != TPM.defaultTCTI { raw += " -T " + shellQuoted(tcti) }
        return "To end it now: keystore tpm-reset-lockout (or \(raw))."
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
