import Glibc
import Synchronization
internal import CPKCS11
import StellarKeys
import StellarText

/// The one boundary to PKCS#11 (OASIS PKCS#11 3.0; the module loaded by its path, CPKCS11): find a token, log in,
/// make an Ed25519 key that never leaves it, list such keys, and sign with one. Nothing else in keystore calls a
/// PKCS#11 module.
///
/// A module is process-global: it is initialised once (`C_Initialize`), its login state is per token and per
/// process, not per session (section 5.6), and finalising it would close every session anyone in the process has.
/// So a module, once loaded, stays loaded and initialised for the life of the process, one per file: the same
/// file reached by two paths (a link and its target) is one module, whose sessions are counted together.
public final class PKCS11Module: @unchecked Sendable {
    // @unchecked: the stored properties are constants; the module itself is initialised with
    // CKF_OS_LOCKING_OK, so it may be called from any thread (section 5.1.6).

    /// The module's file, every link followed: the file that was checked and loaded.
    public let path: String
    let library: Library

    /// Loads the module at `path` (an absolute path: a path kept in a vault must not depend on the working
    /// directory), or finds it loaded already in this process. Only a file that nobody but root and this user can
    /// change or swap is loaded (`ModuleFile`).
    public convenience init(path: String) throws {
        try self.init(ModuleFile(path: path))
    }

    /// Loads the file opened and checked, or finds the same file (by device and inode) loaded already.
    init(_ file: ModuleFile) throws {
        path = file.path
        library = try Library.loaded(file)
    }

    /// The PKCS#11 version of the function list the module gave (3.0 from `C_GetInterface`, else that of
    /// `C_GetFunctionList`, 2.40 for most modules), "major.minor".
    package var interfaceVersion: String {
        "\(library.functions.pointee.version.major).\(library.functions.pointee.version.minor)"
    }

    /// The slots that have a token present, each with its token.
    public func tokens() throws -> [PKCS11Token] {
        let slots = try library.list("list the slots", limit: Library.maximumSlots) { buffer, count in
            library.functions.pointee.C_GetSlotList?(CK_BBOOL(CK_TRUE), buffer, count) ?? CKR_FUNCTION_NOT_SUPPORTED
        }
        var tokens: [PKCS11Token] = []
        for slot in slots {
            // A token pulled out between the two calls is simply not there.
            do { tokens.append(try library.token(in: slot)) } catch TokenError.failed(_, "CKR_TOKEN_NOT_PRESENT") { continue }
        }
        return tokens
    }
}

/// A token in a slot, as `C_GetTokenInfo` describes it. The text fields are the token's, with the space padding
/// of PKCS#11's fixed-width fields removed.
public struct PKCS11Token: Sendable, Equatable {
    package let slotID: UInt
    public let label: String
    public let serial: String
    package let manufacturer: String
    public let model: String
    /// Whether the token has been initialized (`CKF_TOKEN_INITIALIZED`): SoftHSM2 always offers one more slot
    /// with a token that is not, and has no user PIN yet.
    package let isInitialized: Bool
    /// Whether the token wants a PIN before it signs (`CKF_LOGIN_REQUIRED`).
    package let loginRequired: Bool
    /// A wrong user PIN has been counted since the last good one (`CKF_USER_PIN_COUNT_LOW`).
    package let pinCountLow: Bool
    /// One more wrong user PIN locks the token (`CKF_USER_PIN_FINAL_TRY`).
    package let pinFinalTry: Bool
    /// The user PIN is locked (`CKF_USER_PIN_LOCKED`).
    package let pinLocked: Bool
    /// The token makes Ed25519 keys and signs with them (`CKM_EC_EDWARDS_KEY_PAIR_GEN` and `CKM_EDDSA`).
    package let supportsEdDSA: Bool

    /// How the token is named in a message: its label and serial number.
    public var name: String { "\(label) (serial \(serial))" }
}

/// An Ed25519 key pair in a token: the private key's attributes and its public key.
public struct PKCS11KeyInfo: Sendable, Equatable {
    /// `CKA_ID`, by which the key is found again.
    public let id: [UInt8]
    public let label: String
    public let publicKey: PublicKey
    /// Whether the token would hand the private key out (wrapped); a key keystore makes never is.
    public let extractable: Bool
    /// Whether the token keeps the private key's value secret; a key keystore makes always is.
    public let sensitive: Bool
}

