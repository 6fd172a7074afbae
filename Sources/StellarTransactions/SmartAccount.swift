import StellarKeys

// The credential of an OpenZeppelin smart account (`stellar-accounts`), as its contract reads it at
// OpenZeppelin/stellar-contracts 8af46e2c3ba3501ff6ddd0a5d72290e410ace9ca, packages/accounts/src/smart_account/
// storage.rs (`AuthPayload`, `Signer`, `do_check_auth`, `authenticate`) and verifiers/ed25519.rs. The signature
// SCVal of the account's authorization entry is an `AuthPayload`, a `#[contracttype]` struct, so an SCV_MAP keyed by
// its field names, in the host's order:
//
//   { context_rule_ids: SCV_VEC [SCV_U32 …],                 one rule per authorization context
//     signers: SCV_MAP { Signer: SCV_BYTES signature, … } }  Signer = SCV_VEC [SCV_SYMBOL "Delegated", SCV_ADDRESS]
//                                                                   | SCV_VEC [SCV_SYMBOL "External", SCV_ADDRESS verifier, SCV_BYTES key]
//
// Each signer signs auth_digest = SHA-256(signature_payload ‖ XDR(context_rule_ids)), which binds the rules chosen
// (a signature cannot be moved to a weaker rule); the Ed25519 verifier checks the 64-byte signature of those 32
// bytes against the 32-byte key.

/// Which rules of an OpenZeppelin smart account a signature is for, and through which verifier contract the account
/// checks this key.
public struct SmartAccountRules: Sendable, Equatable {
    /// The verifier contract (`C…`).
    public let verifier: String
    /// One rule id per authorization context of the account, in the order the host passes the contexts to the
    /// account (depth first through the invocation tree).
    public let contextRuleIDs: [UInt32]
    let verifierID: [UInt8]

    /// Refused: a verifier that is not a contract address, no rule id, more than
    /// `SmartAccountCredential.maximumContextRules`.
    public init(verifier: String, contextRuleIDs: [UInt32]) throws {
        guard let contract = try? StrKey(verifier, as: .contract) else { throw SmartAccountError.verifierNotContract }
        guard !contextRuleIDs.isEmpty else { throw SmartAccountError.noContextRules }
        guard contextRuleIDs.count <= SmartAccountCredential.maximumContextRules else {
            throw SmartAccountError.tooManyContextRules(contextRuleIDs.count)
        }
        self.verifier = verifier
        self.contextRuleIDs = contextRuleIDs
        verifierID = contract.payload
    }
}

