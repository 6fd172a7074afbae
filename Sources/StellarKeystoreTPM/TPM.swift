import Glibc
internal import CTSS2
import StellarKeys
import StellarKeystore

/// The one boundary to a TPM 2.0 (tpm2-tss ESAPI, loaded when first used: CTSS2): seal a secret under an
/// authorisation value, unseal it, make a NIST P-256 signing key that stays in the TPM and sign with it, read the
/// dictionary-attack state, and set or use the lockout authorization. Nothing else in keystore touches tpm2-tss.
///
/// The secret sits in a keyed-hash object, and a signing key in an ECC object, created under a primary storage
/// key that is regenerated on every use from a fixed public template (the TCG SRK template, ECC NIST P-256), so
/// nothing is persisted in the TPM: no NV space, no persistent handle, no owner password. Each object has
/// `userWithAuth` and not `noDA`, so every wrong authorisation value counts against the TPM's dictionary-attack
/// lockout. Every command runs in an HMAC session
/// salted to the primary, with parameter encryption where the command has a parameter to encrypt, so neither the
/// authorisation value, the secret, nor a lockout code crosses the bus in the clear.
public struct TPM: TPMSealer, TPMKeySigning {
    /// A tpm2-tss TCTI configuration: `device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`, …
    public let tcti: String
    /// Whether a new binding may be made while the TPM's lockout authorization is empty. By default it may not:
    /// with an empty one, anyone who can open the TPM resets its wrong-PIN counter (`TPM2_DictionaryAttackLockReset`
    /// needs only that authorization), and the guess limit that a binding promises does not hold.
    public let allowsOpenLockout: Bool

    public static let defaultTCTI = "device:/dev/tpmrm0"
    /// TPM2B_AUTH of a SHA-256 object holds at most a digest.
    static let authValueBytes = 32

    public init(tcti: String = TPM.defaultTCTI, allowingOpenLockout: Bool = false) {
        self.tcti = tcti
        self.allowsOpenLockout = allowingOpenLockout
    }

    /// `$KEYSTORE_TPM_TCTI`, else the kernel's resource manager.
    public init(environment: [String: String], allowingOpenLockout: Bool = false) {
        let setting = environment["KEYSTORE_TPM_TCTI"] ?? ""
        self.init(tcti: setting.isEmpty ? Self.defaultTCTI : setting, allowingOpenLockout: allowingOpenLockout)
    }

    public var name: String { tcti }

    // MARK: Sealing

    public func seal(_ secret: SecureBytes, authValue: SecureBytes, primaryName expected: [UInt8]?) throws -> TPMSealedObject {
        precondition(authValue.count <= Self.authValueBytes && secret.count <= 128)
        return try Connection.open(tcti) { connection in
            if expected == nil { try refuseOpenLockout(connection.dictionaryAttackState()) }
            let (primary, primaryName, session) = try connection.primaryAndSession(expecting: expected)
            // No noDA: wrong values count towards lockout.
            var template = Connection.dataObjectTemplate(
                attributes: KEYSTORE_TPMA_OBJECT_FIXEDTPM | KEYSTORE_TPMA_OBJECT_FIXEDPARENT | KEYSTORE_TPMA_OBJECT_USERWITHAUTH)
            let created = try connection.create(from: &template, holding: secret, authValue: authValue, under: primary, in: session,
                                                what: "the sealed object")
            guard let object = TPMSealedObject(primaryName: primaryName, publicArea: created.publicArea, privateArea: created.privateArea) else {
                throw TPMError.failed(operation: "create the sealed object", detail: "it returned an object that cannot be kept")
            }
            return object
        }
    }

    public func unseal(_ object: TPMSealedObject, authValue: SecureBytes) throws -> SecureBytes {
        try Connection.open(tcti) { connection in
            let (handle, session, _) = try connection.load(object.publicArea, object.privateArea, under: object.primaryName,
                                                           what: "the sealed object")
            try connection.setAuthorisation(of: handle, to: authValue)
            return try connection.unseal(handle, in: session, operation: "unseal", check: connection.checkAuthorised)
        }
    }

    /// Checks that a vault can be sealed here (a TPM answers, its guess limit holds, and its storage key can be
    /// made) without sealing anything, so that nobody types a new PIN for a binding that cannot happen.
    public func checkReadyToSeal() throws {
        try Connection.open(tcti) { connection in
            try refuseOpenLockout(connection.dictionaryAttackState())
            _ = try connection.primaryAndSession(expecting: nil)
        }
    }

    private func refuseOpenLockout(_ state: TPMDictionaryAttackState) throws {
        if !state.lockoutAuthSet && !allowsOpenLockout { throw TPMError.lockoutOpen }
    }

    // MARK: Signing keys

    public func createSigningKey(authValue: SecureBytes) throws -> TPMSigningKey {
        precondition(authValue.count <= Self.authValueBytes)
        return try Connection.open(tcti) { connection in
            // A new key is a new binding, as a new seal is.
            try refuseOpenLockout(connection.dictionaryAttackState())
            let (primary, primaryName, session) = try connection.primaryAndSession(expecting: nil)
            var template = Self.signingKeyTemplate()
            let created = try connection.create(from: &template, authValue: authValue, under: primary, in: session, what: "the signing key")
            guard let publicKey = Self.publicKey(of: created.public),
                  let key = TPMSigningKey(primaryName: primaryName, publicArea: created.publicArea, privateArea: created.privateArea,
                                          publicKey: publicKey)
            else { throw TPMError.failed(operation: "create the signing key", detail: "it returned a key that cannot be kept") }
            return key
        }
    }