/// A session on one token, through which an identity logs in and signs. A PKCS#11 session is not for concurrent
/// use, so its calls are serialised. Closing it (deinit) closes the session, and logs the token out when it
/// was this process's last session on it.
public final class PKCS11Session: @unchecked Sendable {
    // @unchecked: the stored properties are constants, and every call on `handle` holds `lock`.
    public let module: PKCS11Module
    /// The token, as it was when the session opened.
    public let token: PKCS11Token
    private let handle: CK_SESSION_HANDLE
    private let lock = Mutex<Void>(())

    /// Opens a session on the token with this serial number (and this label, when one is given).
    public init(module: PKCS11Module, token serial: String, label: String?) throws {
        guard let token = try module.tokens().first(where: { $0.serial == serial && (label == nil || $0.label == label) }) else {
            throw TokenError.tokenNotFound(serial: serial, label: label)
        }
        self.module = module
        self.token = token
        // Read-write, since a new key is a token object; a write-protected token still signs in a read-only one.
        var handle: CK_SESSION_HANDLE = 0
        let functions = module.library.functions.pointee
        var opened = functions.C_OpenSession?(token.slotID, CKF_SERIAL_SESSION | CKF_RW_SESSION, nil, nil, &handle) ?? CKR_FUNCTION_NOT_SUPPORTED
        if opened == CKR_TOKEN_WRITE_PROTECTED {
            opened = functions.C_OpenSession?(token.slotID, CKF_SERIAL_SESSION, nil, nil, &handle) ?? CKR_FUNCTION_NOT_SUPPORTED
        }
        try Library.check("open a session", opened)
        self.handle = handle
        module.library.sessionOpened(on: token.slotID)
    }

    deinit {
        let functions = module.library.functions.pointee
        // The login is the token's, shared by every session of this process on it (section 5.6): logging out
        // while another session is open would log that one out too. The last one to close logs out.
        if module.library.sessionClosing(on: token.slotID) { _ = functions.C_Logout?(handle) }
        _ = functions.C_CloseSession?(handle)
    }

    /// Logs in as the token's user, with the PIN passed to the module straight from `pin`'s memory. Not public:
    /// a login is the way to the token's signatures, and an app reaches them only through a review, with the PIN
    /// counted (`TokenKey`).
    package func login(pin: SecureBytes) throws {
        try lock.withLock { _ in
            guard let login = functions.C_Login else { throw TokenError.failed(operation: "log in", code: "CKR_FUNCTION_NOT_SUPPORTED") }
            func tryPIN() -> CK_RV {
                pin.withUnsafeBytes { raw in
                    // C_Login takes a non-const pointer but only reads the PIN.
                    login(handle, CKU_USER, UnsafeMutablePointer(mutating: raw.bindMemory(to: CK_UTF8CHAR.self).baseAddress), CK_ULONG(raw.count))
                }
            }
            var rv = tryPIN()
            if rv == CKR_USER_ALREADY_LOGGED_IN {
                // A login belongs to the whole process (a signing agent already holding this token): taken as is,
                // any PIN would pass. Logged out and in again, the PIN is the token's to judge; a wrong one leaves
                // the token logged out, and the process's other sessions on it sign nothing until a right one.
                _ = functions.C_Logout?(handle)
                rv = tryPIN()
            }
            switch rv {
            case CKR_OK:
                return
            case CKR_PIN_INCORRECT:
                // What is left is in the token's flags, read after the count (section 3.2, CK_TOKEN_INFO). Some
                // tokens lock on the try that used the last one and still answer CKR_PIN_INCORRECT.
                guard let now = try? module.library.token(in: token.slotID) else {
                    throw TokenError.wrongPIN(token: token.name, triesLeft: .unknown)
                }
                if now.pinLocked { throw TokenError.pinLocked(token: token.name) }
                throw TokenError.wrongPIN(token: token.name, triesLeft: now.pinFinalTry ? .one : now.pinCountLow ? .few : .unknown)
            case CKR_PIN_LOCKED:
                throw TokenError.pinLocked(token: token.name)
            default:
                throw Library.failure("log in", rv)
            }
        }
    }

