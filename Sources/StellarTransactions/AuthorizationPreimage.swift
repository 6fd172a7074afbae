import StellarKeys
import StellarText

/// What an address signs to authorize a Soroban contract invocation: a `HashIDPreimage` of type
/// `ENVELOPE_TYPE_SOROBAN_AUTHORIZATION` (or `…_WITH_ADDRESS`, CAP-71, which also binds the address), exactly as
/// given. It is what Freighter's and SEP-43's `signAuthEntry` receive. The signature is Ed25519 over the SHA-256 of
/// these bytes, which are never re-encoded.
public struct AuthorizationPreimage: Sendable {
    public let bytes: [UInt8]
    /// SHA-256 of the passphrase of the network the authorization is for.
    package let networkID: [UInt8]
    public let nonce: Int64
    /// The last ledger at which the signature is valid.
    public let signatureExpirationLedger: UInt32
    /// The address the preimage binds (`…_WITH_ADDRESS` only), as `G…`/`C…`/`M…`.
    package let boundAddress: String?
    let invocation: XDR.SorobanAuthorizedInvocation

    /// The largest preimage accepted, in base64 as given (an envelope's limit).
    package static let maximumTextSize = TransactionEnvelope.maximumTextSize

    /// Reads a preimage in base64; white space (a final newline included) is ignored.
    public init(base64 text: [UInt8]) throws {
        guard text.count <= Self.maximumTextSize else { throw AuthorizationError.tooLarge(text.count) }
        let compact = Base64.removingWhiteSpace(text)
        guard !compact.isEmpty else { throw AuthorizationError.empty }
        guard let bytes = Base64.decode(compact) else { throw AuthorizationError.notBase64 }
        try self.init(xdr: bytes)
    }

    public init(base64 text: String) throws {
        try self.init(base64: Array(text.utf8))
    }

    /// Reads a preimage's XDR bytes; any other `HashIDPreimage` arm (an operation or contract ID) is refused.
    public init(xdr bytes: [UInt8]) throws {
        var reader = XDRReader(bytes)
        do {
            let type = try XDR.EnvelopeType(xdr: &reader)
            guard type == .sorobanAuthorization || type == .sorobanAuthorizationWithAddress else {
                throw AuthorizationError.notAnAuthorization(type.xdrName)
            }
            networkID = try reader.fixedOpaque(32)
            nonce = try reader.int64()
            signatureExpirationLedger = try reader.uint32()
            boundAddress = type == .sorobanAuthorizationWithAddress ? SummaryText.address(try XDR.SCAddress(xdr: &reader)) : nil
            invocation = try XDR.SorobanAuthorizedInvocation(xdr: &reader)
            try reader.finish()
        } catch let error as XDRError {
            throw AuthorizationError.invalidXDR(error)
        }
        self.bytes = bytes
    }