    package func signature(for digest: [UInt8], with key: TPMSigningKey, authValue: SecureBytes) throws -> (r: [UInt8], s: [UInt8]) {
        precondition(authValue.count <= Self.authValueBytes)
        guard digest.count == Self.coordinateBytes else {
            throw TPMError.failed(operation: "sign", detail: "a digest of \(digest.count) bytes is not a SHA-256 digest")
        }
        return try Connection.open(tcti) { connection in
            let tss = connection.tss
            // The public key a vault shows must be the one the TPM signs with: the TPM checks the public area
            // against the private one as it loads them, and this checks the public key against the public area.
            let (handle, session, _) = try connection.load(key.publicArea, key.privateArea, under: key.primaryName, what: "the signing key") {
                Self.publicKey(of: $0) == key.publicKey
            }
            try connection.setAuthorisation(of: handle, to: authValue)
            var inDigest = TPM2B_DIGEST()
            digest.withUnsafeBytes { copy($0, into: &inDigest.buffer) }
            inDigest.size = UInt16(digest.count)
            var scheme = TPMT_SIG_SCHEME()
            scheme.scheme = KEYSTORE_TPM2_ALG_ECDSA
            scheme.details.ecdsa.hashAlg = KEYSTORE_TPM2_ALG_SHA256
            // A NULL ticket: an unrestricted key signs any digest, and needs no proof that the TPM hashed it.
            var validation = TPMT_TK_HASHCHECK()
            validation.tag = KEYSTORE_TPM2_ST_HASHCHECK
            validation.hierarchy = KEYSTORE_TPM2_RH_NULL
            // The response's first parameter, a TPMT_SIGNATURE, is no sized buffer, so only the command is
            // encrypted (a TPM refuses the rest, TPM_RC_ATTRIBUTES); nothing in a signature is secret.
            try connection.useSession(session, encrypting: .command)
            var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
            defer { tss.Esys_Free(signature) }
            try connection.checkAuthorised("sign", tss.Esys_Sign(
                connection.context, handle, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &inDigest, &scheme, &validation, &signature))
            guard let signature, signature.pointee.sigAlg == KEYSTORE_TPM2_ALG_ECDSA,
                  let r = Self.padded(signature.pointee.signature.ecdsa.signatureR),
                  let s = Self.padded(signature.pointee.signature.ecdsa.signatureS)
            else { throw TPMError.failed(operation: "sign", detail: "no ECDSA signature returned") }
            return (r, s)
        }
    }

    public func attributes(of key: TPMSigningKey) throws -> TPMKeyAttributes {
        let tss = try Connection.library()
        var inPublic = TPM2B_PUBLIC()
        guard tss.unmarshal(key.publicArea, into: &inPublic, tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal),
              Self.publicKey(of: inPublic.publicArea) == key.publicKey
        else { throw TPMError.malformedObject }
        let area = inPublic.publicArea
        func has(_ attribute: TPMA_OBJECT) -> Bool { area.objectAttributes & attribute != 0 }
        let ecc = area.parameters.eccDetail
        return TPMKeyAttributes(
            isNISTP256: area.type == KEYSTORE_TPM2_ALG_ECC && area.nameAlg == KEYSTORE_TPM2_ALG_SHA256
                && ecc.curveID == KEYSTORE_TPM2_ECC_NIST_P256,
            isECDSASHA256: area.type == KEYSTORE_TPM2_ALG_ECC && ecc.scheme.scheme == KEYSTORE_TPM2_ALG_ECDSA
                && ecc.scheme.details.ecdsa.hashAlg == KEYSTORE_TPM2_ALG_SHA256,
            signs: has(KEYSTORE_TPMA_OBJECT_SIGN_ENCRYPT), decrypts: has(KEYSTORE_TPMA_OBJECT_DECRYPT),
            restricted: has(KEYSTORE_TPMA_OBJECT_RESTRICTED), userWithAuth: has(KEYSTORE_TPMA_OBJECT_USERWITHAUTH),
            noDA: has(KEYSTORE_TPMA_OBJECT_NODA), fixedTPM: has(KEYSTORE_TPMA_OBJECT_FIXEDTPM),
            fixedParent: has(KEYSTORE_TPMA_OBJECT_FIXEDPARENT), sensitiveDataOrigin: has(KEYSTORE_TPMA_OBJECT_SENSITIVEDATAORIGIN))
    }

    /// A P-256 coordinate, and a SHA-256 digest.
    static let coordinateBytes = 32

    /// An ECDSA key on NIST P-256, generated in the TPM (sensitiveDataOrigin), that
    /// never leaves it (fixedTPM, fixedParent), used with its authorisation value alone (userWithAuth, no
    /// policy), every wrong one counted towards lockout (no noDA), that signs any digest given but decrypts
    /// nothing and is no restricted key (sign alone; the attributes: TPM 2.0 Part 2, 8.3).
    ///
    /// The scheme is fixed here, ECDSA with SHA-256, rather than left NULL and named at each signing: the TPM
    /// then refuses any other scheme with this key (ECSchnorr, SM2, ECDAA, another hash: Part 3, TPM2_Sign), so the
    /// authorisation value signs only what a WebAuthn P-256 verifier accepts, and the key says what it is for.
    private static func signingKeyTemplate() -> TPM2B_PUBLIC {
        var template = Connection.p256Template(attributes: KEYSTORE_TPMA_OBJECT_SIGN_ENCRYPT | KEYSTORE_TPMA_OBJECT_USERWITHAUTH
            | KEYSTORE_TPMA_OBJECT_FIXEDTPM | KEYSTORE_TPMA_OBJECT_FIXEDPARENT | KEYSTORE_TPMA_OBJECT_SENSITIVEDATAORIGIN)
        template.publicArea.parameters.eccDetail.symmetric.algorithm = KEYSTORE_TPM2_ALG_NULL
        template.publicArea.parameters.eccDetail.scheme.scheme = KEYSTORE_TPM2_ALG_ECDSA
        template.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = KEYSTORE_TPM2_ALG_SHA256
        return template
    }