    /// Makes an Ed25519 key pair in the token (`CKM_EC_EDWARDS_KEY_PAIR_GEN`): the private key is a token object,
    /// private (seen only after login), sensitive and not extractable, so its value never leaves the token; it
    /// only signs. The public key is a public token object with the same label and ID. Refuses a label or an ID
    /// that an object on the token has already.
    package func generateEd25519Key(label: String, id: [UInt8]) throws -> PKCS11KeyInfo {
        try lock.withLock { _ in
            try Self.checkName(label: label, id: id)
            guard token.supportsEdDSA else { throw TokenError.noEdDSA(token: token.name) }
            let labelBytes = Array(label.utf8)
            if try !findObjects("look for the label", Template().adding(CKA_LABEL, labelBytes)).isEmpty {
                throw TokenError.keyExists(label: label, id: nil)
            }
            if try !findObjects("look for the ID", Template().adding(CKA_ID, id)).isEmpty {
                throw TokenError.keyExists(label: nil, id: id)
            }
            let privateTemplate = Template()
                .adding(CKA_TOKEN, true).adding(CKA_PRIVATE, true).adding(CKA_SENSITIVE, true)
                .adding(CKA_EXTRACTABLE, false).adding(CKA_SIGN, true).adding(CKA_LABEL, labelBytes).adding(CKA_ID, id)
            let publicTemplate = Template()
                .adding(CKA_TOKEN, true).adding(CKA_PRIVATE, false).adding(CKA_VERIFY, true)
                .adding(CKA_LABEL, labelBytes).adding(CKA_ID, id)
            var (publicKey, privateKey) = try generateKeyPair(publicTemplate.adding(CKA_EC_PARAMS, Self.ed25519Parameters), privateTemplate)
            if publicKey == nil {
                // Modules written before RFC 8410 (SoftHSM2 2.6, OpenSC's pkcs11-tool) know the curve only by
                // the name PKCS#11 3.0 also allows (section 2.3.6): the PrintableString "edwards25519".
                (publicKey, privateKey) = try generateKeyPair(publicTemplate.adding(CKA_EC_PARAMS, Self.edwards25519Name), privateTemplate)
            }
            guard let publicKey, let privateKey else {
                throw TokenError.failed(operation: "make an Ed25519 key", code: "CKR_CURVE_NOT_SUPPORTED")
            }
            do {
                guard let info = try keyInfo(privateKey, publicKeyObject: publicKey) else {
                    throw TokenError.malformedAnswer(operation: "make an Ed25519 key", detail: "its public key is not an Ed25519 key")
                }
                // A module may ignore a template's attribute instead of refusing it.
                guard info.sensitive, !info.extractable else {
                    throw TokenError.malformedAnswer(operation: "make an Ed25519 key", detail: "it made the private key extractable or not sensitive")
                }
                return info
            } catch {
                _ = functions.C_DestroyObject?(handle, privateKey)
                _ = functions.C_DestroyObject?(handle, publicKey)
                throw error
            }
        }
    }

    /// Destroys the objects with this ID: a key pair `generateEd25519Key` made that is to belong to no identity
    /// (its ID was new, so nothing else has it). Best effort: the module's refusal is not an error worth more
    /// than the one that made the pair useless.
    package func destroyKeyPair(id: [UInt8]) {
        lock.withLock { _ in
            guard let objects = try? findObjects("look for the key pair", Template().adding(CKA_ID, id)) else { return }
            for object in objects { _ = functions.C_DestroyObject?(handle, object) }
        }
    }

    /// The Ed25519 private keys on the token (with their public keys) that have this label and this ID, where
    /// given. Private keys are seen only after login. A private key whose public key cannot be read (no public
    /// key object with its ID, and no `CKA_EC_POINT` of its own) is not listed: it cannot name an account.
    public func keys(label: String?, id: [UInt8]?) throws -> [PKCS11KeyInfo] {
        try lock.withLock { _ in
            var template = Self.ed25519PrivateKeys
            if let label { template = template.adding(CKA_LABEL, Array(label.utf8)) }
            if let id { template = template.adding(CKA_ID, id) }
            return try findObjects("look for keys", template).compactMap { try keyInfo($0, publicKeyObject: nil) }
        }
    }

