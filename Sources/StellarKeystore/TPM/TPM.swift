#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CTSS2

/// The one boundary to a TPM 2.0 (tpm2-tss ESAPI): seal a secret under an authorisation value, unseal it, and
/// read the dictionary-attack state. Nothing else in the library touches tpm2-tss.
///
/// The secret sits in a keyed-hash object created under a primary storage key that is regenerated on every use
/// from a fixed public template (the TCG SRK template, ECC NIST P-256), so nothing is persisted in the TPM: no NV
/// space, no persistent handle, no owner password. The object has `userWithAuth` and not `noDA`, so every wrong
/// authorisation value counts against the TPM's dictionary-attack lockout. Every command runs in an HMAC session
/// salted to the primary, with AES-128-CFB parameter encryption both ways, so neither the authorisation value nor
/// the secret crosses the bus in the clear.
public struct TPM: Sendable {
    /// A tpm2-tss TCTI configuration: `device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`, …
    public let tcti: String
    /// Whether a new binding may be made while the TPM's lockout authorization is empty. By default it may not:
    /// with an empty one, anyone who can open the TPM resets its wrong-PIN counter (`TPM2_DictionaryAttackLockReset`
    /// needs only that authorization), and the guess limit that a binding promises does not hold.
    public let allowsOpenLockout: Bool

    public static let defaultTCTI = "device:/dev/tpmrm0"
    /// The name the vault records for the primary's template, so that another template can come later.
    static let primaryTemplateName = "tcg-srk-ecc-p256"
    /// TPM2B_AUTH of a SHA-256 object holds at most a digest.
    static let authValueBytes = 32
    static let secretBytes = 32

    public init(tcti: String = TPM.defaultTCTI, allowingOpenLockout: Bool = false) {
        self.tcti = tcti
        self.allowsOpenLockout = allowingOpenLockout
    }

    /// `$KEYSTORE_TPM_TCTI`, else the kernel's resource manager.
    public init(environment: [String: String], allowingOpenLockout: Bool = false) {
        let setting = environment["KEYSTORE_TPM_TCTI"] ?? ""
        self.init(tcti: setting.isEmpty ? Self.defaultTCTI : setting, allowingOpenLockout: allowingOpenLockout)
    }

    /// Whether this is the kernel's resource manager that tpm2-tools also open when given no `-T`.
    public var isDefaultDevice: Bool { tcti == Self.defaultTCTI }

    /// A sealed object as the vault keeps it: the TPM2B_PUBLIC and TPM2B_PRIVATE that `TPM2_Create` returned,
    /// in the TPM's own marshalled form (big-endian, size-prefixed; TPM 2.0 Part 2), and the Name of the primary
    /// key it was made under (the name algorithm's 2-byte ID, then the digest of the primary's public area).
    public struct SealedObject: Sendable, Equatable {
        public let primaryName: [UInt8]
        public let publicArea: [UInt8]
        public let privateArea: [UInt8]

        /// Nil unless `publicArea` is exactly one TPM2B_PUBLIC, `privateArea` one TPM2B_PRIVATE, and
        /// `primaryName` a SHA-256 Name.
        init?(primaryName: [UInt8], publicArea: [UInt8], privateArea: [UInt8]) {
            var inPublic = TPM2B_PUBLIC()
            var inPrivate = TPM2B_PRIVATE()
            guard primaryName.count == 34, primaryName.prefix(2) == [0x00, 0x0B],
                  unmarshal(publicArea, into: &inPublic, Tss2_MU_TPM2B_PUBLIC_Unmarshal),
                  unmarshal(privateArea, into: &inPrivate, Tss2_MU_TPM2B_PRIVATE_Unmarshal)
            else { return nil }
            self.init(checked: primaryName, publicArea, privateArea)
        }

        fileprivate init(checked primaryName: [UInt8], _ publicArea: [UInt8], _ privateArea: [UInt8]) {
            self.primaryName = primaryName
            self.publicArea = publicArea
            self.privateArea = privateArea
        }
    }