    /// The public point of a P-256 key's public area as SEC 1 writes it uncompressed (0x04 ‖ X ‖ Y); nil for
    /// any other kind of key.
    private static func publicKey(of area: TPMT_PUBLIC) -> [UInt8]? {
        guard area.type == KEYSTORE_TPM2_ALG_ECC, area.parameters.eccDetail.curveID == KEYSTORE_TPM2_ECC_NIST_P256,
              let x = padded(area.unique.ecc.x), let y = padded(area.unique.ecc.y)
        else { return nil }
        return [0x04] + x + y
    }

    /// A P-256 coordinate or signature half, left-padded to 32 bytes: a TPM may drop leading zero bytes.
    private static func padded(_ parameter: TPM2B_ECC_PARAMETER) -> [UInt8]? {
        let size = Int(parameter.size)
        guard size <= coordinateBytes else { return nil }
        return withUnsafeBytes(of: parameter.buffer) { [UInt8](repeating: 0, count: coordinateBytes - size) + Array($0.prefix(size)) }
    }

    // MARK: The dictionary-attack state

    public func dictionaryAttackState() throws -> TPMDictionaryAttackState {
        try Connection.open(tcti) { try $0.dictionaryAttackState() }
    }

    // MARK: The lockout authorization

    /// Sets a new random lockout authorization (`TPM2_HierarchyChangeAuth` on `TPM_RH_LOCKOUT`), sent inside the
    /// salted session with parameter encryption, and returns it, once: it is stored nowhere. Nil, with nothing
    /// changed, when the lockout authorization is set already (by this tool, the OS or the owner).
    public func protectLockout() throws -> LockoutCode? {
        try Connection.open(tcti) { connection in
            let tss = connection.tss
            guard try !connection.dictionaryAttackState().lockoutAuthSet else { return nil }
            let (_, _, session) = try connection.primaryAndSession(expecting: nil)
            let code = LockoutCode.random()
            var auth = code.authorization()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            // The new value is the first parameter, encrypted; there is no response parameter to encrypt.
            try connection.useSession(session, encrypting: .command)
            let changed = tss.Esys_HierarchyChangeAuth(connection.context, KEYSTORE_ESYS_TR_RH_LOCKOUT, session,
                                                       KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &auth)
            switch ResponseCode(changed) {
            case .success: return code
            case .lockout: throw TPMError.lockoutHierarchyLocked(recoverySeconds: try? connection.dictionaryAttackState().recoverySeconds)
            default: throw connection.failure("set the lockout authorization", changed)
            }
        }
    }

    public func unprotectLockout(code: LockoutCode) throws {
        try Connection.open(tcti) { connection in
            let tss = connection.tss
            let (_, _, session) = try connection.primaryAndSession(expecting: nil)
            var auth = code.authorization()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            try connection.check("use the lockout authorization", tss.Esys_TR_SetAuth(connection.context, KEYSTORE_ESYS_TR_RH_LOCKOUT, &auth))
            var empty = TPM2B_AUTH()
            try connection.useSession(session, encrypting: .nothing)
            try connection.check("set the lockout authorization back", tss.Esys_HierarchyChangeAuth(
                connection.context, KEYSTORE_ESYS_TR_RH_LOCKOUT, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &empty))
        }
    }

    /// Ends a dictionary-attack lockout and resets the wrong-PIN counter (`TPM2_DictionaryAttackLockReset`), with
    /// the lockout authorization `protectLockout` set (nil: it is empty). A wrong code is counted by the TPM
    /// against the lockout hierarchy itself, which then refuses every code for its lockout-recovery time.
    public func resetLockout(code: LockoutCode?) throws {
        try Connection.open(tcti) { connection in
            let tss = connection.tss
            let (_, _, session) = try connection.primaryAndSession(expecting: nil)
            var auth = code?.authorization() ?? TPM2B_AUTH()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            try connection.check("use the lockout authorization", tss.Esys_TR_SetAuth(connection.context, KEYSTORE_ESYS_TR_RH_LOCKOUT, &auth))
            // The command has no parameters to encrypt; the code itself only ever enters the session's HMAC.
            try connection.useSession(session, encrypting: .nothing)
            let reset = tss.Esys_DictionaryAttackLockReset(connection.context, KEYSTORE_ESYS_TR_RH_LOCKOUT, session,
                                                           KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE)
            switch ResponseCode(reset) {
            case .success: return
            case .authorisationFailed:
                throw TPMError.wrongLockoutCode(recoverySeconds: try? connection.dictionaryAttackState().recoverySeconds)
            case .lockout: throw TPMError.lockoutHierarchyLocked(recoverySeconds: try? connection.dictionaryAttackState().recoverySeconds)
            default: throw connection.failure("reset the lockout", reset)
            }
        }
    }
}

// MARK: - ESAPI

/// tpm2-tss's functions, called by name (`tss.Esys_Create(…)`): `keystore_tss2_load` fills every one of them or
/// returns NULL, so each is there once a `Functions` exists.
@dynamicMemberLookup
private struct Functions {
    let table: keystore_tss2

    init?() {
        guard let loaded = keystore_tss2_load() else { return nil }
        table = loaded.pointee
    }

    subscript<Function>(dynamicMember path: KeyPath<keystore_tss2, Function?>) -> Function {
        table[keyPath: path]!
    }
}

extension Functions {
    /// Decodes `bytes` whole: a trailing byte is as wrong as a missing one.
    func unmarshal<Value>(_ bytes: [UInt8], into value: inout Value, _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Value>?) -> TSS2_RC) -> Bool {
        var offset = 0
        let rc = bytes.withUnsafeBufferPointer { function($0.baseAddress, $0.count, &offset, &value) }
        return rc == TSS2_RC_SUCCESS && offset == bytes.count
    }
}

/// One ESAPI context over one TCTI, with the transient handles it created, all flushed and closed by `open`
/// on every path: without a resource manager (swtpm, or /dev/tpm0) a leaked handle stays in the TPM, which has
/// only a few slots.
private final class Connection {
    let tcti: String
    let tss: Functions
    var tctiContext: OpaquePointer?
    var context: OpaquePointer?
    var transient: [ESYS_TR] = []

    private init(tcti: String, tss: Functions) {
        self.tcti = tcti
        self.tss = tss
    }