/// Reading an OpenZeppelin smart account's credential, and adding an External signer's signature to it (an Ed25519
/// key's, or a P-256 key's through a WebAuthn or secp256r1 verifier) with every other byte kept as given.
package enum SmartAccountCredential {
    /// storage.rs's `MAX_SIGNERS` (mod.rs): a rule holds at most 15 signers, and every signer of a credential must
    /// belong to one of the rules it names (`UnauthorizedSigner` otherwise), so a credential holds at most 15 per
    /// distinct rule.
    package static let maximumSignersPerRule = 15
    /// storage.rs's `MAX_EXTERNAL_KEY_SIZE`: no External signer with a longer key can be registered.
    package static let maximumExternalKeySize = 256
    /// Our own bound, not the contract's: one id per authorization context, and no transaction the network
    /// accepts asks one account for anywhere near 64 contexts. It bounds what is read (and 15 signers per rule).
    package static let maximumContextRules = 64

    /// A signer as a credential names it.
    package struct Signer: Sendable, Equatable {
        package enum Kind: String, Sendable { case delegated = "Delegated", external = "External" }
        package let kind: Kind
        /// The delegated address (`G…`/`C…`), or the verifier contract (`C…`) of an External signer.
        package let address: String
        /// An External signer's key bytes; nil for a Delegated one.
        package let key: [UInt8]?
        /// The SCAddress arm (0 account, 1 contract) and its 32 bytes, for the host's order.
        let addressType: UInt32
        let addressBytes: [UInt8]

        package var keyHex: String? { key.map(Hex.string) }

        init(kind: Kind, addressType: UInt32, addressBytes: [UInt8], key: [UInt8]?) {
            self.kind = kind
            self.addressType = addressType
            self.addressBytes = addressBytes
            self.key = key
            address = SummaryText.strKey(addressType == 0 ? .accountID : .contract, addressBytes)
        }

        /// The host's order of the two SCVals (soroban's ScVal `Ord`), not that of their XDR bytes: a Vec compares
        /// element by element, a shorter prefix first; elements of the same arm by content: a Symbol or Bytes as
        /// byte strings (shorter prefix first), an Address by its arm, then its 32 bytes. By XDR bytes a 31-byte
        /// key would come before a 32-byte one whatever its bytes, its length being first.
        static func hostOrder(_ a: Signer, _ b: Signer) -> Int {
            let kinds = compare(Array(a.kind.rawValue.utf8), Array(b.kind.rawValue.utf8))
            if kinds != 0 { return kinds }
            if a.addressType != b.addressType { return a.addressType < b.addressType ? -1 : 1 }
            let addresses = compare(a.addressBytes, b.addressBytes)
            if addresses != 0 { return addresses }
            switch (a.key, b.key) {
            case let (one?, other?): return compare(one, other)
            case (nil, nil): return 0
            case (nil, _?): return -1  // two elements before three (never reached: the kinds differ)
            case (_?, nil): return 1
            }
        }

        private static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
            a == b ? 0 : a.lexicographicallyPrecedes(b) ? -1 : 1
        }
    }

    /// SHA-256(payload ‖ XDR(SCV_VEC of SCV_U32 ids)): what each signer of the credential signs (storage.rs,
    /// `do_check_auth`).
    package static func digest(payload: [UInt8], contextRuleIDs: [UInt32]) -> [UInt8] {
        let ids = ruleIDs(contextRuleIDs)
        return payload.withUnsafeBytes { p in ids.withUnsafeBytes { Sodium.sha256(parts: [p, $0]) } }
    }

    /// The credential SCVal XDR (an AuthPayload) with the Ed25519 `key`'s External(verifier, key) → signature
    /// added, as `adding(signature:by:rules:to:)` with its 32 bytes; refused too, a signature that is not 64 bytes.
    package static func adding(signature: [UInt8], by key: PublicKey, rules: SmartAccountRules, to existing: [UInt8]) throws -> [UInt8] {
        guard signature.count == 64 else { throw SmartAccountError.signatureLength(signature.count) }
        return try adding(signature: signature, by: key.rawRepresentation, shown: key.accountID, rules: rules, to: existing)
    }

    /// The credential SCVal XDR (an AuthPayload) with External(verifier, `keyData`) → `signature` added: `keyData`
    /// is the signer's key as the account registered it (32 bytes for Ed25519, a P-256 point and any credential id
    /// for WebAuthn), `signature` the value its verifier takes (its `sig_data`), as given.
    /// `existing` is the signature SCVal XDR of the account's entry as it is now: SCV_VOID (nothing yet) or an
    /// AuthPayload, read strictly. Every other signer's key and value bytes are kept exactly as given and the map
    /// stays in the host's order. Refused: key data that is empty or longer than `maximumExternalKeySize`; an
    /// existing AuthPayload that is not well-formed, or whose `context_rule_ids` differ from `rules.contextRuleIDs`
    /// (its signatures are for other rules); one that already holds another signature by this signer; one with no
    /// room for another signer. A signature already there, identical, leaves the credential as it was.
    package static func adding(signature: [UInt8], by keyData: [UInt8], rules: SmartAccountRules, to existing: [UInt8]) throws -> [UInt8] {
        try adding(signature: signature, by: keyData, shown: Hex.string(keyData), rules: rules, to: existing)
    }

    private static func adding(signature: [UInt8], by keyData: [UInt8], shown: String, rules: SmartAccountRules,
                               to existing: [UInt8]) throws -> [UInt8] {
        let ours = try external(keyData, rules)
        let value = bytes(signature)
        guard let credential = try parse(existing) else {
            return [0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 2]  // SCV_MAP, present, two fields
                + symbol("context_rule_ids") + ruleIDs(rules.contextRuleIDs)
                + symbol("signers") + [0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 1] + encoded(ours) + value
        }
        guard credential.contextRuleIDs == rules.contextRuleIDs else {
            throw SmartAccountError.otherRules(found: credential.contextRuleIDs, expected: rules.contextRuleIDs)
        }
        let index = credential.entries.firstIndex { Signer.hostOrder($0.signer, ours) >= 0 } ?? credential.entries.endIndex
        if index < credential.entries.endIndex, Signer.hostOrder(credential.entries[index].signer, ours) == 0 {
            guard Array(existing[credential.entries[index].value]) == value else {
                throw SmartAccountError.otherSignature(key: shown)
            }
            return existing
        }
        let most = maximumSigners(credential.contextRuleIDs)
        guard credential.entries.count < most else { throw SmartAccountError.tooManySigners(credential.entries.count + 1, most: most) }
        var out = existing
        let at = index < credential.entries.endIndex ? credential.entries[index].start : credential.end
        out.insert(contentsOf: encoded(ours) + value, at: at)
        out.replaceSubrange(credential.countOffset..<credential.countOffset + 4, with: bigEndian(UInt32(credential.entries.count + 1)))
        return out
    }

    /// Before the key signs, what `adding` will find: false when `existing` holds this key's signature already
    /// (it is left as it is), true when there is room for it; refused, as `adding` refuses them, a credential
    /// that does not read, one for other rules, one with no room.
    package static func hasRoom(for key: PublicKey, rules: SmartAccountRules, in existing: [UInt8]) throws -> Bool {
        try hasRoom(for: key.rawRepresentation, rules: rules, in: existing)
    }

    /// `hasRoom` for the signer External(verifier, `keyData`), any key bytes as the account registered them.
    package static func hasRoom(for keyData: [UInt8], rules: SmartAccountRules, in existing: [UInt8]) throws -> Bool {
        let ours = try external(keyData, rules)
        guard let credential = try parse(existing) else { return true }
        guard credential.contextRuleIDs == rules.contextRuleIDs else {
            throw SmartAccountError.otherRules(found: credential.contextRuleIDs, expected: rules.contextRuleIDs)
        }
        if credential.entries.contains(where: { Signer.hostOrder($0.signer, ours) == 0 }) { return false }
        let most = maximumSigners(credential.contextRuleIDs)
        guard credential.entries.count < most else { throw SmartAccountError.tooManySigners(credential.entries.count + 1, most: most) }
        return true
    }

    /// External(rules.verifier, keyData); refused, key data no account registers (storage.rs,
    /// `validate_signer_key_size`, and nothing to identify a signer by).
    private static func external(_ keyData: [UInt8], _ rules: SmartAccountRules) throws -> Signer {
        guard (1...maximumExternalKeySize).contains(keyData.count) else { throw SmartAccountError.keyDataLength(keyData.count) }
        return Signer(kind: .external, addressType: 1, addressBytes: rules.verifierID, key: keyData)
    }

    /// The bytes a credential grows by when a signer External(verifier, key of `keySize` bytes) → a signature value
    /// of at most `signatureSize` bytes is added to it.
    package static func growth(keySize: Int, signatureSize: Int) -> Int {
        func padded(_ count: Int) -> Int { (count + 3) / 4 * 4 }
        // SCV_VEC, present, 3 | SCV_SYMBOL "External" | SCV_ADDRESS contract | SCV_BYTES key | SCV_BYTES signature
        return 12 + 16 + 40 + 8 + padded(keySize) + 8 + padded(signatureSize)
    }

    /// For a summary: the rule ids and the signers (in order) of an existing credential; nil for SCV_VOID.
    package static func read(_ existing: [UInt8]) throws -> (contextRuleIDs: [UInt32], signers: [Signer])? {
        try parse(existing).map { ($0.contextRuleIDs, $0.entries.map(\.signer)) }
    }

    /// An AuthPayload read: where its signers' count and entries sit, so that one can be inserted.
    struct Credential {
        struct Entry { let signer: Signer; let start: Int; let value: Range<Int> }
        let contextRuleIDs: [UInt32]
        let countOffset: Int
        let entries: [Entry]
        let end: Int
    }

    static func maximumSigners(_ ids: [UInt32]) -> Int { maximumSignersPerRule * Set(ids).count }

    /// Strictly: exactly the AuthPayload's two fields, in order; ids all SCV_U32; signers Delegated(G…/C…) or
    /// External(C…, key of at most 256 bytes) in the host's order, no one twice, each mapped to SCV_BYTES; nothing
    /// after. No recursion: the shape is fixed, so no nesting can exhaust a stack.
    static func parse(_ bytes: [UInt8]) throws -> Credential? {
        var r = XDRReader(bytes)
        do {
            let at = r.offset
            switch try r.int32() {
            case 1: try XDRReader.expect(r.remaining == 0, at: r.offset, "the end of the credential"); return nil  // SCV_VOID
            case 17: break
            default: throw XDRError(offset: at, expected: "an AuthPayload (SCV_MAP) or SCV_VOID")
            }
            try r.present("an AuthPayload")
            let fields = r.offset
            try XDRReader.expect(try r.uint32() == 2, at: fields, "exactly two fields, context_rule_ids and signers")
            try r.fieldName("context_rule_ids")
            try r.scValType(16, "context_rule_ids as SCV_VEC")
            try r.present("a vector of rule ids")
            let countAt = r.offset
            let count = Int(try r.uint32())
            try XDRReader.expect((1...maximumContextRules).contains(count), at: countAt, "1 to \(maximumContextRules) rule ids, not \(count)")
            var ids: [UInt32] = []
            for _ in 0..<count {
                try r.scValType(3, "a rule id (SCV_U32)")
                ids.append(try r.uint32())
            }
            try r.fieldName("signers")
            try r.scValType(17, "signers as SCV_MAP")
            try r.present("a map of signers")
            let countOffset = r.offset
            let signerCount = Int(try r.uint32())
            let most = maximumSigners(ids)
            guard signerCount <= most else { throw SmartAccountError.tooManySigners(signerCount, most: most) }
            var entries: [Credential.Entry] = []
            for index in 0..<signerCount {
                let start = r.offset
                let signer = try readSigner(&r)
                if let previous = entries.last?.signer, Signer.hostOrder(previous, signer) >= 0 {
                    throw SmartAccountError.signersOutOfOrder(entry: index + 1)
                }
                let valueStart = r.offset
                try r.scValType(13, "a signature (SCV_BYTES)")
                _ = try r.variableOpaque(max: nil)
                entries.append(.init(signer: signer, start: start, value: valueStart..<r.offset))
            }
            try XDRReader.expect(r.remaining == 0, at: r.offset, "the end of the credential, not \(r.remaining) more bytes")
            return Credential(contextRuleIDs: ids, countOffset: countOffset, entries: entries, end: r.offset)
        } catch let error as XDRError {
            throw SmartAccountError.notAuthPayload(error)
        }
    }

    private static func readSigner(_ r: inout XDRReader) throws -> Signer {
        func fail(_ at: Int, _ what: String) -> XDRError { XDRError(offset: at, expected: what) }
        var at = r.offset
        guard try r.int32() == 16 else { throw fail(at, "a signer (SCV_VEC)") }
        at = r.offset
        guard try r.bool() else { throw fail(at, "a signer, not an absent one") }
        let countAt = r.offset
        let count = try r.uint32()
        at = r.offset
        guard try r.int32() == 15 else { throw fail(at, "a signer kind (SCV_SYMBOL)") }
        let kind: Signer.Kind
        switch try r.variableOpaque(max: 32) {
        case Array("Delegated".utf8): kind = .delegated
        case Array("External".utf8): kind = .external
        default: throw fail(at, "a signer kind, Delegated or External")
        }
        guard count == (kind == .delegated ? 2 : 3) else {
            throw fail(countAt, kind == .delegated ? "Delegated(address): one value" : "External(verifier, key): two values")
        }
        at = r.offset
        guard try r.int32() == 18 else { throw fail(at, "an address (SCV_ADDRESS)") }
        at = r.offset
        let addressType = try r.uint32()
        switch addressType {
        case 0:  // SC_ADDRESS_TYPE_ACCOUNT
            guard kind == .delegated else { throw fail(at, "a contract address (C…) as verifier") }
            at = r.offset
            guard try r.int32() == 0 else { throw fail(at, "an Ed25519 account key (PUBLIC_KEY_TYPE_ED25519)") }
        case 1: break  // SC_ADDRESS_TYPE_CONTRACT
        default: throw fail(at, "an account or contract address (G… or C…)")
        }
        let addressBytes = try r.fixedOpaque(32)
        var key: [UInt8]?
        if kind == .external {
            at = r.offset
            guard try r.int32() == 13 else { throw fail(at, "the signer's key (SCV_BYTES)") }
            key = try r.variableOpaque(max: maximumExternalKeySize)
        }
        return Signer(kind: kind, addressType: addressType, addressBytes: addressBytes, key: key)
    }

    // MARK: Encoding (XDR, RFC 4506: big-endian, opaque data padded to 4 bytes)

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func opaque(_ value: [UInt8]) -> [UInt8] {
        bigEndian(UInt32(value.count)) + value + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }

    /// SCV_SYMBOL `text` (also for the fields of a verifier's signature value, `WebAuthnAssertion`).
    static func symbol(_ text: String) -> [UInt8] { [0, 0, 0, 15] + opaque(Array(text.utf8)) }

    /// SCV_BYTES `value`.
    static func bytes(_ value: [UInt8]) -> [UInt8] { [0, 0, 0, 13] + opaque(value) }

    /// SCV_VEC [SCV_U32 id, …]: what `Vec<u32>::to_xdr` writes.
    private static func ruleIDs(_ ids: [UInt32]) -> [UInt8] {
        [0, 0, 0, 16, 0, 0, 0, 1] + bigEndian(UInt32(ids.count)) + ids.flatMap { [0, 0, 0, 3] + bigEndian($0) }
    }

    private static func encoded(_ signer: Signer) -> [UInt8] {
        let address = [0, 0, 0, 18] + bigEndian(signer.addressType) + (signer.addressType == 0 ? [0, 0, 0, 0] : []) + signer.addressBytes
        return [0, 0, 0, 16, 0, 0, 0, 1] + bigEndian(signer.key == nil ? 2 : 3) + symbol(signer.kind.rawValue) + address
            + (signer.key.map(bytes) ?? [])
    }
}