    /// The TPM's dictionary-attack protection as `TPM2_GetCapability` reports it (TPM 2.0 Part 2, 6.13).
    public struct DictionaryAttackState: Sendable, Equatable {
        /// Authorisation failures counted and not yet forgiven (`TPM2_PT_LOCKOUT_COUNTER`).
        public let failures: Int
        /// Failures before lockout (`TPM2_PT_MAX_AUTH_FAIL`).
        public let maximumFailures: Int
        /// Seconds after which one failure is forgiven (`TPM2_PT_LOCKOUT_INTERVAL`); 0: only an owner's reset.
        public let intervalSeconds: Int
        /// Seconds before the lockout hierarchy may be tried again after a failure (`TPM2_PT_LOCKOUT_RECOVERY`).
        public let recoverySeconds: Int
        public let inLockout: Bool
        /// Whether the lockout hierarchy has an authorization value (`TPMA_PERMANENT_LOCKOUTAUTHSET`). Without
        /// one, `TPM2_DictionaryAttackLockReset` needs no secret, and any process that can open the TPM can reset
        /// `failures` to zero between guesses.
        public let lockoutAuthSet: Bool

        public var triesLeft: Int { max(maximumFailures - failures, 0) }
    }

    // MARK: Use cases

    /// Seals `secret` (at most 128 bytes) so that only this TPM, given `authValue`, gives it back.
    ///
    /// `primaryName` is the Name recorded by the binding this seal renews (a PIN change, an upgrade): the primary
    /// key must still have it, or nothing is sent to it. Nil makes a new binding, which is refused while the
    /// lockout authorization is empty, unless `allowsOpenLockout`.
    func seal(_ secret: SecureBytes, authValue: SecureBytes, primaryName expected: [UInt8]?) throws -> SealedObject {
        precondition(authValue.count <= Self.authValueBytes && secret.count <= 128)
        return try Connection.open(tcti) { connection in
            if expected == nil { try refuseOpenLockout(connection.dictionaryAttackState()) }
            let (primary, primaryName, session) = try connection.primaryAndSession(expecting: expected)
            var sensitive = TPM2B_SENSITIVE_CREATE()
            defer { withUnsafeMutableBytes(of: &sensitive) { Sodium.zero($0) } }
            authValue.withUnsafeBytes { copy($0, into: &sensitive.sensitive.userAuth.buffer) }
            sensitive.sensitive.userAuth.size = UInt16(authValue.count)
            secret.withUnsafeBytes { copy($0, into: &sensitive.sensitive.data.buffer) }
            sensitive.sensitive.data.size = UInt16(secret.count)
            var template = TPM2B_PUBLIC()
            template.publicArea.type = TPM2_ALG_KEYEDHASH_
            template.publicArea.nameAlg = TPM2_ALG_SHA256_
            // No sensitiveDataOrigin (we supply the data) and no noDA: wrong values count towards lockout.
            template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM_ | TPMA_OBJECT_FIXEDPARENT_ | TPMA_OBJECT_USERWITHAUTH_
            template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL_
            var outsideInfo = TPM2B_DATA()
            var pcrs = TPML_PCR_SELECTION()
            var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
            var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
            defer { Esys_Free(outPrivate); Esys_Free(outPublic) }
            try connection.check("create the sealed object", Esys_Create(
                connection.context, primary, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &sensitive,
                &template, &outsideInfo, &pcrs, &outPrivate, &outPublic, nil, nil, nil))
            guard let outPrivate, let outPublic else { throw TPMError.failed(operation: "create the sealed object", detail: "no object returned") }
            return SealedObject(checked: primaryName, try marshal(outPublic.pointee, Tss2_MU_TPM2B_PUBLIC_Marshal),
                                try marshal(outPrivate.pointee, Tss2_MU_TPM2B_PRIVATE_Marshal))
        }
    }

