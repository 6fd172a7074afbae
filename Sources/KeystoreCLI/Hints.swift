import Glibc
import StellarKeystore
import StellarKeystoreTPM
import StellarTransactions
import StellarText
import StellarWebAuth

/// What to type next, added by the command line to a library error that says what happened (as age's
/// `errorWithHint` does): an app's user has no `keystore` command and no flags, so none of this is in the library.
enum Hints {
    /// The error's message with the command-line hint: a hint in lower case continues the message's sentence
    /// ("…; create one with …"), one in upper case follows it.
    static func withHint(_ error: KeystoreError) -> String {
        guard let hint = hint(for: error) else { return error.message }
        if hint.first?.isUppercase == true { return error.message + " " + hint }
        return (error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message) + "; " + hint
    }

    static func hint(for error: KeystoreError) -> String? {
        switch error {
        case let error as VaultError: hint(for: error)
        case let error as SessionError: hint(for: error)
        case let error as TransactionError: hint(for: error)
        case let error as TPMError: hint(for: error)
        case let error as AgentError: hint(for: error)
        case StellarCLIImportError.noConfigDirectory: "pass --config-dir, or set STELLAR_CONFIG_HOME."
        case AuthorizationError.notStrict: "to sign it anyway, add --allow-non-strict."
        case AuthorizationError.notAddressBound: "To sign it anyway, add --allow-v1."
        // Only a signer plugin's host makes such requests; what it passes the plugin is how to allow one.
        case SigningRefusal.notAddressBound: "To sign it anyway, add --plugin-arg keystore:allow-v1=yes."
        case AuthorizationError.expirationDiffers(_, let carried): "Give --expiration-ledger \(carried)."
        case WebAuthClientError.httpUnavailable: "Install libcurl (Debian: sudo apt-get install libcurl4)."
        case ContractWebAuthError.notAContract: "a G… or M… account signs in without --account (SEP-10)."
        case ContractWebAuthError.expirationOutOfRange(_, let server): "Give --expiration-ledger \(server) or less, or leave it out."
        case TrimError.accountsUnknown: "Give each as --account-file, saved from Horizon (curl https://horizon.stellar.org/accounts/G…)."
        // Every account this key signs for has its threshold already: the signature is not wanted.
        case TrimError.newSignatureExtra(_, let roles) where !roles.isEmpty: "The transaction needs no signature of this key: pass it on as it is."
        case TransactionRequestError.networkNotConfirmed: "give it with --network or --network-passphrase, or answer yes at a terminal."
        case TransactionRequestError.noCallback: "drop --submit-callback."
        case TransactionRequestError.originOnThisMachine: "for a requester under test on this machine, add --allow-local-origin."
        case BackupError.differentKeyHere(let name, _, _): "Restore it with --replace \(name) (the one here is kept as a vault backup), or remove it first."
        case BackupError.outputExists: "Give --force to replace it."
        case BackupError.wasTPMBound: "Give --tpm to bind them to this machine's TPM, or --unbound."
        case BackupError.restoreStopped: "Run the restore again to finish: what is here already is left alone."
        case BackupError.changedSincePlan: "Run the restore again to see what it would do now."
        case BackupError.futureVersion, TPMMoveError.futureVersion: "Update keystore."
        default: nil
        }
    }

    private static let envelopeWanted = "give a base64 TransactionEnvelope (e.g. from 'stellar tx new … --build-only')."
    private static let networks = "use --network public (or mainnet, pubnet), testnet or futurenet, or --network-passphrase TEXT."
    private static let newSession = "run 'keystore login --session' again."

    private static func hint(for error: VaultError) -> String? {
        switch error {
        case .notFound(let name, _): "create one with 'keystore signup --name \(name)'."
        case .alreadyExists: "pick another with --name, or replace it with --replace (the old vault is kept as a backup)."
        case .derivedNameTaken: "pick another name."
        case .unsupportedVersion: "upgrade keystore."
        case .keyDerivationFailed: "or use the lighter --kdf interactive (64 MiB)."
        case .noHomeDirectory: "or pass --home."
        case .io: "or choose another directory with --home."
        default: nil
        }
    }

    private static func hint(for error: AgentError) -> String? {
        switch error {
        case .socketDirectoryRefused(let directory, .directoryNotPrivate(let owner, _)) where owner == geteuid():
            "make it private (chmod 700 \(TerminalText.escaped(ShellWord.quoted(directory), limit: nil)))."
        case .socketDirectoryRefused:
            "give --socket a path in a directory of your own (mode 0700)."
        case .identityNotHeld(let name, _):
            "add it with 'keystore login --agent --name \(ShellWord.quoted(name))'."
        default: nil
        }
    }

    private static func hint(for error: SessionError) -> String? {
        switch error {
        case .malformed: "run 'keystore login --session' and eval its output (KEYSTORE_SESSION)."
        case .ended, .forged, .expired, .vaultChanged: newSession
        case .otherIdentity(let name): "pass --name \(name) or log in to this identity."
        case .invalidTTL: "e.g. --ttl 90s, 15m, 8h."
        case .none: "start one with 'keystore login --session'."
        case .unsafeDirectory: nil
        }
    }

    private static func hint(for error: TransactionError) -> String? {
        switch error {
        case .empty, .notBase64: envelopeWanted
        case .unknownNetwork: networks
        case .noNetwork: "give --network public (or mainnet, pubnet), testnet or futurenet, or --network-passphrase TEXT (or set STELLAR_NETWORK or STELLAR_NETWORK_PASSPHRASE)."
        default: nil
        }
    }

    private static func hint(for error: TPMError) -> String? {
        switch error {
        case .unavailable:
            "For /dev/tpmrm0, join the 'tss' group (sudo usermod -aG tss $USER, then log in again); for another TPM, set KEYSTORE_TPM_TCTI or --tpm-tcti (e.g. swtpm:host=127.0.0.1,port=2321)."
        case .softwareMissing:
            "Install tpm2-tss (Debian: sudo apt-get install libtss2-esys-3.0.2-0 libtss2-tctildr0 libtss2-mu0 libtss2-rc0)."
        case .outOfObjectMemory:
            "Use device:/dev/tpmrm0 (the kernel's resource manager), or run tpm2_flushcontext -t."
        case .wrongPIN(let state?) where state.triesLeft == 0:
            resetHint(state: state, tcti: nil)
        case .lockedOut(let state, let tcti):
            resetHint(state: state, tcti: tcti)
        case .boundElsewhere:
            "To restore it here: keystore recover --tpm."
        case .lockoutOpen:
            "Set one first with 'keystore tpm-protect' (it is shown once, to keep offline), or bind anyway with --allow-open-lockout."
        case .wrongLockoutCode, .lockoutHierarchyLocked:
            "'keystore tpm-status' shows the lockout-recovery time."
        default:
            nil
        }
    }

    /// How the wrong-PIN lockout ends now: with the lockout code, or, where the lockout authorization is empty,
    /// tpm2-tools' own line too, aimed at the same TPM (`-T` unless it is the default device both use).
    private static func resetHint(state: TPMDictionaryAttackState?, tcti: String?) -> String {
        guard state?.lockoutAuthSet == false else { return "With the lockout code: keystore tpm-reset-lockout." }
        var raw = "tpm2_dictionarylockout --clear-lockout"
        if let tcti, tcti != TPM.defaultTCTI { raw += " -T " + ShellWord.quoted(tcti) }
        return "To end it now: keystore tpm-reset-lockout (or \(raw))."
    }
}