    /// The `ENVELOPE_TYPE_SOROBAN_AUTHORIZATION` preimage of an entry given by its parts (as stellar-cli's
    /// signer plugins receive them), `invocation` being a `SorobanAuthorizedInvocation`'s XDR, read strictly.
    public init(network: StellarNetwork, nonce: Int64, signatureExpirationLedger: UInt32, invocation: [UInt8]) throws {
        func bigEndian(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xFF) } }
        try self.init(xdr: [0, 0, 0, 9] + network.id + bigEndian(UInt64(bitPattern: nonce), 8)
                      + bigEndian(UInt64(signatureExpirationLedger), 4) + invocation)
    }

    /// The number of authorization contexts its tree gives an account's `__check_auth`: one per invocation.
    package var contextCount: Int {
        func count(_ invocation: XDR.SorobanAuthorizedInvocation) -> Int { 1 + invocation.subInvocations.map(count).reduce(0, +) }
        return count(invocation)
    }

    /// The `!!` line of a V1 preimage's summary.
    static let notAddressBoundWarning = "this is a V1 payload: the signature binds no address, so any other address that accepts this key "
        + "(a smart account that lists it) could replay it as its own credential (CAP-71-02)"

    /// What the key signs: SHA-256 of the preimage.
    public var hash: [UInt8] { bytes.withUnsafeBytes { Sodium.sha256($0) } }

    /// The preimage's network must be `network`: a signature for one network is worthless on another, and a
    /// preimage that names another is not what the caller thinks it is.
    public func check(on network: StellarNetwork) throws {
        guard networkID == network.id else { throw AuthorizationError.otherNetwork(expected: network.shown) }
    }

    /// For a person, before the key signs: `SigningSummary.preimage(_:on:signingAs:)`'s text (without a signer
    /// line when `identity` is nil).
    public func lines(on network: StellarNetwork, signingAs identity: (name: String, key: PublicKey)? = nil) -> [String] {
        SigningSummary.preimage(self, on: network, signer: identity.map { ($0.name, .ed25519($0.key)) }).text
    }

    /// The lines after the title: who signs (`signingAs`, by name and key), what the signature binds, and the
    /// invocation tree with every argument (as a transaction summary shows an authorization entry), within the
    /// bounds of `ContractCallText`; what they leave out is added to `elided`.
    func body(signingAs identity: (name: String, key: AuthorizationSigner.Key)?, contextRuleIDs: [UInt32]? = nil, elided: inout [Elision]) -> [String] {
        var lines: [String] = []
        func add(_ name: String, _ value: String) { lines.append("  " + name + String(repeating: " ", count: max(12 - name.count, 1)) + value) }
        if let identity { add("signer", "\(SummaryText.quotedIfNeeded(identity.name)) (\(identity.key))") }
        if let identity, let bound = boundAddress, bound != identity.key.description { add("on behalf of", bound) }
        add("hash", Hex.string(hash))
        add("binds", boundAddress.map { "the address \($0) (CAP-71)" } ?? "any address whose credentials carry this nonce")
        if let contextRuleIDs {
            add("signs", Hex.string(SmartAccountCredential.digest(payload: hash, contextRuleIDs: contextRuleIDs))
                + ", SHA-256 of the hash and the rule ids")
            add("rules", contextRuleIDs.map(String.init).joined(separator: ", ")
                + ": a smart account's signer's signature, valid only for these context rules (one per invocation, depth first)")
        }
        add("nonce", String(nonce))
        add("expires", "after ledger \(signatureExpirationLedger)")
        for (depth, line) in ContractCallText.invocationLines(invocation, elided: &elided) {
            lines.append("  " + String(repeating: "  ", count: depth) + "invokes     " + line)
        }
        return lines
    }
}

/// What can be wrong with an authorization preimage to sign. All are bad input.
public enum AuthorizationError: KeystoreError, Equatable {
    private static func list(_ numbers: [Int]) -> String { numbers.map(String.init).joined(separator: ", ") }

    case empty
    case tooLarge(Int)
    case notBase64
    case invalidXDR(XDRError)
    /// A `HashIDPreimage` of another kind (its XDR name).
    case notAnAuthorization(String)
    /// The preimage is for another network than the one named (shown).
    case otherNetwork(expected: String)
    /// Only a v1 envelope carries Soroban operations (the kind given).
    case notV1(String)
    /// The envelope carries this many envelope signatures, which new entry signatures would void.
    case envelopeAlreadySigned(Int)
    /// No entry asks for this account's signature; the addresses that entries do ask for.
    case noEntry(for: String, asked: [String])
    /// This entry (1-based) is not strict, and that was not allowed.
    case notStrict(entry: Int)
    /// These entries (1-based; none for a bare preimage) sign a V1 payload, which binds no address, and that was
    /// not allowed.
    case notAddressBound(entries: [Int])
    /// An entry of the transaction's source account has no signature of its own.
    case sourceAccountEntry
    /// A delegates array of this entry is not sorted by address, or names an address twice.
    case delegatesOutOfOrder(entry: Int)
    /// The signer is this entry's own address and one of its delegates too.
    case signerTwice(entry: Int)
    /// A smart account's signature needs one rule id per authorization context of the entry's tree.
    case contextRulesMismatch(entry: Int?, contexts: Int, given: Int)
    /// The smart account's credential already holds signatures for other rule ids.
    case otherContextRules(entry: Int, carried: [UInt32])
    /// Signatures on the entry commit to the expiration ledger it carries, and another was asked.
    case expirationDiffers(entry: Int, carried: UInt32)
    /// No credential node of this entry is the signer's address.
    case notForSigner(entry: Int, signer: String)
    /// An address that must be a contract's (`C…`) is not.
    case notAContract(String)
    /// This key (shown) is not Ed25519, and the account convention (an account's own signature, or a contract
    /// account's) takes only Ed25519 keys.
    case notAnEd25519Key(String)
    /// This node of the entry carries a signature that is not an account's signatures (`AccountSignatures`), so this
    /// key's cannot be added beside it, and signing would replace it.
    case notAccountSignatures(entry: Int, node: String, XDRError)
    /// This node of the entry holds as many signatures as an account's credential can (`AccountSignatures`).
    case noRoomForSignature(entry: Int, node: String)
    /// An address that must be a Stellar account's (`G…`) is not.
    case notAnAccount(String)