    /// The secret sealed in `object`, if `authValue` is its authorisation value. A wrong one is counted by the
    /// TPM (`TPMError.wrongPIN`); in lockout nothing is tried (`TPMError.lockedOut`); an object that this TPM did
    /// not make does not load (`TPMError.boundElsewhere`).
    func unseal(_ object: SealedObject, authValue: SecureBytes) throws -> SecureBytes {
        var inPublic = TPM2B_PUBLIC()
        var inPrivate = TPM2B_PRIVATE()
        guard unmarshal(object.publicArea, into: &inPublic, Tss2_MU_TPM2B_PUBLIC_Unmarshal),
              unmarshal(object.privateArea, into: &inPrivate, Tss2_MU_TPM2B_PRIVATE_Unmarshal)
        else { throw TPMError.malformedObject }
        return try Connection.open(tcti) { connection in
            let (primary, _, session) = try connection.primaryAndSession(expecting: object.primaryName)
            var handle = ESYS_TR(ESYS_TR_NONE)
            let loaded = Esys_Load(connection.context, primary, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                                   &inPrivate, &inPublic, &handle)
            guard loaded == TSS2_RC_SUCCESS else {
                // The primary's Name matched, so this TPM has the seed the object was made under; only a failed
                // integrity check of the private area (TPM_RC_INTEGRITY, any parameter) still means another
                // TPM's seed wrapped it. Anything else the TPM refuses is a damaged object.
                switch ResponseCode(loaded) {
                case .integrity: throw TPMError.boundElsewhere
                case .otherFromTPM: throw TPMError.damagedObject(detail: Connection.decode(loaded))
                default: throw connection.failure("load the sealed object", loaded)
                }
            }
            connection.transient.append(handle)
            var auth = TPM2B_AUTH()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            authValue.withUnsafeBytes { copy($0, into: &auth.buffer) }
            auth.size = UInt16(authValue.count)
            try connection.check("set the object's authorisation", Esys_TR_SetAuth(connection.context, handle, &auth))
            var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
            defer {
                if let data { withUnsafeMutableBytes(of: &data.pointee) { Sodium.zero($0) } }
                Esys_Free(data)
            }
            let unsealed = Esys_Unseal(connection.context, handle, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &data)
            switch ResponseCode(unsealed) {
            case .success: break
            case .authorisationFailed: throw TPMError.wrongPIN(state: try? connection.dictionaryAttackState())
            case .lockout: throw TPMError.lockedOut(state: try? connection.dictionaryAttackState(), tcti: tcti)
            default: throw connection.failure("unseal", unsealed)
            }
            guard let data, Int(data.pointee.size) <= MemoryLayout.size(ofValue: data.pointee.buffer) else {
                throw TPMError.failed(operation: "unseal", detail: "no data returned")
            }
            return withUnsafeBytes(of: &data.pointee.buffer) { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<Int(data.pointee.size)])) }
        }
    }

    /// Checks that a vault can be sealed here (a TPM answers, and its storage key can be made) without sealing
    /// anything, so that nobody types a new PIN for a binding that cannot happen.
    func checkReadyToSeal() throws {
        try Connection.open(tcti) { connection in
            try refuseOpenLockout(connection.dictionaryAttackState())
            _ = try connection.primaryAndSession(expecting: nil)
        }
    }

    private func refuseOpenLockout(_ state: DictionaryAttackState) throws {
        if !state.lockoutAuthSet && !allowsOpenLockout { throw TPMError.lockoutOpen }
    }

    /// The TPM's dictionary-attack counter and settings.
    public func dictionaryAttackState() throws -> DictionaryAttackState {
        try Connection.open(tcti) { try $0.dictionaryAttackState() }
    }

    /// Sets a new random lockout authorization (`TPM2_HierarchyChangeAuth` on `TPM_RH_LOCKOUT`), sent inside the
    /// salted session with parameter encryption, and returns it, once: it is stored nowhere. Nil, with nothing
    /// changed, when the lockout authorization is set already (by this tool, the OS or the owner).
    public func protectLockout() throws -> LockoutCode? {
        try Connection.open(tcti) { connection in
            guard try !connection.dictionaryAttackState().lockoutAuthSet else { return nil }
            let (_, _, session) = try connection.primaryAndSession(expecting: nil)
            let code = LockoutCode.random()
            var auth = code.authorization()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            // The new value is the first parameter, encrypted; there is no response parameter to encrypt.
            try connection.check("set the session's attributes", Esys_TRSess_SetAttributes(
                connection.context, session, TPMA_SESSION(TPMA_SESSION_DECRYPT_ | TPMA_SESSION_CONTINUESESSION_), 0xFF))
            let changed = Esys_HierarchyChangeAuth(connection.context, ESYS_TR(ESYS_TR_RH_LOCKOUT), session,
                                                   ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &auth)
            switch ResponseCode(changed) {
            case .success: return code
            case .lockout: throw TPMError.lockoutHierarchyLocked(recoverySeconds: try? connection.dictionaryAttackState().recoverySeconds)
            default: throw connection.failure("set the lockout authorization", changed)
            }
        }
    }

    /// Sets the lockout authorization back to empty, with the `code` it has now: for a code that never reached
    /// its holder.
    func unprotectLockout(code: LockoutCode) throws {
        try Connection.open(tcti) { connection in
            let (_, _, session) = try connection.primaryAndSession(expecting: nil)
            var auth = code.authorization()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            try connection.check("use the lockout authorization", Esys_TR_SetAuth(connection.context, ESYS_TR(ESYS_TR_RH_LOCKOUT), &auth))
            var empty = TPM2B_AUTH()
            try connection.check("set the session's attributes", Esys_TRSess_SetAttributes(
                connection.context, session, TPMA_SESSION(TPMA_SESSION_CONTINUESESSION_), 0xFF))
            try connection.check("set the lockout authorization back", Esys_HierarchyChangeAuth(
                connection.context, ESYS_TR(ESYS_TR_RH_LOCKOUT), session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &empty))
        }
    }

    /// Ends a dictionary-attack lockout and resets the wrong-PIN counter (`TPM2_DictionaryAttackLockReset`), with
    /// the lockout authorization `protectLockout` set. A wrong code is counted by the TPM against the lockout
    /// hierarchy itself, which then refuses every code for its lockout-recovery time.
    /// Nil `code`: the lockout authorization is empty.
    public func resetLockout(code: LockoutCode?) throws {
        try Connection.open(tcti) { connection in
            let (_, _, session) = try connection.primaryAndSession(expecting: nil)
            var auth = code?.authorization() ?? TPM2B_AUTH()
            defer { withUnsafeMutableBytes(of: &auth) { Sodium.zero($0) } }
            try connection.check("use the lockout authorization", Esys_TR_SetAuth(connection.context, ESYS_TR(ESYS_TR_RH_LOCKOUT), &auth))
            // The command has no parameters to encrypt; the code itself only ever enters the session's HMAC.
            try connection.check("set the session's attributes", Esys_TRSess_SetAttributes(
                connection.context, session, TPMA_SESSION(TPMA_SESSION_CONTINUESESSION_), 0xFF))
            let reset = Esys_DictionaryAttackLockReset(connection.context, ESYS_TR(ESYS_TR_RH_LOCKOUT), session,
                                                       ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE))
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

/// One ESAPI context over one TCTI, with the transient handles it created, all flushed and closed by `open`
/// on every path: without a resource manager (swtpm, or /dev/tpm0) a leaked handle stays in the TPM, which has
/// only a few slots.
private final class Connection {
    let tcti: String
    var tctiContext: OpaquePointer?
    var context: OpaquePointer?
    var transient: [ESYS_TR] = []

    private init(tcti: String) { self.tcti = tcti }

    static func open<Result>(_ tcti: String, _ body: (Connection) throws -> Result) throws -> Result {
        _ = libraryLoggingQuieted
        let connection = Connection(tcti: tcti)
        defer { connection.close() }
        try connection.connect()
        return try body(connection)
    }

    /// tpm2-tss logs warnings and errors to stderr itself; keystore says what went wrong in one line of its own.
    /// A TSS2_LOG the user set is left alone. Set once (a static let runs once, thread-safely), before the first
    /// context reads it.
    private static let libraryLoggingQuieted: Void = { setenv("TSS2_LOG", "all+NONE", 0) }()

    private func connect() throws {
        let loaded = Tss2_TctiLdr_Initialize(tcti, &tctiContext)
        guard loaded == TSS2_RC_SUCCESS, tctiContext != nil else {
            throw TPMError.unavailable(tcti: tcti, reason: Self.whyUnavailable(tcti, loaded))
        }
        let initialised = Esys_Initialize(&context, tctiContext, nil)
        guard initialised == TSS2_RC_SUCCESS, context != nil else {
            throw TPMError.unavailable(tcti: tcti, reason: Self.decode(initialised))
        }
    }

    private func close() {
        if context != nil {
            for handle in transient.reversed() { _ = Esys_FlushContext(context, handle) }
            Esys_Finalize(&context)
        }
        if tctiContext != nil { Tss2_TctiLdr_Finalize(&tctiContext) }
    }

    /// The primary storage key, regenerated from the template (deterministic for a given TPM and owner seed), and
    /// an HMAC session salted to it with parameter encryption.
    ///
    /// With `expected`, the primary's Name must be the one recorded when the object was sealed, checked before
    /// the salt is encrypted to it: otherwise something between us and the TPM could answer with a key of its
    /// own and read the session's secrets. A TPM cleared since (new owner seed) fails the same check.
    func primaryAndSession(expecting expected: [UInt8]?) throws -> (primary: ESYS_TR, name: [UInt8], session: ESYS_TR) {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = Self.primaryTemplate()
        var outsideInfo = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var primary = ESYS_TR(ESYS_TR_NONE)
        let created = Esys_CreatePrimary(
            context, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
            &sensitive, &template, &outsideInfo, &pcrs, &primary, nil, nil, nil, nil)
        if case .authorisationFailed = ResponseCode(created) {
            throw TPMError.failed(operation: "create its storage key",
                                  detail: "the owner hierarchy has a password; keystore needs it empty, as systemd-cryptenroll does")
        }
        try check("create its storage key", created)
        transient.append(primary)
        var namePointer: UnsafeMutablePointer<TPM2B_NAME>?
        defer { Esys_Free(namePointer) }
        try check("read the primary key's name", Esys_TR_GetName(context, primary, &namePointer))
        guard let namePointer, Int(namePointer.pointee.size) <= MemoryLayout.size(ofValue: namePointer.pointee.name) else {
            throw TPMError.failed(operation: "read the primary key's name", detail: "no name returned")
        }
        let name = withUnsafeBytes(of: namePointer.pointee.name) { Array($0.prefix(Int(namePointer.pointee.size))) }
        if let expected, expected != name { throw TPMError.boundElsewhere }
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_AES_
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = TPM2_ALG_CFB_
        var session = ESYS_TR(ESYS_TR_NONE)
        try check("start a salted session", Esys_StartAuthSession(
            context, primary, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
            nil, TPM2_SE(TPM2_SE_HMAC_), &symmetric, TPM2_ALG_SHA256_, &session))
        transient.append(session)
        let attributes = TPMA_SESSION(TPMA_SESSION_DECRYPT_ | TPMA_SESSION_ENCRYPT_ | TPMA_SESSION_CONTINUESESSION_)
        try check("set the session's attributes", Esys_TRSess_SetAttributes(context, session, attributes, 0xFF))
        return (primary, name, session)
    }

    /// The TCG "Storage Root Key" template for ECC NIST P-256 (TCG TPM v2.0 Provisioning Guidance, 7.5.1), the one
    /// systemd-cryptenroll uses: a restricted decryption key with AES-128-CFB for its children, not DA-protected.
    private static func primaryTemplate() -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPM2_ALG_ECC_
        template.publicArea.nameAlg = TPM2_ALG_SHA256_
        template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM_ | TPMA_OBJECT_FIXEDPARENT_
            | TPMA_OBJECT_SENSITIVEDATAORIGIN_ | TPMA_OBJECT_USERWITHAUTH_ | TPMA_OBJECT_NODA_
            | TPMA_OBJECT_RESTRICTED_ | TPMA_OBJECT_DECRYPT_
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES_
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB_
        template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL_
        template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256_
        template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL_
        return template
    }

    func dictionaryAttackState() throws -> TPM.DictionaryAttackState {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        defer { Esys_Free(data) }
        try check("read the dictionary-attack state", Esys_GetCapability(
            context, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), TPM2_CAP(TPM2_CAP_TPM_PROPERTIES_),
            TPM2_PT_PERMANENT_, 18, &more, &data))
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
        guard let failures = values[TPM2_PT_LOCKOUT_COUNTER_], let maximum = values[TPM2_PT_MAX_AUTH_FAIL_] else {
            throw TPMError.failed(operation: "read the dictionary-attack state", detail: "the TPM did not report it")
        }
        return TPM.DictionaryAttackState(
            failures: Int(failures), maximumFailures: Int(maximum), intervalSeconds: Int(values[TPM2_PT_LOCKOUT_INTERVAL_] ?? 0),
            recoverySeconds: Int(values[TPM2_PT_LOCKOUT_RECOVERY_] ?? 0),
            inLockout: (values[TPM2_PT_PERMANENT_] ?? 0) & TPMA_PERMANENT_INLOCKOUT_ != 0,
            lockoutAuthSet: (values[TPM2_PT_PERMANENT_] ?? 0) & TPMA_PERMANENT_LOCKOUTAUTHSET_ != 0)
    }

    func check(_ operation: String, _ rc: TSS2_RC) throws {
        guard rc == TSS2_RC_SUCCESS else { throw failure(operation, rc) }
    }

    func failure(_ operation: String, _ rc: TSS2_RC) -> TPMError {
        // The TCTI's own layer: the TPM went away or never answered.
        if rc & 0xFF_0000 == 0x0A_0000 { return .unavailable(tcti: tcti, reason: Self.decode(rc)) }
        if rc == 0x902 {  // TPM_RC_OBJECT_MEMORY: without a resource manager, another program left objects loaded
            return .failed(operation: operation, detail: "\(Self.decode(rc)); another program left objects loaded in the TPM: use device:/dev/tpmrm0 (the kernel's resource manager), or run tpm2_flushcontext -t")
        }
        return .failed(operation: operation, detail: Self.decode(rc))
    }

    static func decode(_ rc: TSS2_RC) -> String {
        guard let text = Tss2_RC_Decode(rc) else { return "response code 0x\(String(rc, radix: 16))" }
        return String(cString: text)
    }

    /// Why a TCTI would not load, in words a person can act on.
    private static func whyUnavailable(_ tcti: String, _ rc: TSS2_RC) -> String {
        if tcti.hasPrefix("device:") || tcti == "device" {
            let path = tcti.hasPrefix("device:") ? String(tcti.dropFirst("device:".count)) : "/dev/tpmrm0"
            if access(path, F_OK) != 0 { return "\(path) does not exist: this machine has no TPM, or its driver is not loaded" }
            if access(path, R_OK | W_OK) != 0 { return "no permission on \(path)" }
        }
        return decode(rc)
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
        guard rc & 0xFF_0000 == 0 else { self = .notFromTPM; return }
        let code = rc & 0xFFFF
        if code & 0x80 != 0 {
            // Format one: the low 6 bits are the error, bit 6 says whether a parameter (0x40) or a handle or
            // session (bits 8-11) is blamed. TPM_RC_AUTH_FAIL (DA counted) and TPM_RC_BAD_AUTH (not DA-protected;
            // never for our object) are authorisation failures; TPM_RC_INTEGRITY, a private area that does not
            // verify under this TPM's keys.
            switch code & 0x3F {
            case 0x0E, 0x22: self = .authorisationFailed
            case 0x1F: self = .integrity
            default: self = .otherFromTPM
            }
        } else {
            self = code == 0x921 ? .lockout : .otherFromTPM  // TPM_RC_LOCKOUT
        }
    }
}