/// What can be wrong with a smart account's rules or credential. All are bad input; nothing is signed.
public enum SmartAccountError: KeystoreError, Equatable {
    /// The verifier named is not a contract address.
    case verifierNotContract
    /// No rule id was given; the account wants one per authorization context.
    case noContextRules
    /// More rule ids than `SmartAccountCredential.maximumContextRules` (the number given).
    case tooManyContextRules(Int)
    /// The Ed25519 signature to add is not 64 bytes (its length).
    case signatureLength(Int)
    /// The signer's key data is empty or longer than `SmartAccountCredential.maximumExternalKeySize` (its length).
    case keyDataLength(Int)
    /// The credential is neither SCV_VOID nor an AuthPayload of exactly its two fields, well-formed.
    case notAuthPayload(XDRError)
    /// The credential's signatures are for other rules than the ones this signature is for.
    case otherRules(found: [UInt32], expected: [UInt32])
    /// A signer (1-based) is not after the one before it in the host's order: out of order, or there twice.
    case signersOutOfOrder(entry: Int)
    /// The credential would hold this many signers, more than its distinct rules can hold.
    case tooManySigners(Int, most: Int)
    /// The credential already holds another signature by this key (its account ID, or its bytes in hex) through
    /// this verifier.
    case otherSignature(key: String)