    static func open<Result>(_ tcti: String, _ body: (Connection) throws -> Result) throws -> Result {
        let connection = Connection(tcti: tcti, tss: try library())
        defer { connection.close() }
        try connection.connect()
        return try body(connection)
    }

    /// tpm2-tss's functions, loaded on first use.
    static func library() throws -> Functions {
        _ = libraryLoggingQuieted
        guard let tss = Functions() else {
            throw TPMError.softwareMissing(detail: keystore_tss2_error().map { String(cString: $0) } ?? "tpm2-tss could not be loaded")
        }
        return tss
    }

    /// tpm2-tss logs warnings and errors to stderr itself; keystore says what went wrong in one line of its own.
    /// A TSS2_LOG the user set is left alone. Set once (a static let runs once, thread-safely), before the first
    /// context reads it.
    private static let libraryLoggingQuieted: Void = { setenv("TSS2_LOG", "all+NONE", 0) }()

    private func connect() throws {
        let loaded = tss.Tss2_TctiLdr_Initialize(tcti, &tctiContext)
        guard loaded == TSS2_RC_SUCCESS, tctiContext != nil else {
            throw TPMError.unavailable(tcti: tcti, reason: whyUnavailable(loaded))
        }
        let initialised = tss.Esys_Initialize(&context, tctiContext, nil)
        guard initialised == TSS2_RC_SUCCESS, context != nil else {
            throw TPMError.unavailable(tcti: tcti, reason: decode(initialised))
        }
    }

    private func close() {
        if context != nil {
            for handle in transient.reversed() { _ = tss.Esys_FlushContext(context, handle) }
            tss.Esys_Finalize(&context)
        }
        if tctiContext != nil { tss.Tss2_TctiLdr_Finalize(&tctiContext) }
    }

    /// The primary storage key, regenerated from the template (deterministic for a given TPM and owner seed), and
    /// an HMAC session salted to it with parameter encryption both ways.
    ///
    /// With `expected`, the primary's Name must be the one recorded when the object was sealed, checked before
    /// the salt is encrypted to it: otherwise something between us and the TPM could answer with a key of its
    /// own and read the session's secrets. A TPM cleared since (new owner seed) fails the same check.
    func primaryAndSession(expecting expected: [UInt8]?) throws -> (primary: ESYS_TR, name: [UInt8], session: ESYS_TR) {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = Self.primaryTemplate()
        var outsideInfo = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var primary = KEYSTORE_ESYS_TR_NONE
        let created = tss.Esys_CreatePrimary(
            context, KEYSTORE_ESYS_TR_RH_OWNER, KEYSTORE_ESYS_TR_PASSWORD, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
            &sensitive, &template, &outsideInfo, &pcrs, &primary, nil, nil, nil, nil)
        if case .authorisationFailed = ResponseCode(created) {
            throw TPMError.failed(operation: "create its storage key",
                                  detail: "the owner hierarchy has a password; a binding needs it empty, as systemd-cryptenroll's does")
        }
        try check("create its storage key", created)
        transient.append(primary)
        var namePointer: UnsafeMutablePointer<TPM2B_NAME>?
        defer { tss.Esys_Free(namePointer) }
        try check("read the primary key's name", tss.Esys_TR_GetName(context, primary, &namePointer))
        guard let namePointer, Int(namePointer.pointee.size) <= MemoryLayout.size(ofValue: namePointer.pointee.name) else {
            throw TPMError.failed(operation: "read the primary key's name", detail: "no name returned")
        }
        let name = withUnsafeBytes(of: namePointer.pointee.name) { Array($0.prefix(Int(namePointer.pointee.size))) }
        if let expected, expected != name { throw TPMError.boundElsewhere }
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = KEYSTORE_TPM2_ALG_AES
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = KEYSTORE_TPM2_ALG_CFB
        var session = KEYSTORE_ESYS_TR_NONE
        try check("start a salted session", tss.Esys_StartAuthSession(
            context, primary, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
            nil, KEYSTORE_TPM2_SE_HMAC, &symmetric, KEYSTORE_TPM2_ALG_SHA256, &session))
        transient.append(session)
        try useSession(session, encrypting: .both)
        return (primary, name, session)
    }

