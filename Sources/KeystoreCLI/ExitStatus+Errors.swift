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
        if let error = error as? CommandLineError {
            self = error.exitStatus
        } else {
            self = Self.alwaysInvalidInput.contains { ObjectIdentifier($0) == ObjectIdentifier(type(of: error)) } ? .invalidInput : .system
        }
    }

    /// The libraries' errors that are bad input whatever their case: each says what is wrong with what was given.
    private static let alwaysInvalidInput: [any KeystoreError.Type] = [
        StrKeyError.self, MnemonicError.self, KeyError.self, PINError.self, StellarCLIImportError.self, KeystoreUseError.self,
        AuthorizationError.self, SmartAccountError.self, P256Error.self, AccountSignersError.self, CombineError.self, TrimError.self,
        SigningRefusal.self, WebAuthSigningError.self, ContractSignInError.self, HostRequestError.self,
    ]
}

/// A backup that the secret given does not open is a wrong secret, as a wrong PIN is; one that is damaged or not
/// a backup is bad input.
extension AgeError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .noMatchingIdentity, .wrongPassphrase, .invalidIdentity: .incorrectPIN
        // An age plugin is a program of the system's, like a token: missing, failing or refusing is the system's no.
        case .pluginNotFound, .pluginFailed, .pluginTimedOut, .pluginBrokeProtocol, .pluginRefused: .system
        default: .invalidInput
        }
    }
}
extension BackupError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .noSuchIdentity: .vaultNotFound
        case .differentKeyHere, .outputExists, .changedSincePlan: .vaultExists
        case .probeFailed, .restoreStopped: .system
        case .wasTPMBound: .refused
        default: .invalidInput
        }
    }
}
extension WebAuthError: CommandLineError { var exitStatus: ExitStatus { .challengeRefused } }
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
        case .unsafeFile, .unreadable, .writersNotNamed: .system
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
