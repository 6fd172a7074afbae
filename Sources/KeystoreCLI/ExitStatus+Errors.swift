import StellarKeystore
import StellarKeystoreAgent
import StellarKeystoreTPM
import StellarTransactions
import StellarWebAuth

/// An error the command line reports with one of its documented exit codes. The libraries' errors say what
/// happened; which code a script sees for each is the tool's contract, kept here.
protocol CommandLineError: KeystoreError {
    var exitStatus: ExitStatus { get }
}

extension ExitStatus {
    init(of error: KeystoreError) {
        self = (error as? CommandLineError)?.exitStatus ?? .system
    }
}

extension StrKeyError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension MnemonicError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension KeyError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension PINError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension StellarCLIImportError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension KeystoreUseError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
/// A backup that the secret given does not open is a wrong secret, as a wrong PIN is; one that is damaged or not
/// a backup is bad input.
extension AgeError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .noMatchingIdentity, .wrongPassphrase, .invalidIdentity: .incorrectPIN
        default: .invalidInput
        }
    }
}
extension BackupError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .noSuchIdentity: .vaultNotFound
        case .differentKeyHere, .outputExists: .vaultExists
        case .probeFailed: .system
        default: .invalidInput
        }
    }
}
extension AuthorizationError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension SmartAccountError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension P256Error: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension AccountSignersError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension CombineError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension TrimError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension SigningRefusal: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension WebAuthError: CommandLineError { var exitStatus: ExitStatus { .challengeRefused } }
extension WebAuthSigningError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension ContractSignInError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
extension ContractWebAuthError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .notAContract, .expirationOutOfRange: .invalidInput
        case .signedEntryChanged: .system
        default: .challengeRefused
        }
    }
}
extension ReviewError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .signInThroughAgent, .hashMismatch, .notThisAddress, .onlySmartAccounts: .invalidInput
        case .noPIN: .session
        case .signatureInvalid: .system
        }
    }
}

extension WebAuthClientError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .badAddress, .badDomain, .plainHTTP: .invalidInput
        case .httpUnavailable: .system
        default: .server
        }
    }
}

extension AgentError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .notRunning, .keyNotHeld, .identityNotHeld, .noKeys, .severalKeys, .connectionLost: .session
        case .rejected, .refusedByPolicy: .rejected
        case .refused, .socketPathNotAbsolute: .invalidInput
        default: .system
        }
    }
}

/// A policy file that is not safe to take, or not one, is refused before the agent starts.
extension PolicyError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .invalid: .invalidInput
        case .unsafeFile, .unreadable: .system
        }
    }
}
extension PolicyWindowsError: CommandLineError { var exitStatus: ExitStatus { .system } }

extension TransactionRequestError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .signedWithoutOrigin, .originNotSigned, .noSigningKey, .signatureInvalid, .originOnThisMachine: .requestRefused
        case .networkNotConfirmed: .usage
        default: .invalidInput
        }
    }
}

extension TransactionError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .noNetwork, .conflictingNetworks: .usage
        default: .invalidInput
        }
    }
}

extension SessionError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .invalidTTL: .invalidInput
        case .unsafeDirectory: .system
        default: .session
        }
    }
}

extension VaultError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .invalidName, .p256Key: .invalidInput
        case .notFound: .vaultNotFound
        case .alreadyExists, .derivedNameTaken, .beingCreated: .vaultExists
        case .incorrectPIN: .incorrectPIN
        case .throttled: .throttled
        case .corrupt, .unsupportedVersion, .unsafeParameters, .tampered, .misnamed: .vaultDamaged
        case .keyDerivationFailed, .cannotRecordAttempts, .io, .noHomeDirectory, .changedWhileWaiting: .system
        }
    }
}

extension TokenError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .wrongPIN: .incorrectPIN
        case .pinLocked: .throttled
        case .moduleNotLoadable, .notPKCS11, .noEdDSA, .noTokenLabelled, .severalTokens, .severalKeys, .noKeyNamed, .keyExists,
             .invalidKeyName, .unusableKey, .notInToken, .keyCanLeave: .invalidInput
        // The token or its key is not what the vault recorded, or the token misbehaved: nothing the command's input
        // can change.
        case .tokenNotFound, .keyNotFound, .ambiguousKey, .notTheIdentitysKey, .notLoggedIn, .badSignature, .malformedAnswer, .failed: .system
        }
    }
}

extension TPMError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .wrongPIN, .wrongLockoutCode: .incorrectPIN
        case .lockedOut, .lockoutHierarchyLocked: .throttled
        case .boundElsewhere, .malformedObject, .damagedObject, .wrappedElsewhere: .vaultDamaged
        case .malformedLockoutCode: .invalidInput
        case .unavailable, .failed, .lockoutOpen, .lockoutCodeLost, .lockoutChangeInterrupted, .notSupported, .softwareMissing, .outOfObjectMemory: .system
        }
    }
}