    /// The template of a keyed-hash data object (a secret the TPM holds and gives back, never uses) with
    /// `attributes`. No sensitiveDataOrigin: the caller supplies the data.
    static func dataObjectTemplate(attributes: TPMA_OBJECT) -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = KEYSTORE_TPM2_ALG_KEYEDHASH
        template.publicArea.nameAlg = KEYSTORE_TPM2_ALG_SHA256
        template.publicArea.objectAttributes = attributes
        template.publicArea.parameters.keyedHashDetail.scheme.scheme = KEYSTORE_TPM2_ALG_NULL
        return template
    }

    /// `TPM2_Create` of a child of `primary` from `template`, with its authorisation value and, for a data object,
    /// the `secret` it holds, sent encrypted in `session`: the new object's public area, as the TPM returned it, and
    /// both areas marshalled as a vault keeps them. The one copy of the two secrets outside `SecureBytes` is the
    /// TPM2B_SENSITIVE_CREATE on this frame, zeroed before this returns, whatever the TPM answered.
    func create(from template: inout TPM2B_PUBLIC, holding secret: SecureBytes? = nil, authValue: SecureBytes, under primary: ESYS_TR,
                in session: ESYS_TR, what: String) throws -> (publicArea: [UInt8], privateArea: [UInt8], public: TPMT_PUBLIC) {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { withUnsafeMutableBytes(of: &sensitive) { Sodium.zero($0) } }
        authValue.withUnsafeBytes { copy($0, into: &sensitive.sensitive.userAuth.buffer) }
        sensitive.sensitive.userAuth.size = UInt16(authValue.count)
        if let secret {
            secret.withUnsafeBytes { copy($0, into: &sensitive.sensitive.data.buffer) }
            sensitive.sensitive.data.size = UInt16(secret.count)
        }
        var outsideInfo = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        defer { tss.Esys_Free(outPrivate); tss.Esys_Free(outPublic) }
        try check("create \(what)", tss.Esys_Create(
            context, primary, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &sensitive,
            &template, &outsideInfo, &pcrs, &outPrivate, &outPublic, nil, nil, nil))
        guard let outPrivate, let outPublic else { throw TPMError.failed(operation: "create \(what)", detail: "no object returned") }
        return (try marshal(outPublic.pointee, tss.Tss2_MU_TPM2B_PUBLIC_Marshal),
                try marshal(outPrivate.pointee, tss.Tss2_MU_TPM2B_PRIVATE_Marshal), outPublic.pointee.publicArea)
    }

    /// `TPM2_Load` of an object a vault kept, under the primary whose Name it recorded, in a salted session: its
    /// handle (flushed on close), the session, and its public area. `isExpected` may refuse the public area
    /// before anything is sent to the TPM.
    func load(_ publicArea: [UInt8], _ privateArea: [UInt8], under primaryName: [UInt8], what: String,
              isExpected: (TPMT_PUBLIC) -> Bool = { _ in true }) throws -> (handle: ESYS_TR, session: ESYS_TR, public: TPMT_PUBLIC) {
        var inPublic = TPM2B_PUBLIC()
        var inPrivate = TPM2B_PRIVATE()
        guard tss.unmarshal(publicArea, into: &inPublic, tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal),
              tss.unmarshal(privateArea, into: &inPrivate, tss.Tss2_MU_TPM2B_PRIVATE_Unmarshal),
              isExpected(inPublic.publicArea)
        else { throw TPMError.malformedObject }
        let (primary, _, session) = try primaryAndSession(expecting: primaryName)
        var handle = KEYSTORE_ESYS_TR_NONE
        let loaded = tss.Esys_Load(context, primary, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
                                   &inPrivate, &inPublic, &handle)
        guard loaded == TSS2_RC_SUCCESS else {
            // The primary's Name matched, so this TPM has the seed the object was made under; only a failed
            // integrity check of the private area (TPM_RC_INTEGRITY, any parameter) still means another
            // TPM's seed wrapped it. Anything else the TPM refuses is a damaged object.
            switch ResponseCode(loaded) {
            case .integrity: throw TPMError.boundElsewhere
            case .otherFromTPM: throw TPMError.damagedObject(detail: decode(loaded))
            default: throw failure("load \(what)", loaded)
            }
        }
        transient.append(handle)
        return (handle, session, inPublic.publicArea)
    }

    /// Gives ESAPI the authorisation value to use for `handle`: it enters only the session's HMAC.
    func setAuthorisation(of handle: ESYS_TR, to authValue: SecureBytes) throws {
        var auth = TPM2B_AUTH()
        defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
        authValue.withUnsafeBytes { copy($0, into: &auth.buffer) }
        auth.size = UInt16(authValue.count)
        try check("set the object's authorisation", tss.Esys_TR_SetAuth(context, handle, &auth))
    }

    /// The data sealed in the loaded object `handle`, copied out and zeroed where tss2 held it; `check` judges the
    /// TPM's answer (`checkAuthorised` where a PIN-derived value authorises it, so that a wrong PIN is counted).
    func unseal(_ handle: ESYS_TR, in session: ESYS_TR, operation: String, check: (String, TSS2_RC) throws -> Void) throws -> SecureBytes {
        var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        defer {
            if let data { withUnsafeMutableBytes(of: &data.pointee) { Sodium.zero($0) } }
            tss.Esys_Free(data)
        }
        try check(operation, tss.Esys_Unseal(context, handle, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &data))
        guard let data, Int(data.pointee.size) <= MemoryLayout.size(ofValue: data.pointee.buffer) else {
            throw TPMError.failed(operation: operation, detail: "no data returned")
        }
        return withUnsafeBytes(of: &data.pointee.buffer) { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<Int(data.pointee.size)])) }
    }

    /// The result of a command authorised with a PIN-derived value: a refusal the TPM counted is a wrong PIN, and
    /// in lockout the TPM tries nothing.
    func checkAuthorised(_ operation: String, _ rc: TSS2_RC) throws {
        switch ResponseCode(rc) {
        case .success: return
        case .authorisationFailed: throw TPMError.wrongPIN(state: try? dictionaryAttackState())
        case .lockout: throw TPMError.lockedOut(state: try? dictionaryAttackState(), tcti: tcti)
        default: throw failure(operation, rc)
        }
    }

    /// Which parameters the session encrypts. A TPM refuses encryption a command has no parameter for
    /// (TPM_RC_ATTRIBUTES), so the lockout commands ask for less than the default.
    enum Encryption { case both, command, nothing }

    func useSession(_ session: ESYS_TR, encrypting encryption: Encryption) throws {
        var attributes = KEYSTORE_TPMA_SESSION_CONTINUESESSION
        if encryption != .nothing { attributes |= KEYSTORE_TPMA_SESSION_DECRYPT }
        if encryption == .both { attributes |= KEYSTORE_TPMA_SESSION_ENCRYPT }
        try check("set the session's attributes", tss.Esys_TRSess_SetAttributes(context, session, attributes, 0xFF))
    }

    /// The TCG "Storage Root Key" template for ECC NIST P-256 (TCG TPM v2.0 Provisioning Guidance, 7.5.1), the one
    /// systemd-cryptenroll uses and a version 3 vault names (`Vault.tpmPrimaryTemplate`): a restricted decryption
    /// key with AES-128-CFB for its children, not DA-protected.
    private static func primaryTemplate() -> TPM2B_PUBLIC {
        var template = p256Template(attributes: KEYSTORE_TPMA_OBJECT_FIXEDTPM | KEYSTORE_TPMA_OBJECT_FIXEDPARENT
            | KEYSTORE_TPMA_OBJECT_SENSITIVEDATAORIGIN | KEYSTORE_TPMA_OBJECT_USERWITHAUTH | KEYSTORE_TPMA_OBJECT_NODA
            | KEYSTORE_TPMA_OBJECT_RESTRICTED | KEYSTORE_TPMA_OBJECT_DECRYPT)
        template.publicArea.parameters.eccDetail.symmetric.algorithm = KEYSTORE_TPM2_ALG_AES
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = KEYSTORE_TPM2_ALG_CFB
        template.publicArea.parameters.eccDetail.scheme.scheme = KEYSTORE_TPM2_ALG_NULL
        return template
    }

    /// An ECC NIST P-256 key's template with a SHA-256 name and no KDF, as both keys made here are (the storage
    /// key and a signing key); the caller sets its scheme and its symmetric algorithm.
    static func p256Template(attributes: TPMA_OBJECT) -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = KEYSTORE_TPM2_ALG_ECC
        template.publicArea.nameAlg = KEYSTORE_TPM2_ALG_SHA256
        template.publicArea.objectAttributes = attributes
        template.publicArea.parameters.eccDetail.curveID = KEYSTORE_TPM2_ECC_NIST_P256
        template.publicArea.parameters.eccDetail.kdf.scheme = KEYSTORE_TPM2_ALG_NULL
        return template
    }

    func dictionaryAttackState() throws -> TPMDictionaryAttackState {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        defer { tss.Esys_Free(data) }
        try check("read the dictionary-attack state", tss.Esys_GetCapability(
            context, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_TPM2_CAP_TPM_PROPERTIES,
            KEYSTORE_TPM2_PT_PERMANENT, 18, &more, &data))
        var values: [UInt32: UInt32] = [:]
        if let data {
            let properties = data.pointee.data.tpmProperties
            withUnsafeBytes(of: properties.tpmProperty) { raw in
                let all = raw.bindMemory(to: TPMS_TAGGED_PROPERTY.self)
                for property in all.prefix(Int(min(properties.count, UInt32(all.count)))) {
                    values[property.property] = property.value
                }
            }
        }
        guard let failures = values[KEYSTORE_TPM2_PT_LOCKOUT_COUNTER], let maximum = values[KEYSTORE_TPM2_PT_MAX_AUTH_FAIL] else {
            throw TPMError.failed(operation: "read the dictionary-attack state", detail: "the TPM did not report it")
        }
        let permanent = values[KEYSTORE_TPM2_PT_PERMANENT] ?? 0
        return TPMDictionaryAttackState(
            failures: Int(failures), maximumFailures: Int(maximum), intervalSeconds: Int(values[KEYSTORE_TPM2_PT_LOCKOUT_INTERVAL] ?? 0),
            recoverySeconds: Int(values[KEYSTORE_TPM2_PT_LOCKOUT_RECOVERY] ?? 0),
            inLockout: permanent & KEYSTORE_TPMA_PERMANENT_INLOCKOUT != 0,
            lockoutAuthSet: permanent & KEYSTORE_TPMA_PERMANENT_LOCKOUTAUTHSET != 0)
    }

    func check(_ operation: String, _ rc: TSS2_RC) throws {
        guard rc == TSS2_RC_SUCCESS else { throw failure(operation, rc) }
    }

    func failure(_ operation: String, _ rc: TSS2_RC) -> TPMError {
        // The TCTI's own layer: the TPM went away or never answered.
        if rc & KEYSTORE_TSS2_RC_LAYER_MASK == KEYSTORE_TSS2_TCTI_RC_LAYER { return .unavailable(tcti: tcti, reason: decode(rc)) }
        // Without a resource manager, another program left objects loaded.
        if rc == KEYSTORE_TPM2_RC_OBJECT_MEMORY { return .outOfObjectMemory(detail: decode(rc)) }
        return .failed(operation: operation, detail: decode(rc))
    }

    func decode(_ rc: TSS2_RC) -> String {
        guard let text = tss.Tss2_RC_Decode(rc) else { return "response code 0x\(String(rc, radix: 16))" }
        return String(cString: text)
    }

    /// Why a TCTI would not load, in words a person can act on.
    private func whyUnavailable(_ rc: TSS2_RC) -> String {
        if tcti.hasPrefix("device:") || tcti == "device" {
            let path = tcti.hasPrefix("device:") ? String(tcti.dropFirst("device:".count)) : "/dev/tpmrm0"
            if access(path, F_OK) != 0 { return "\(path) does not exist: this machine has no TPM, or its driver is not loaded" }
            if access(path, R_OK | W_OK) != 0 { return "no permission on \(path)" }
        }
        return decode(rc)
    }

    func marshal<Value>(_ value: Value, _ function: (UnsafePointer<Value>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC) throws -> [UInt8] {
        var value = value
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<Value>.size + 16)
        var offset = 0
        let rc = buffer.withUnsafeMutableBufferPointer { function(&value, $0.baseAddress, $0.count, &offset) }
        guard rc == TSS2_RC_SUCCESS else { throw TPMError.failed(operation: "encode the TPM object", detail: decode(rc)) }
        return Array(buffer[0..<offset])
    }

}