    /// Signs `message` with the private key that has this ID (`CKM_EDDSA` without parameters: pure Ed25519,
    /// RFC 8032), looked up on every call so that a key deleted meanwhile is reported as missing.
    /// Not public: an app signs with a token's key only through a review (`TokenKey`).
    package func sign(_ message: [UInt8], key id: [UInt8]) throws -> [UInt8] {
        try lock.withLock { _ in
            let found = try findObjects("look for the key", Self.ed25519PrivateKeys.adding(CKA_ID, id))
            guard let key = found.first else {
                // A logged-out session sees no private key: say so, rather than that the key was deleted (a wrong
                // PIN tried elsewhere in this process logs the whole process out).
                var info = CK_SESSION_INFO(slotID: 0, state: 0, flags: 0, ulDeviceError: 0)
                if functions.C_GetSessionInfo?(handle, &info) == CKR_OK, info.state != CKS_RO_USER_FUNCTIONS, info.state != CKS_RW_USER_FUNCTIONS {
                    throw TokenError.notLoggedIn(token: token.name)
                }
                throw TokenError.keyNotFound(id: id)
            }
            guard found.count == 1 else { throw TokenError.ambiguousKey(id: id) }
            var mechanism = CK_MECHANISM(mechanism: CKM_EDDSA, pParameter: nil, ulParameterLen: 0)
            try check("start signing", functions.C_SignInit?(handle, &mechanism, key))
            var signature = [UInt8](repeating: 0, count: Self.signatureBytes)
            var length = CK_ULONG(signature.count)
            var message = message
            let signed = functions.C_Sign?(handle, &message, CK_ULONG(message.count), &signature, &length) ?? CKR_FUNCTION_NOT_SUPPORTED
            if signed == CKR_BUFFER_TOO_SMALL {
                // The operation stays active until a call gets the whole signature (section 5.2): end it, with a
                // bounded buffer, before saying the length is wrong.
                if length <= Self.maximumAttributeBytes {
                    var longer = [UInt8](repeating: 0, count: Int(length))
                    _ = functions.C_Sign?(handle, &message, CK_ULONG(message.count), &longer, &length)
                }
                throw TokenError.badSignature(length: Int(min(length, CK_ULONG(Int.max))))
            }
            switch signed {
            case CKR_OK: break
            case CKR_USER_NOT_LOGGED_IN: throw TokenError.notLoggedIn(token: token.name)
            default: throw Library.failure("sign", signed)
            }
            guard length == CK_ULONG(Self.signatureBytes) else { throw TokenError.badSignature(length: Int(length)) }
            return signature
        }
    }

    // MARK: Objects

    static let signatureBytes = 64
    /// An attribute keystore reads is a label, an ID, a flag or a public key: none comes near this.
    static let maximumAttributeBytes: CK_ULONG = 4096
    /// More objects than this matching one search is not a token keystore can use.
    static let maximumObjects = 1024

    /// id-Ed25519 (RFC 8410, 1.3.101.112), DER: the curve as PKCS#11 3.0 names it (section 2.3.6).
    static let ed25519Parameters: [UInt8] = [0x06, 0x03, 0x2B, 0x65, 0x70]
    /// PrintableString "edwards25519", DER: the older name of the same curve.
    static let edwards25519Name: [UInt8] = [0x13, 0x0C] + Array("edwards25519".utf8)

    private static var ed25519PrivateKeys: Template {
        Template().adding(CKA_CLASS, CKO_PRIVATE_KEY).adding(CKA_KEY_TYPE, CKK_EC_EDWARDS)
    }

    private var functions: CK_FUNCTION_LIST { module.library.functions.pointee }

    private static func checkName(label: String, id: [UInt8]) throws {
        guard !label.isEmpty, label.utf8.count <= 255, TerminalText.isPlain(label) else {
            throw TokenError.invalidKeyName(reason: "a label has 1 to 255 bytes of printable text")
        }
        guard !id.isEmpty, id.count <= 255 else { throw TokenError.invalidKeyName(reason: "an ID has 1 to 255 bytes") }
    }

    /// The key pair's handles, or nils when the module refused the curve parameters (so the other form can be tried).
    private func generateKeyPair(_ publicTemplate: Template, _ privateTemplate: Template) throws -> (CK_OBJECT_HANDLE?, CK_OBJECT_HANDLE?) {
        var mechanism = CK_MECHANISM(mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN, pParameter: nil, ulParameterLen: 0)
        var publicKey: CK_OBJECT_HANDLE = 0
        var privateKey: CK_OBJECT_HANDLE = 0
        let rv = publicTemplate.withAttributes { publicAttributes, publicCount in
            privateTemplate.withAttributes { privateAttributes, privateCount in
                functions.C_GenerateKeyPair?(handle, &mechanism, publicAttributes, publicCount, privateAttributes, privateCount,
                                             &publicKey, &privateKey) ?? CKR_FUNCTION_NOT_SUPPORTED
            }
        }
        switch rv {
        case CKR_OK: return (publicKey, privateKey)
        case CKR_CURVE_NOT_SUPPORTED, CKR_DOMAIN_PARAMS_INVALID, CKR_ATTRIBUTE_VALUE_INVALID, CKR_TEMPLATE_INCONSISTENT: return (nil, nil)
        case CKR_USER_NOT_LOGGED_IN: throw TokenError.notLoggedIn(token: token.name)
        default: throw Library.failure("make an Ed25519 key", rv)
        }
    }

