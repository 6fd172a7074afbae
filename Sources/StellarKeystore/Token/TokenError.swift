import StellarKeys
import StellarText

/// What can go wrong between keystore and a PKCS#11 token (a YubiKey, an HSM, SoftHSM2) that holds a key. Each
/// case says what happened in words an app can show; none carries a PIN.
public enum TokenError: KeystoreError, Equatable {
    /// How many PIN tries a token has left, as far as its flags say (PKCS#11 3.0, CK_TOKEN_INFO): a token tells
    /// "few" and "one", never a number.
    public enum TriesLeft: Sendable, Equatable {
        /// The token does not say.
        case unknown
        /// The token says a wrong PIN has been counted (`CKF_USER_PIN_COUNT_LOW`).
        case few
        /// One more wrong PIN locks the token (`CKF_USER_PIN_FINAL_TRY`).
        case one
    }

    /// The module's file is missing, not a shared object this process can load, or named by a relative path.
    case moduleNotLoadable(path: String, reason: String)
    /// The shared object loads but has neither `C_GetInterface` nor `C_GetFunctionList`: it is no PKCS#11 module.
    case notPKCS11(path: String)
    /// No token with this serial number (and label, when one was given) is present in the module's slots.
    case tokenNotFound(serial: String, label: String?)
    /// The token cannot make or use Ed25519 keys (`CKM_EDDSA` or `CKM_EC_EDWARDS_KEY_PAIR_GEN` is missing).
    case noEdDSA(token: String)
    /// The token refused the PIN and counted it.
    case wrongPIN(token: String, triesLeft: TriesLeft)
    /// The token's user PIN is locked after too many wrong ones and refuses every try; its security officer
    /// can unlock it.
    case pinLocked(token: String)
    /// The operation needs a login first.
    case notLoggedIn(token: String)
    /// No Ed25519 private key with this ID on the token: deleted, or on another token.
    case keyNotFound(id: [UInt8])
    /// More than one Ed25519 private key on the token has this ID, so which one signs is not known.
    case ambiguousKey(id: [UInt8])
    /// A key was to be made with a label or an ID that an object on the token has already.
    case keyExists(label: String?, id: [UInt8]?)
    /// A label or ID that cannot name a key (empty, or too long).
    case invalidKeyName(reason: String)
    /// The token returned a signature of the wrong length (an Ed25519 signature has 64 bytes).
    case badSignature(length: Int)
    /// The module answered with something PKCS#11 does not allow (a count or a length out of bounds, text that
    /// is not printable, a public key that is not Ed25519).
    case malformedAnswer(operation: String, detail: String)
    /// No token of the module has this label (or, with none given, the module has no token at all).
    case noTokenLabelled(String?)
    /// Several tokens sign Ed25519 and none was named.
    case severalTokens(labels: [String])
    /// Several Ed25519 keys match the label or ID that was to find one.
    case severalKeys(label: String?, id: [UInt8]?, count: Int)
    /// No Ed25519 key has the label (or ID) that was to find one.
    case noKeyNamed(label: String?, id: [UInt8]?)
    /// The key with the vault's ID has another public key than the one recorded: it was replaced, and is never used.
    case notTheIdentitysKey(id: [UInt8], address: String)
    /// The key is not sensitive, or is extractable: the token would let it out.
    case keyCanLeave(id: [UInt8])
    /// The token's key cannot be recorded (its label or the token's text cannot be a vault's).
    case unusableKey(reason: String)
    /// The identity's key is not in a token.
    case notInToken(name: String)
    /// A PKCS#11 call failed: `code` is the specification's name of its return value (`CKR_DEVICE_ERROR`), or
    /// its number in hex when the name is not known.
    case failed(operation: String, code: String)