/// The response codes keystore tells apart (TPM 2.0 Part 2, 6.6), with the handle, session or parameter number
/// of a format-one code masked off.
private enum ResponseCode {
    case success, authorisationFailed, lockout, integrity
    /// Any other code from the TPM itself.
    case otherFromTPM
    /// From a software layer (ESAPI, the TCTI, the marshalling code).
    case notFromTPM

    init(_ rc: TSS2_RC) {
        if rc == TSS2_RC_SUCCESS { self = .success; return }
        guard rc & KEYSTORE_TSS2_RC_LAYER_MASK == 0 else { self = .notFromTPM; return }
        let code = rc & 0xFFFF
        if code & KEYSTORE_TPM2_RC_FMT1 != 0 {
            // Format one: the error in the low 6 bits, with the format bit; bit 6 and bits 8-11 say which parameter,
            // handle or session is blamed. TPM_RC_AUTH_FAIL (DA counted) and TPM_RC_BAD_AUTH (not DA-protected;
            // never for our object) are authorisation failures; TPM_RC_INTEGRITY, a private area that does not
            // verify under this TPM's keys.
            switch code & (KEYSTORE_TPM2_RC_FMT1 | 0x3F) {
            case KEYSTORE_TPM2_RC_AUTH_FAIL, KEYSTORE_TPM2_RC_BAD_AUTH: self = .authorisationFailed
            case KEYSTORE_TPM2_RC_INTEGRITY: self = .integrity
            default: self = .otherFromTPM
            }
        } else {
            self = code == KEYSTORE_TPM2_RC_LOCKOUT ? .lockout : .otherFromTPM
        }
    }
}