    private func findObjects(_ operation: String, _ template: Template) throws -> [CK_OBJECT_HANDLE] {
        try template.withAttributes { attributes, count in
            try check(operation, functions.C_FindObjectsInit?(handle, attributes, count))
        }
        defer { _ = functions.C_FindObjectsFinal?(handle) }
        var found: [CK_OBJECT_HANDLE] = []
        var batch = [CK_OBJECT_HANDLE](repeating: 0, count: 64)
        while true {
            var count: CK_ULONG = 0
            try check(operation, functions.C_FindObjects?(handle, &batch, CK_ULONG(batch.count), &count))
            guard count <= CK_ULONG(batch.count) else {
                throw TokenError.malformedAnswer(operation: operation, detail: "it found \(count) objects in a batch of \(batch.count)")
            }
            if count == 0 { return found }
            found += batch.prefix(Int(count))
            guard found.count <= Self.maximumObjects else {
                throw TokenError.malformedAnswer(operation: operation, detail: "it found more than \(Self.maximumObjects) objects")
            }
        }
    }

    /// The key's description, with its public key from `publicKeyObject`, else from the public key object with
    /// its ID, else from its own `CKA_EC_POINT`; nil when none of these is an Ed25519 public key.
    private func keyInfo(_ key: CK_OBJECT_HANDLE, publicKeyObject: CK_OBJECT_HANDLE?) throws -> PKCS11KeyInfo? {
        let id = try attribute(CKA_ID, of: key) ?? []
        let labelBytes = try attribute(CKA_LABEL, of: key) ?? []
        guard let label = String(validating: labelBytes, as: UTF8.self), TerminalText.isPlain(label) else {
            throw TokenError.malformedAnswer(operation: "read a key's label", detail: "it is not printable text")
        }
        var points: [[UInt8]] = []
        if let publicKeyObject {
            points += [try attribute(CKA_EC_POINT, of: publicKeyObject)].compactMap { $0 }
        } else if !id.isEmpty {
            let template = Template().adding(CKA_CLASS, CKO_PUBLIC_KEY).adding(CKA_KEY_TYPE, CKK_EC_EDWARDS).adding(CKA_ID, id)
            for object in try findObjects("look for the public key", template) {
                points += [try attribute(CKA_EC_POINT, of: object)].compactMap { $0 }
            }
        }
        points += [try attribute(CKA_EC_POINT, of: key)].compactMap { $0 }
        let keys = Set(points.compactMap { Self.ed25519PublicKey(fromPoint: $0) })
        // Two public keys with one ID: which one the private key matches is not known, so it names no account.
        guard keys.count == 1, let publicKey = keys.first else { return nil }
        return PKCS11KeyInfo(id: id, label: label, publicKey: publicKey,
                             extractable: try flag(CKA_EXTRACTABLE, of: key) ?? true,
                             sensitive: try flag(CKA_SENSITIVE, of: key) ?? false)
    }

    /// `CKA_EC_POINT` of an Ed25519 key: the DER OCTET STRING of the 32-byte public key (PKCS#11 3.0,
    /// section 2.3.5), or, as some modules give it, the 32 bytes bare.
    static func ed25519PublicKey(fromPoint point: [UInt8]) -> PublicKey? {
        if point.count == 34, point[0] == 0x04, point[1] == 0x20 { return try? PublicKey(rawRepresentation: Array(point[2...])) }
        if point.count == 32 { return try? PublicKey(rawRepresentation: point) }
        return nil
    }

    private func flag(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE) throws -> Bool? {
        guard let value = try attribute(type, of: object) else { return nil }
        guard value.count == 1 else {
            throw TokenError.malformedAnswer(operation: "read a key's attributes", detail: "a flag of \(value.count) bytes")
        }
        return value[0] != 0
    }

    /// One attribute's value; nil when the object does not have it or will not show it.
    private func attribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE) throws -> [UInt8]? {
        let operation = "read a key's attributes"
        var query = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
        let sized = functions.C_GetAttributeValue?(handle, object, &query, 1) ?? CKR_FUNCTION_NOT_SUPPORTED
        switch sized {
        case CKR_OK: break
        case CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID: return nil
        case CKR_OBJECT_HANDLE_INVALID: throw TokenError.failed(operation: operation, code: "CKR_OBJECT_HANDLE_INVALID")
        default: throw Library.failure(operation, sized)
        }
        if query.ulValueLen == CK_UNAVAILABLE_INFORMATION { return nil }
        guard query.ulValueLen <= Self.maximumAttributeBytes else {
            throw TokenError.malformedAnswer(operation: operation, detail: "an attribute of \(query.ulValueLen) bytes")
        }
        var value = [UInt8](repeating: 0, count: Int(query.ulValueLen))
        let rv = value.withUnsafeMutableBytes { buffer in
            var read = CK_ATTRIBUTE(type: type, pValue: buffer.baseAddress, ulValueLen: CK_ULONG(buffer.count))
            let rv = functions.C_GetAttributeValue?(handle, object, &read, 1) ?? CKR_FUNCTION_NOT_SUPPORTED
            query.ulValueLen = read.ulValueLen
            return rv
        }
        try check(operation, rv)
        guard query.ulValueLen <= CK_ULONG(value.count) else {
            throw TokenError.malformedAnswer(operation: operation, detail: "an attribute longer than it said")
        }
        return Array(value.prefix(Int(query.ulValueLen)))
    }

    private func check(_ operation: String, _ rv: CK_RV?) throws {
        let rv = rv ?? CKR_FUNCTION_NOT_SUPPORTED
        if rv == CKR_USER_NOT_LOGGED_IN { throw TokenError.notLoggedIn(token: token.name) }
        try Library.check(operation, rv)
    }
}

