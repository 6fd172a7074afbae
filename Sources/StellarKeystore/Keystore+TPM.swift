import FoundationEssentials
import Glibc
import StellarKeys
import StellarTransactions

extension Keystore {
    // MARK: The TPM

    /// What a person must hear before choosing a TPM-bound vault, and again when it is made.
    public static let tpmBindingNotice = """
        this vault can only ever be opened on this machine, with its TPM: if the machine dies, is replaced or its \
        TPM is cleared, the key is gone unless you have its recovery phrase or an offline export. With the TPM \
        limiting guesses, the lightest Argon2id cost is enough; it is now defence in depth.
        """

    /// Binds an identity's vault to this machine's TPM, under the same PIN and cost (a fresh salt, nonce and
    /// TPM secret), atomically; its sessions end. Refused when it is bound already.
    @discardableResult
    public func bindToTPM(name: IdentityName, pin: () throws -> PIN) throws -> Vault {
        let seen = try vaultReadyForPIN(name, for: .bindTPM)
        if seen.isTPMBound { throw KeystoreUseError.alreadyBound(name.rawValue) }
        try checkTPMReadyToBind()
        let current = try pin()
        return try vaults.changePIN(name, from: current, to: current, boundToTPM: true, expecting: seen)
    }

    /// Converts a TPM-bound vault back to one that the PIN alone opens (to move it to another machine), after the
    /// PIN, which the TPM checks; its sessions end.
    @discardableResult
    public func unbindFromTPM(name: IdentityName, pin: () throws -> PIN) throws -> Vault {
        let seen = try vaultReadyForPIN(name, for: .unbindTPM)
        if !seen.isTPMBound { throw KeystoreUseError.notBound(name.rawValue) }
        let current = try pin()
        return try vaults.changePIN(name, from: current, to: current, boundToTPM: false, expecting: seen)
    }

    /// Refuses, before any PIN is asked, a binding that cannot happen: no TPM, no permission on it, or an owner
    /// hierarchy with a password; and one whose guess limit would not hold, on a TPM whose lockout authorization
    /// is empty (`TPMError.lockoutOpen`), unless the keystore's `TPM` allows it. Returns the TPM's state, so that
    /// an allowed open lockout can be said.
    @discardableResult
    public func checkTPMReadyToBind() throws -> TPMDictionaryAttackState {
        try tpm().checkReadyToSeal()
        return try tpm().dictionaryAttackState()
    }

    /// The keystore's TPM, where it has one.
    func tpm() throws -> TPMSealer {
        guard let tpm = vaults.tpm else { throw TPMError.notSupported }
        return tpm
    }

    /// The TPM's dictionary-attack state: how many wrong PINs it has counted and allows, and whether its lockout
    /// authorization is set.
    public func tpmStatus() throws -> TPMDictionaryAttackState {
        try tpm().dictionaryAttackState()
    }

    /// Gives the TPM a random lockout authorization, so that only whoever holds the code can reset its wrong-PIN
    /// counter, and hands the code to `deliver` (to show a person), once: it is stored nowhere. If `deliver`
    /// throws, the authorization is set back to empty with that same code and the error rethrown, so that the
    /// TPM never keeps a code nobody saw. False, with nothing changed, when the lockout authorization is set
    /// already. This changes the TPM for every program on the machine.
    ///
    /// From the change until the code is handed over or set back, SIGHUP, SIGINT, SIGQUIT, SIGTERM and SIGPIPE are
    /// held (a write to a closed pipe fails with EPIPE instead of ending the process); one that arrives before
    /// `deliver` is called sets the authorization back instead (`TPMError.lockoutChangeInterrupted`), and acts
    /// once that is done. `deliver` throws when the code did not reach its reader (a write that failed).
    public func protectTPMLockout(deliver: (LockoutCode) throws -> Void) throws -> Bool {
        let tpm = try tpm()
        return try SignalHold.during { signalArrived in
            guard let code = try tpm.protectLockout() else { return false }
            #if DEBUG
            Self.pauseForTest(until: signalArrived)
            #endif
            do {
                // Ctrl-C before anything was shown: the TPM as it was, rather than a code printed as the shell
                // (or a script's `$(…)`) that would have kept it is ending too.
                if signalArrived() { throw TPMError.lockoutChangeInterrupted }
                try deliver(code)
            } catch {
                do {
                    try tpm.unprotectLockout(code: code)
                } catch let undo as KeystoreError {
                    throw TPMError.lockoutCodeLost(detail: undo.message)
                }
                throw error
            }
            return true
        }
    }

    #if DEBUG
    /// Compiled in debug builds only, and even there inert unless `KEYSTORE_TEST_PAUSE_AFTER_LOCKOUT_CHANGE` is set:
    /// then, once the TPM has the new lockout authorization and before the code is handed over, says so on standard
    /// error and waits until a held signal arrives (at most 10 s), so that a test can send one at that moment. It
    /// only ever delays.
    private static func pauseForTest(until arrived: () -> Bool) {
        guard getenv("KEYSTORE_TEST_PAUSE_AFTER_LOCKOUT_CHANGE") != nil else { return }
        let line = Array("keystore: test pause: lockout authorization changed\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        var waited = 0
        while !arrived() && waited < 1000 {
            usleep(10_000)
            waited += 1
        }
    }
    #endif

    /// How `resetTPMLockout` ended the lockout.
    public enum LockoutReset: Sendable, Equatable {
        /// With the lockout code.
        case withCode
        /// Without one: the lockout authorization is empty, so no code was needed (nor asked), as for anybody.
        case withoutCode
    }

    /// Ends the TPM's dictionary-attack lockout and resets its wrong-PIN counter. `code` is asked only when the
    /// TPM's lockout authorization is set; a malformed code is refused before the TPM sees it, and a wrong one is
    /// counted by the TPM against its lockout hierarchy (`TPMError.wrongLockoutCode`).
    public func resetTPMLockout(code: () throws -> LockoutCode) throws -> LockoutReset {
        let tpm = try tpm()
        let state = try tpm.dictionaryAttackState()
        guard state.lockoutAuthSet else {
            try tpm.resetLockout(code: nil)
            return .withoutCode
        }
        try tpm.resetLockout(code: code())
        return .withCode
    }
}