private func copy<Tuple>(_ bytes: UnsafeRawBufferPointer, into tuple: inout Tuple) {
    withUnsafeMutableBytes(of: &tuple) { out in
        precondition(bytes.count <= out.count)
        out.copyMemory(from: bytes)
    }
}

extension LockoutCode {
    /// The code as the TPM2B_AUTH the lockout hierarchy takes. The caller zeroes it.
    fileprivate func authorization() -> TPM2B_AUTH {
        var auth = TPM2B_AUTH()
        bytes.withUnsafeBytes { copy($0, into: &auth.buffer) }
        auth.size = UInt16(bytes.count)
        return auth
    }
}

// MARK: Moving a secret to another TPM

extension TPM: TPMMoving {
    /// This TPM's storage key (the primary a vault binds under), as a marshalled TPM2B_PUBLIC: what another
    /// machine wraps a secret to with `wrap(_:toStorageKey:)`. Public; it names this TPM's owner seed.
    package func storageKeyPublicArea() throws -> [UInt8] {
        try Connection.open(tcti) { connection in
            let tss = connection.tss
            let (primary, _, _) = try connection.primaryAndSession(expecting: nil)
            var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
            defer { tss.Esys_Free(outPublic) }
            try connection.check("read its storage key", tss.Esys_ReadPublic(
                connection.context, primary, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &outPublic, nil, nil))
            guard let outPublic else { throw TPMError.failed(operation: "read its storage key", detail: "no public area returned") }
            return try connection.marshal(outPublic.pointee, tss.Tss2_MU_TPM2B_PUBLIC_Marshal)
        }
    }

    /// Seals `secret` in this TPM as a duplicable data object and duplicates it to another TPM's storage key
    /// (`target`, from its `storageKeyPublicArea()`), with the TPM's own ECDH, KDFe, AES-CFB and HMAC: the
    /// secret leaves this TPM only inside the outer wrapper, never in the clear. The object may only be
    /// duplicated (its policy is PolicyCommandCode(TPM2_Duplicate)), and unsealed only with `authValue` (a transfer
    /// code the person carries apart from the file; without noDA, so wrong ones count towards the target's
    /// lockout): it lives for the moment it takes to be imported and unsealed on the target, whose new PIN then
    /// binds it anew.
    package func wrap(_ secret: SecureBytes, toStorageKey target: [UInt8], authValue: SecureBytes) throws -> TPMWrappedObject {
        precondition(secret.count <= 128 && authValue.count <= Self.authValueBytes)
        return try Connection.open(tcti) { connection in
            let tss = connection.tss
            var targetPublic = TPM2B_PUBLIC()
            guard tss.unmarshal(target, into: &targetPublic, tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal),
                  Self.isStorageKey(targetPublic.publicArea)
            else { throw TPMError.failed(operation: "wrap to that storage key", detail: "it is not a P-256 storage key as keystore's primary template makes") }
            let (primary, _, session) = try connection.primaryAndSession(expecting: nil)
            // Neither fixedTPM nor fixedParent (so it can be duplicated), nor encryptedDuplication (so no inner
            // wrapper, whose key would have to travel too): the outer wrapper to the target's key is the protection.
            var template = Connection.dataObjectTemplate(attributes: KEYSTORE_TPMA_OBJECT_USERWITHAUTH)
            Self.duplicationPolicy.withUnsafeBytes { copy($0, into: &template.publicArea.authPolicy.buffer) }
            template.publicArea.authPolicy.size = UInt16(Self.duplicationPolicy.count)
            let created = try connection.create(from: &template, holding: secret, authValue: authValue, under: primary, in: session,
                                                what: "the object to move")
            var inPublic = TPM2B_PUBLIC()
            var inPrivate = TPM2B_PRIVATE()
            guard tss.unmarshal(created.publicArea, into: &inPublic, tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal),
                  tss.unmarshal(created.privateArea, into: &inPrivate, tss.Tss2_MU_TPM2B_PRIVATE_Unmarshal)
            else { throw TPMError.malformedObject }
            var object = KEYSTORE_ESYS_TR_NONE
            try connection.check("load the object to move", tss.Esys_Load(
                connection.context, primary, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, &inPrivate, &inPublic, &object))
            connection.transient.append(object)
            var parent = KEYSTORE_ESYS_TR_NONE
            try connection.check("load the target's storage key", tss.Esys_LoadExternal(
                connection.context, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
                nil, &targetPublic, KEYSTORE_ESYS_TR_RH_NULL, &parent))
            connection.transient.append(parent)
            var noSymmetric = TPMT_SYM_DEF()
            noSymmetric.algorithm = KEYSTORE_TPM2_ALG_NULL
            var policy = KEYSTORE_ESYS_TR_NONE
            try connection.check("start a policy session", tss.Esys_StartAuthSession(
                connection.context, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
                KEYSTORE_ESYS_TR_NONE, nil, KEYSTORE_TPM2_SE_POLICY, &noSymmetric, KEYSTORE_TPM2_ALG_SHA256, &policy))
            connection.transient.append(policy)
            try connection.check("allow the duplication", tss.Esys_PolicyCommandCode(
                connection.context, policy, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, KEYSTORE_TPM2_CC_DUPLICATE))
            var encryptionKeyIn = TPM2B_DATA()
            var noInnerWrapper = TPMT_SYM_DEF_OBJECT()
            noInnerWrapper.algorithm = KEYSTORE_TPM2_ALG_NULL
            var encryptionKeyOut: UnsafeMutablePointer<TPM2B_DATA>?
            var duplicate: UnsafeMutablePointer<TPM2B_PRIVATE>?
            var seed: UnsafeMutablePointer<TPM2B_ENCRYPTED_SECRET>?
            defer { tss.Esys_Free(encryptionKeyOut); tss.Esys_Free(duplicate); tss.Esys_Free(seed) }
            try connection.check("wrap the object to the target's storage key", tss.Esys_Duplicate(
                connection.context, object, parent, policy, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
                &encryptionKeyIn, &noInnerWrapper, &encryptionKeyOut, &duplicate, &seed))
            guard let duplicate, let seed, seed.pointee.size > 0 else {
                throw TPMError.failed(operation: "wrap the object to the target's storage key", detail: "no wrapped object returned")
            }
            return TPMWrappedObject(publicArea: created.publicArea,
                                    duplicate: try connection.marshal(duplicate.pointee, tss.Tss2_MU_TPM2B_PRIVATE_Marshal),
                                    encryptedSeed: try connection.marshal(seed.pointee, tss.Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal))
        }
    }