// MARK: - The loaded module

/// A module's file, opened for loading once `keystore_pkcs11_open_module` has walked its path and found nobody but
/// root and this user able to change or swap any link, directory or the file on it. Loading it through its
/// descriptor (`/proc/self/fd/N`) loads exactly the file checked, whatever the path names by then (a link swapped
/// in between), and a FIFO or device is refused before anything waits on it.
final class ModuleFile {
    /// Which file it is: the same file by two paths is one module.
    struct Identity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// The path as given, which messages name.
    let givenPath: String
    /// The file's path, every link followed.
    let path: String
    let identity: Identity
    let descriptor: Int32

    init(path given: String) throws {
        var descriptor: Int32 = -1
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        var culprit = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        var number: Int32 = 0
        let check = keystore_pkcs11_open_module(given, getuid(), &descriptor, &resolved, resolved.count, &culprit, culprit.count, &number)
        guard check == KEYSTORE_MODULE_OPENED else {
            throw TokenError.moduleNotLoadable(path: given, reason: Self.reason(check, at: Self.string(culprit), errorNumber: number))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = Self.reason(KEYSTORE_MODULE_CANNOT_OPEN, at: Self.string(resolved), errorNumber: errno)
            close(descriptor)
            throw TokenError.moduleNotLoadable(path: given, reason: reason)
        }
        // Every property set last: a throwing init of a final class that had set them all would still run deinit.
        self.givenPath = given
        self.path = Self.string(resolved)
        self.identity = Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func reason(_ check: keystore_module_check, at culprit: String, errorNumber: Int32) -> String {
        switch check {
        case KEYSTORE_MODULE_NOT_ABSOLUTE: "the path is not absolute"
        case KEYSTORE_MODULE_CANNOT_OPEN where errorNumber == ENOENT: "\(culprit) does not exist"
        case KEYSTORE_MODULE_CANNOT_OPEN: "\(culprit) cannot be read (\(String(cString: strerror(errorNumber))))"
        case KEYSTORE_MODULE_OTHER_OWNER: "\(culprit) belongs to another user"
        case KEYSTORE_MODULE_WRITABLE: "\(culprit) may be changed by other users"
        case KEYSTORE_MODULE_NOT_REGULAR: "\(culprit) is not a regular file"
        case KEYSTORE_MODULE_NOT_DIRECTORY: "\(culprit) is not a directory"
        case KEYSTORE_MODULE_TOO_MANY_LINKS: "its path goes through more than 40 links"
        case KEYSTORE_MODULE_CHANGED: "\(culprit) was replaced while it was checked"
        default: "its path is too long"
        }
    }
}

/// A module loaded and initialised, one per file for the life of the process (see `PKCS11Module`): never
/// finalised, never unloaded.
final class Library: @unchecked Sendable {
    // @unchecked: `functions` points into the module, which stays loaded; the session counts are under a Mutex.
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    private let sessions = Mutex<[CK_SLOT_ID: Int]>([:])

    /// A module's slot list longer than this is not one keystore can use.
    static let maximumSlots = 256
    /// Nor a mechanism list longer than this (a large HSM has a few hundred).
    static let maximumMechanisms = 4096

    /// The modules loaded, by file; and the descriptor numbers whose `/proc/self/fd/N` has named one.
    private struct Loaded {
        var libraries: [ModuleFile.Identity: Library] = [:]
        var numbersUsed: Set<Int32> = []
    }

    private static let loadedLibraries = Mutex<Loaded>(Loaded())

    private init(functions: UnsafeMutablePointer<CK_FUNCTION_LIST>) {
        self.functions = functions
    }