    public var message: String {
        switch self {
        case .verifierNotContract: "The smart account's verifier is not a contract address (C…); nothing was signed."
        case .noContextRules: "No context rule was named; a smart account needs one per authorization context. Nothing was signed."
        case .tooManyContextRules(let count):
            "\(count) context rules were named, more than the \(SmartAccountCredential.maximumContextRules) that are read; nothing was signed."
        case .signatureLength(let count): "The signature to add is \(count) bytes, not Ed25519's 64; nothing was signed."
        case .keyDataLength(let count):
            "The signer's key is \(count) bytes; a smart account registers keys of 1 to \(SmartAccountCredential.maximumExternalKeySize). Nothing was signed."
        case .notAuthPayload(let error):
            "The smart account's credential is not an AuthPayload: at byte \(error.offset), expected \(error.expected); nothing was signed."
        case .otherRules(let found, let expected):
            "The smart account's credential holds signatures for context rules \(Self.list(found)), not \(Self.list(expected)); nothing was signed."
        case .signersOutOfOrder(let entry):
            "Signer \(entry) of the smart account's credential is out of order or there twice, which the network refuses; nothing was signed."
        case .tooManySigners(let count, let most):
            "The smart account's credential would hold \(count) signers, more than the \(most) its rules can have; nothing was signed."
        case .otherSignature(let key):
            "The smart account's credential already holds another signature by \(key) through this verifier; nothing was signed."
        }
    }

    private static func list(_ ids: [UInt32]) -> String { "[" + ids.map(String.init).joined(separator: ", ") + "]" }
}