    public var message: String {
        switch self {
        case .moduleNotLoadable(let path, let reason):
            "The PKCS#11 module \(TerminalText.escaped(path, limit: nil)) cannot be loaded: \(TerminalText.escaped(reason, limit: nil))."
        case .notPKCS11(let path):
            "\(TerminalText.escaped(path, limit: nil)) is not a PKCS#11 module (it has no C_GetFunctionList)."
        case .tokenNotFound(let serial, nil):
            "No token with serial number \(TerminalText.escaped(serial)) is present."
        case .tokenNotFound(let serial, let label?):
            "No token with serial number \(TerminalText.escaped(serial)) and label \(TerminalText.escaped(label)) is present."
        case .noEdDSA(let token):
            "The token \(TerminalText.escaped(token)) cannot make or use Ed25519 keys."
        case .wrongPIN(let token, .unknown):
            "Incorrect PIN; the token \(TerminalText.escaped(token)) counted it."
        case .wrongPIN(let token, .few):
            "Incorrect PIN; the token \(TerminalText.escaped(token)) counted it and has few tries left before it locks."
        case .wrongPIN(let token, .one):
            "Incorrect PIN; the token \(TerminalText.escaped(token)) counted it: one more wrong PIN locks it."
        case .pinLocked(let token):
            "The token \(TerminalText.escaped(token)) has locked its PIN after too many wrong ones; only its security officer (SO) PIN can unlock it."
        case .notLoggedIn(let token):
            "The token \(TerminalText.escaped(token)) is not logged in (a wrong PIN tried in this process logs it out): it needs its PIN again."
        case .keyNotFound(let id):
            "The token has no Ed25519 private key with ID \(Self.hex(id)): it was deleted, or the token is another."
        case .ambiguousKey(let id):
            "The token has more than one Ed25519 private key with ID \(Self.hex(id)), so which one signs is unknown."
        case .keyExists(let label?, _):
            "The token already has an object labelled \(TerminalText.escaped(label))."
        case .keyExists(nil, let id?):
            "The token already has an object with ID \(Self.hex(id))."
        case .keyExists(nil, nil):
            "The token already has such a key."
        case .invalidKeyName(let reason):
            "That cannot name a key on a token: \(reason)."
        case .badSignature(let length):
            "The token returned a signature of \(length) bytes; an Ed25519 signature has 64."
        case .malformedAnswer(let operation, let detail):
            "The PKCS#11 module answered badly when asked to \(operation): \(TerminalText.escaped(detail, limit: nil))."
        case .failed(let operation, let code):
            "The token could not \(operation) (\(TerminalText.escaped(code)))."
        case .noTokenLabelled(let label?):
            "The module has no token labelled \(TerminalText.escaped(label))."
        case .noTokenLabelled(nil):
            "The module has no token."
        case .severalTokens(let labels):
            "The module has \(labels.count) tokens that sign Ed25519 (\(labels.map { TerminalText.escaped($0) }.joined(separator: ", "))): name one."
        case .severalKeys(let label, let id, let count):
            "The token has \(count) Ed25519 keys \(Self.naming(label, id)): name one by its ID."
        case .noKeyNamed(let label, let id):
            "The token has no Ed25519 key \(Self.naming(label, id)) that can be used (a private key with its public key)."
        case .notTheIdentitysKey(let id, let address):
            "The token's key with ID \(Self.hex(id)) is not \(address)'s: it was replaced, and is not used."
        case .keyCanLeave(let id):
            "The token's key with ID \(Self.hex(id)) may leave the token (it is extractable, or not sensitive); keys that can be copied out are not taken."
        case .unusableKey(let reason):
            "That key cannot be recorded: \(reason)."
        case .notInToken(let name):
            "Identity '\(name)' does not keep its key in a token."
        }
    }

    private static func naming(_ label: String?, _ id: [UInt8]?) -> String {
        [label.map { "labelled \(TerminalText.escaped($0))" }, id.map { "with ID \(hex($0))" }].compactMap { $0 }.joined(separator: " and ")
    }

    /// Whether the token refused the PIN and counted it.
    public var isWrongPIN: Bool { if case .wrongPIN = self { true } else { false } }

    /// Whether the PIN just tried was counted: wrong, or the one that locked the token.
    var countsAsTried: Bool {
        switch self {
        case .wrongPIN, .pinLocked: true
        default: false
        }
    }

    /// A key ID in hex; one longer than `TerminalText.valueLimit` digits (an argument's, or a token's) cut in its
    /// middle, as other text from outside is, saying how long it was.
    private static func hex(_ bytes: [UInt8]) -> String {
        let side = TerminalText.valueLimit / 4
        guard bytes.count > 2 * side else { return bytes.isEmpty ? "(empty)" : Hex.string(bytes) }
        return Hex.string(Array(bytes.prefix(side))) + "…" + Hex.string(Array(bytes.suffix(side))) + " (\(bytes.count) bytes, cut)"
    }
}