    /// The library in `file`, loading and initialising it on first use. Keyed by the file, not its path: two
    /// `Library`s for one module would each count only their own sessions, and the last of one to close would log
    /// out the other's (`C_Logout` is the process's, section 5.6). Under the lock, so that two threads do not
    /// initialise one module twice.
    static func loaded(_ file: ModuleFile) throws -> Library {
        try loadedLibraries.withLock { loaded in
            if let library = loaded.libraries[file.identity] { return library }
            let library = try load(file, numbersUsed: &loaded.numbersUsed)
            loaded.libraries[file.identity] = library
            return library
        }
    }

    private static func load(_ file: ModuleFile, numbersUsed: inout Set<Int32>) throws -> Library {
        let path = file.givenPath
        let (number, duplicate) = try descriptorNumber(for: file, avoiding: &numbersUsed)
        defer { if duplicate { close(number) } }
        let name = "/proc/self/fd/\(number)"
        var error = [CChar](repeating: 0, count: 512)
        guard let handle = keystore_pkcs11_open(name, &error, error.count) else {
            var reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if reason.hasPrefix(name + ": ") { reason.removeFirst(name.count + 2) }
            throw TokenError.moduleNotLoadable(path: path, reason: reason)
        }
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
        var rv = CKR_OK
        guard keystore_pkcs11_functions(handle, &list, &rv) == KEYSTORE_PKCS11_CALLED else {
            dlclose(handle)
            throw TokenError.notPKCS11(path: path)
        }
        guard rv == CKR_OK, let list else {
            dlclose(handle)
            throw failure("give its function list", rv == CKR_OK ? CKR_GENERAL_ERROR : rv)
        }
        // The module's own locking (section 5.1.6): keystore calls it from several threads (the agent).
        var arguments = CK_C_INITIALIZE_ARGS(CreateMutex: nil, DestroyMutex: nil, LockMutex: nil, UnlockMutex: nil,
                                             flags: CKF_OS_LOCKING_OK, pReserved: nil)
        let initialised = list.pointee.C_Initialize?(&arguments) ?? CKR_FUNCTION_NOT_SUPPORTED
        // Already initialised: another library in this process uses the module too, which is fine.
        guard initialised == CKR_OK || initialised == CKR_CRYPTOKI_ALREADY_INITIALIZED else {
            dlclose(handle)
            throw failure("start the module", initialised)
        }
        return Library(functions: list)
    }

    /// The number of a descriptor of `file` that no module was loaded through before, and whether it is a
    /// duplicate (the caller's to close). dlopen looks for a module already loaded under the name it is given
    /// before it opens anything (glibc 2.36), so "/proc/self/fd/N" would hand back the module loaded earlier
    /// through a descriptor numbered N, unopened.
    static func descriptorNumber(for file: ModuleFile, avoiding numbersUsed: inout Set<Int32>) throws -> (Int32, duplicate: Bool) {
        var number = file.descriptor
        var duplicate = false
        if numbersUsed.contains(number) {
            number = fcntl(file.descriptor, F_DUPFD_CLOEXEC, (numbersUsed.max() ?? number) + 1)
            guard number >= 0 else {
                throw TokenError.moduleNotLoadable(path: file.givenPath, reason: "no file descriptor is left (\(String(cString: strerror(errno))))")
            }
            duplicate = true
        }
        numbersUsed.insert(number)
        return (number, duplicate)
    }

    /// The token in `slot`, described.
    func token(in slot: CK_SLOT_ID) throws -> PKCS11Token {
        var info = CK_TOKEN_INFO()
        try Self.check("describe a token", functions.pointee.C_GetTokenInfo?(slot, &info) ?? CKR_FUNCTION_NOT_SUPPORTED)
        let mechanisms = try list("list the token's mechanisms", limit: Self.maximumMechanisms) { buffer, count in
            functions.pointee.C_GetMechanismList?(slot, buffer, count) ?? CKR_FUNCTION_NOT_SUPPORTED
        }
        return PKCS11Token(
            slotID: slot,
            label: try Self.text(info.label, "label"), serial: try Self.text(info.serialNumber, "serial number"),
            manufacturer: try Self.text(info.manufacturerID, "manufacturer"), model: try Self.text(info.model, "model"),
            isInitialized: info.flags & CKF_TOKEN_INITIALIZED != 0,
            loginRequired: info.flags & CKF_LOGIN_REQUIRED != 0, pinCountLow: info.flags & CKF_USER_PIN_COUNT_LOW != 0,
            pinFinalTry: info.flags & CKF_USER_PIN_FINAL_TRY != 0, pinLocked: info.flags & CKF_USER_PIN_LOCKED != 0,
            supportsEdDSA: mechanisms.contains(CKM_EDDSA) && mechanisms.contains(CKM_EC_EDWARDS_KEY_PAIR_GEN))
    }