    /// Imports an object `wrap(_:toStorageKey:)` made for this TPM's storage key, loads it and unseals its secret,
    /// in a salted session with response encryption. Another TPM's object, or a changed byte, fails TPM2_Import's
    /// integrity check: `TPMError.wrappedElsewhere`.
    package func unwrap(_ wrapped: TPMWrappedObject, authValue: SecureBytes) throws -> SecureBytes {
        try Connection.open(tcti) { connection in
            let tss = connection.tss
            var objectPublic = TPM2B_PUBLIC()
            var duplicate = TPM2B_PRIVATE()
            var seed = TPM2B_ENCRYPTED_SECRET()
            guard tss.unmarshal(wrapped.publicArea, into: &objectPublic, tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal),
                  tss.unmarshal(wrapped.duplicate, into: &duplicate, tss.Tss2_MU_TPM2B_PRIVATE_Unmarshal),
                  tss.unmarshal(wrapped.encryptedSeed, into: &seed, tss.Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal),
                  objectPublic.publicArea.type == KEYSTORE_TPM2_ALG_KEYEDHASH
            else { throw TPMError.wrappedElsewhere(detail: "it is not a wrapped data object") }
            let (primary, _, session) = try connection.primaryAndSession(expecting: nil)
            var encryptionKey = TPM2B_DATA()
            var noInnerWrapper = TPMT_SYM_DEF_OBJECT()
            noInnerWrapper.algorithm = KEYSTORE_TPM2_ALG_NULL
            var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
            defer { tss.Esys_Free(outPrivate) }
            let imported = tss.Esys_Import(connection.context, primary, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE,
                                           &encryptionKey, &objectPublic, &duplicate, &seed, &noInnerWrapper, &outPrivate)
            switch ResponseCode(imported) {
            case .success: break
            case .integrity, .otherFromTPM: throw TPMError.wrappedElsewhere(detail: connection.decode(imported))
            default: throw connection.failure("import the moved key", imported)
            }
            guard let outPrivate else { throw TPMError.failed(operation: "import the moved key", detail: "no object returned") }
            var handle = KEYSTORE_ESYS_TR_NONE
            try connection.check("load the moved key", tss.Esys_Load(
                connection.context, primary, session, KEYSTORE_ESYS_TR_NONE, KEYSTORE_ESYS_TR_NONE, outPrivate, &objectPublic, &handle))
            connection.transient.append(handle)
            try connection.setAuthorisation(of: handle, to: authValue)
            // A wrong transfer code is an authorisation failure, counted by the TPM's lockout.
            return try connection.unseal(handle, in: session, operation: "unseal the moved key", check: connection.checkAuthorised)
        }
    }

    /// PolicyCommandCode(TPM2_CC_Duplicate) from an empty policy: SHA-256(0³² ‖ TPM_CC_PolicyCommandCode (0x16C) ‖
    /// TPM_CC_Duplicate (0x14B)), TPM 2.0 Part 3 23.11. A constant, so no trial session is needed to make it.
    private static let duplicationPolicy: [UInt8] = [
        0xbe, 0xf5, 0x6b, 0x8c, 0x1c, 0xc8, 0x4e, 0x11, 0xed, 0xd7, 0x17, 0x52, 0x8d, 0x2c, 0xd9, 0x93,
        0x56, 0xbd, 0x2b, 0xbf, 0x8f, 0x01, 0x52, 0x09, 0xc3, 0xf8, 0x4a, 0xee, 0xab, 0xa8, 0xe8, 0xa2,
    ]

    /// A storage key as keystore's primary template makes one: a restricted P-256 decryption key with
    /// AES-128-CFB for its children (the unique point aside, which is the target TPM's own).
    private static func isStorageKey(_ area: TPMT_PUBLIC) -> Bool {
        let required = KEYSTORE_TPMA_OBJECT_RESTRICTED | KEYSTORE_TPMA_OBJECT_DECRYPT
        return area.type == KEYSTORE_TPM2_ALG_ECC && area.nameAlg == KEYSTORE_TPM2_ALG_SHA256
            && area.objectAttributes & required == required && area.objectAttributes & KEYSTORE_TPMA_OBJECT_SIGN_ENCRYPT == 0
            && area.parameters.eccDetail.curveID == KEYSTORE_TPM2_ECC_NIST_P256
            && area.parameters.eccDetail.symmetric.algorithm == KEYSTORE_TPM2_ALG_AES
            && area.parameters.eccDetail.symmetric.keyBits.aes == 128
            && area.parameters.eccDetail.symmetric.mode.aes == KEYSTORE_TPM2_ALG_CFB
    }
}