    public var message: String {
        switch self {
        case .empty: "The authorization preimage is empty."
        case .tooLarge(let count): "The authorization preimage is \(count) bytes, more than the 1 MiB that is read."
        case .notBase64: "The authorization preimage is not base64."
        case .invalidXDR(let error): "The authorization preimage is not valid XDR: at byte \(error.offset), expected \(error.expected)."
        case .notAnAuthorization(let type): "The preimage is a \(type), not a Soroban authorization; nothing was signed."
        case .otherNetwork(let expected): "The authorization preimage is for another network than \(expected); nothing was signed."
        case .notV1(let kind): "A \(kind) envelope carries no authorization entries to sign; sign the entries of the inner v1 transaction before it is wrapped."
        case .envelopeAlreadySigned(let count):
            "The envelope already carries \(count) signature(s); signing its authorization entries changes the transaction hash and would void them. Sign the entries first; nothing was signed."
        case .noEntry(let address, let asked):
            "No authorization entry asks for \(address)'s signature" + (asked.isEmpty ? "; the envelope asks for none." : "; it asks for \(asked.joined(separator: ", ")).")
        case .notStrict(let entry):
            "Authorization \(entry) is not strict: its root is not this transaction's call, so its signature could be used by another transaction; nothing was signed."
        case .notAddressBound(let entries):
            (entries.isEmpty ? "The preimage is" : entries.count == 1 ? "Authorization \(entries[0]) is" : "Authorizations \(Self.list(entries)) are")
                + " a V1 payload, which binds no address (CAP-71-02): its signature could be replayed as the credential of another address that accepts this key; simulate again for V2 credentials, or accept V1 explicitly. Nothing was signed."
        case .sourceAccountEntry: "The entry is the transaction's source account's, which the transaction's own signature authorizes; nothing was signed."
        case .delegatesOutOfOrder(let entry):
            "Authorization \(entry) breaks CAP-71's rule that each delegates array is sorted by address with no address twice, so the network would reject it; nothing was signed."
        case .signerTwice(let entry):
            "In authorization \(entry) this key is both the entry's address and one of its delegates, which CAP-71 does not allow; nothing was signed."
        case .contextRulesMismatch(let entry, let contexts, let given):
            (entry.map { "Authorization \($0)" } ?? "The preimage") + " has \(contexts) authorization context(s), and \(given) context rule id(s) were given: a smart account needs exactly one per context, in the order of its tree; nothing was signed."
        case .otherContextRules(let entry, let carried):
            "Authorization \(entry) already holds signatures for context rules \(carried.map(String.init).joined(separator: ", ")), and a signature for other rules cannot join them; nothing was signed."
        case .expirationDiffers(let entry, let carried):
            "Authorization \(entry) already carries signatures valid through ledger \(carried), and a new expiration would void them; sign with that expiration ledger. Nothing was signed."
        case .notForSigner(let entry, let signer): "Authorization \(entry) asks nothing of \(signer); nothing was signed."
        case .notAccountSignatures(let entry, let node, let error):
            "In authorization \(entry), the node of \(node) carries a signature that is not an account's Vec[Map{public_key, signature}] sorted by key (at byte \(error.offset), expected \(error.expected)), which signing would replace; nothing was signed."
        case .noRoomForSignature(let entry, let node):
            "In authorization \(entry), the node of \(node) holds \(AccountSignatures.maximumSignatures) signatures already, the most an account's credential can; nothing was signed."
        case .notAnAccount(let address): "\(SummaryText.quoted(address)) is not a Stellar account address (G…)."
        case .notAContract(let address): "\(SummaryText.quoted(address)) is not a contract address (C…)."
        case .notAnEd25519Key(let key):
            "The \(key) signs only as a smart account's External signer; an account's own signature and the account convention take Ed25519 keys. Nothing was signed."
        }
    }
}