    /// A list the module fills in two calls (section 5.2): the count, then the items. The count is bounded
    /// before it becomes a size, and asked again if it grew in between (a token inserted).
    func list(_ operation: String, limit: Int, _ call: (UnsafeMutablePointer<CK_ULONG>?, UnsafeMutablePointer<CK_ULONG>) -> CK_RV) throws -> [CK_ULONG] {
        for _ in 0..<3 {
            var count: CK_ULONG = 0
            try Self.check(operation, call(nil, &count))
            guard count <= CK_ULONG(limit) else {
                throw TokenError.malformedAnswer(operation: operation, detail: "\(count) items, more than \(limit)")
            }
            var items = [CK_ULONG](repeating: 0, count: Int(count))
            let rv = items.withUnsafeMutableBufferPointer { call($0.baseAddress, &count) }
            if rv == CKR_BUFFER_TOO_SMALL { continue }
            try Self.check(operation, rv)
            guard count <= CK_ULONG(items.count) else {
                throw TokenError.malformedAnswer(operation: operation, detail: "\(count) items in room for \(items.count)")
            }
            return Array(items.prefix(Int(count)))
        }
        throw TokenError.malformedAnswer(operation: operation, detail: "the list kept growing")
    }

    func sessionOpened(on slot: CK_SLOT_ID) {
        sessions.withLock { $0[slot, default: 0] += 1 }
    }

    /// Whether the session closing was the process's last one on the token.
    func sessionClosing(on slot: CK_SLOT_ID) -> Bool {
        sessions.withLock { open in
            open[slot, default: 1] -= 1
            return open[slot] == 0
        }
    }

    /// A fixed-width text field of CK_TOKEN_INFO: UTF-8 padded with spaces (section 3.2; some modules pad with
    /// NULs), which must be printable.
    static func text<Field>(_ field: Field, _ name: String) throws -> String {
        let bytes = withUnsafeBytes(of: field) { Array($0) }
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x20 || bytes[end - 1] == 0 { end -= 1 }
        guard let text = String(validating: bytes[..<end], as: UTF8.self), TerminalText.isPlain(text) else {
            throw TokenError.malformedAnswer(operation: "describe a token", detail: "its \(name) is not printable text")
        }
        return text
    }

    static func check(_ operation: String, _ rv: CK_RV) throws {
        guard rv == CKR_OK else { throw failure(operation, rv) }
    }

    static func failure(_ operation: String, _ rv: CK_RV) -> TokenError {
        let name = keystore_pkcs11_rv_name(rv).map { String(cString: $0) } ?? "0x" + String(rv, radix: 16)
        return .failed(operation: operation, code: name)
    }
}

// MARK: - Templates

/// A PKCS#11 attribute template: each value kept until the call that reads it returns.
private struct Template {
    private var entries: [(type: CK_ATTRIBUTE_TYPE, value: [UInt8])] = []

    func adding(_ type: CK_ATTRIBUTE_TYPE, _ value: [UInt8]) -> Template {
        var copy = self
        copy.entries.append((type, value))
        return copy
    }

    func adding(_ type: CK_ATTRIBUTE_TYPE, _ value: Bool) -> Template {
        adding(type, [value ? CK_BBOOL(CK_TRUE) : CK_BBOOL(CK_FALSE)])
    }

    func adding(_ type: CK_ATTRIBUTE_TYPE, _ value: CK_ULONG) -> Template {
        adding(type, withUnsafeBytes(of: value) { Array($0) })
    }

    /// The attributes, pointing into one buffer, each value aligned for a CK_ULONG.
    func withAttributes<Result>(_ body: (UnsafeMutablePointer<CK_ATTRIBUTE>?, CK_ULONG) throws -> Result) rethrows -> Result {
        let alignment = MemoryLayout<CK_ULONG>.alignment
        var offsets: [Int] = []
        var size = 0
        for entry in entries {
            let offset = (size + alignment - 1) / alignment * alignment
            offsets.append(offset)
            size = offset + entry.value.count
        }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: alignment)
        defer { storage.deallocate() }
        var attributes = zip(offsets, entries).map { offset, entry in
            entry.value.withUnsafeBytes { (storage + offset).copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(storage), byteCount: $0.count) }
            return CK_ATTRIBUTE(type: entry.type, pValue: storage + offset, ulValueLen: CK_ULONG(entry.value.count))
        }
        return try attributes.withUnsafeMutableBufferPointer { try body($0.baseAddress, CK_ULONG($0.count)) }
    }
}