private func copy<Tuple>(_ bytes: UnsafeRawBufferPointer, into tuple: inout Tuple) {
    withUnsafeMutableBytes(of: &tuple) { out in
        precondition(bytes.count <= out.count)
        out.copyMemory(from: bytes)
    }
}

private func marshal<Value>(_ value: Value, _ function: (UnsafePointer<Value>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC) throws -> [UInt8] {
    var value = value
    var buffer = [UInt8](repeating: 0, count: MemoryLayout<Value>.size + 16)
    var offset = 0
    let rc = buffer.withUnsafeMutableBufferPointer { function(&value, $0.baseAddress, $0.count, &offset) }
    guard rc == TSS2_RC_SUCCESS else { throw TPMError.failed(operation: "encode the sealed object", detail: Connection.decode(rc)) }
    return Array(buffer[0..<offset])
}

/// Decodes `bytes` whole: a trailing byte is as wrong as a missing one.
private func unmarshal<Value>(_ bytes: [UInt8], into value: inout Value, _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Value>?) -> TSS2_RC) -> Bool {
    var offset = 0
    let rc = bytes.withUnsafeBufferPointer { function($0.baseAddress, $0.count, &offset, &value) }
    return rc == TSS2_RC_SUCCESS && offset == bytes.count
}

// The constants keystore uses, from TPM 2.0 Part 2; tpm2-tss defines them as cast macros that Swift cannot import.
private let TPM2_ALG_AES_: TPM2_ALG_ID = 0x0006
private let TPM2_ALG_KEYEDHASH_: TPM2_ALG_ID = 0x0008
private let TPM2_ALG_SHA256_: TPM2_ALG_ID = 0x000B
private let TPM2_ALG_NULL_: TPM2_ALG_ID = 0x0010
private let TPM2_ALG_ECC_: TPM2_ALG_ID = 0x0023
private let TPM2_ALG_CFB_: TPM2_ALG_ID = 0x0043
private let TPM2_ECC_NIST_P256_: TPM2_ECC_CURVE = 0x0003
private let TPM2_SE_HMAC_: UInt8 = 0x00
private let TPMA_SESSION_CONTINUESESSION_: UInt8 = 0x01
private let TPMA_SESSION_DECRYPT_: UInt8 = 0x20
private let TPMA_SESSION_ENCRYPT_: UInt8 = 0x40
private let TPMA_OBJECT_FIXEDTPM_: TPMA_OBJECT = 0x0000_0002
private let TPMA_OBJECT_FIXEDPARENT_: TPMA_OBJECT = 0x0000_0010
private let TPMA_OBJECT_SENSITIVEDATAORIGIN_: TPMA_OBJECT = 0x0000_0020
private let TPMA_OBJECT_USERWITHAUTH_: TPMA_OBJECT = 0x0000_0040
private let TPMA_OBJECT_NODA_: TPMA_OBJECT = 0x0000_0400
private let TPMA_OBJECT_RESTRICTED_: TPMA_OBJECT = 0x0001_0000
private let TPMA_OBJECT_DECRYPT_: TPMA_OBJECT = 0x0002_0000
private let TPM2_CAP_TPM_PROPERTIES_: UInt32 = 0x0000_0006
private let TPM2_PT_PERMANENT_: UInt32 = 0x200
private let TPM2_PT_LOCKOUT_COUNTER_: UInt32 = 0x20E
private let TPM2_PT_MAX_AUTH_FAIL_: UInt32 = 0x20F
private let TPM2_PT_LOCKOUT_INTERVAL_: UInt32 = 0x210
private let TPM2_PT_LOCKOUT_RECOVERY_: UInt32 = 0x211
private let TPMA_PERMANENT_INLOCKOUT_: UInt32 = 0x0000_0200
private let TPMA_PERMANENT_LOCKOUTAUTHSET_: UInt32 = 0x0000_0004

extension LockoutCode {
    /// The code as the TPM2B_AUTH the lockout hierarchy takes. The caller zeroes it.
    fileprivate func authorization() -> TPM2B_AUTH {
        var auth = TPM2B_AUTH()
        bytes.withUnsafeBytes { copy($0, into: &auth.buffer) }
        auth.size = UInt16(bytes.count)
        return auth
    }
}
