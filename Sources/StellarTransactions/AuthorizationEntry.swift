import StellarKeys
import StellarText

/// One Soroban authorization entry (`SorobanAuthorizationEntry`), exactly as given, with where each part a signer
/// writes sits in its bytes: the expiration ledger, and the signature of every credential node, the entry's own
/// address and each delegate of CAP-71 (`SOROBAN_CREDENTIALS_ADDRESS_WITH_DELEGATES`), nested ones too. Signing it
/// changes exactly the expiration and the signatures of the nodes signed; every other byte stays as given.
package struct AuthorizationEntry: Sendable {
    /// The entry's XDR as given.
    package let bytes: [UInt8]
    let decoded: XDR.SorobanAuthorizationEntry
    package let credentials: Credentials
    /// Every node that can carry a signature, in the order of the bytes: the entry's own address first (depth
    /// 0), then its delegates depth first (depth 1, their own delegates 2, …). Empty for the source account's.
    package let nodes: [AuthorizationNode]
    /// Where the entry's expiration ledger (4 bytes) and nonce (the 8 bytes before it) sit.
    package let expirationOffset: Int
    package let invocationRange: Range<Int>
    /// Every delegates array is sorted by address with no address twice, as the host requires.
    package let delegatesInOrder: Bool

    package enum Credentials: Sendable { case sourceAccount, address, addressV2, addressWithDelegates }

    /// The largest entry read, in bytes: an envelope's limit.
    package static let maximumSize = TransactionEnvelope.maximumTextSize

    /// Reads an entry's XDR bytes, all of them.
    package init(xdr bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumSize else { throw AuthorizationError.tooLarge(bytes.count) }
        var reader = XDRReader(bytes)
        do {
            decoded = try XDR.SorobanAuthorizationEntry(xdr: &reader)
            try reader.finish()
        } catch let error as XDRError {
            throw AuthorizationError.invalidXDR(error)
        }
        self.bytes = bytes
        // The same bytes again, noting where each part sits; they parsed once, so they cannot fail now.
        var walker = XDRReader(bytes)
        var nodes: [AuthorizationNode] = [], inOrder = true
        do {
            let type = try walker.int32()
            credentials = switch type { case 0: .sourceAccount; case 1: .address; case 2: .addressV2; default: .addressWithDelegates }
            var expiration = walker.offset
            if credentials != .sourceAccount {
                let node = try Self.node(&walker, depth: 0, bytes: bytes) { r in
                    _ = try r.int64()
                    expiration = r.offset
                    _ = try r.uint32()
                }
                nodes.append(node)
                if credentials == .addressWithDelegates { try Self.delegates(&walker, depth: 1, bytes: bytes, into: &nodes, inOrder: &inOrder) }
            }
            expirationOffset = expiration
            let invocationStart = walker.offset
            _ = try XDR.SorobanAuthorizedInvocation(xdr: &walker)
            invocationRange = invocationStart..<walker.offset
        } catch let error as XDRError {
            preconditionFailure("an entry that parsed failed to parse again: \(error)")
        }
        self.nodes = nodes
        delegatesInOrder = inOrder
    }

    package init(base64 text: String) throws {
        let compact = Base64.removingWhiteSpace(text.utf8)
        guard compact.count <= Self.maximumSize * 4 / 3 + 4 else { throw AuthorizationError.tooLarge(compact.count) }
        guard let bytes = Base64.decode(compact) else { throw AuthorizationError.notBase64 }
        try self.init(xdr: bytes)
    }

    package var base64: String { Base64.string(bytes) }

    /// The address the entry authorizes for (`G…`, `C…`); nil for the transaction's source account.
    package var address: String? { nodes.first?.address }
    /// Whether what its signers sign binds the address (`…_ADDRESS_V2` and `…_WITH_DELEGATES`, CAP-71); a V1
    /// payload binds none, so a signature made for one address could serve another that accepts the same key.
    package var isAddressBound: Bool { credentials == .addressV2 || credentials == .addressWithDelegates }
    package var nonce: Int64? { credentials == .sourceAccount ? nil : Self.int64(bytes, at: expirationOffset - 8) }
    /// The expiration ledger the entry carries now (what a signature already on it commits to).
    package var signatureExpirationLedger: UInt32? {
        credentials == .sourceAccount ? nil : UInt32(Self.int64(bytes, at: expirationOffset - 4) & 0xFFFF_FFFF)
    }
    /// The number of authorization contexts its tree gives the account's `__check_auth`: one per invocation,
    /// depth first.
    package var contextCount: Int {
        func count(_ invocation: XDR.SorobanAuthorizedInvocation) -> Int { 1 + invocation.subInvocations.map(count).reduce(0, +) }
        return count(decoded.rootInvocation)
    }

    /// What every signer of the entry signs (all its nodes sign the same payload, CAP-71-01), at `expirationLedger`:
    /// the `…_WITH_ADDRESS` preimage bound to the entry's own address, or the V1 one.
    package func preimage(on network: StellarNetwork, expirationLedger: UInt32) throws -> AuthorizationPreimage {
        guard let top = nodes.first else { throw AuthorizationError.sourceAccountEntry }
        let tag: [UInt8] = isAddressBound ? [0, 0, 0, 10] : [0, 0, 0, 9]
        var preimage = tag + network.id + Array(bytes[expirationOffset - 8..<expirationOffset]) + Self.bigEndian(expirationLedger)
        if isAddressBound { preimage += top.addressXDR }
        return try AuthorizationPreimage(xdr: preimage + bytes[invocationRange])
    }

    /// The nodes `signer` signs, after every check that needs only public keys; empty when none is its. Refused:
    /// an entry whose delegates break the host's rule (sorted by address, none twice), one where the signer is
    /// both the entry's address and a delegate, a smart account's rule ids that are not one per context, and a new
    /// expiration where another signature on the entry commits to the one it carries.
    package func nodes(for signer: AuthorizationSigner, expirationLedger: UInt32, number: Int) throws -> [AuthorizationNode] {
        var targets = nodes.filter { $0.addressXDR == signer.addressXDR }
        guard !targets.isEmpty else { return [] }
        guard delegatesInOrder else { throw AuthorizationError.delegatesOutOfOrder(entry: number) }
        if targets.contains(where: { $0.depth == 0 }) && targets.count > 1 { throw AuthorizationError.signerTwice(entry: number) }
        if let rules = signer.rules, rules.contextRuleIDs.count != contextCount {
            throw AuthorizationError.contextRulesMismatch(entry: number, contexts: contextCount, given: rules.contextRuleIDs.count)
        }
        // A signature on another node commits to the expiration the entry carries.
        var othersSigned = nodes.contains { node in node.isSigned && !targets.contains(node) }
        // A signed node of the signer's is never overwritten with another's signature lost: in the account convention
        // this key's map is added beside the other signers' (its own earlier one replaced); a smart account's credential
        // gets this key added beside the others, whose signatures commit to the expiration too, or is left as it is
        // when it holds this key's already. All known before the key is asked.
        var alreadyThere: [AuthorizationNode] = []
        for target in targets where target.isSigned {
            let existing = Array(bytes[target.signatureRange])
            if let rules = signer.rules {
                othersSigned = true
                if try !SmartAccountCredential.hasRoom(for: signer.keyData, rules: rules, in: existing) { alreadyThere.append(target) }
            } else {
                // The account convention: the maps of the account's other signers stay, and this key's goes in its
                // place among them (its own earlier one replaced). Their signatures commit to the expiration too.
                let key = try signer.accountKey().rawRepresentation
                let held: [AccountSignatures.Signature]
                do {
                    held = try AccountSignatures.read(existing)
                } catch let error as XDRError {
                    throw AuthorizationError.notAccountSignatures(entry: number, node: target.address, error)
                }
                let others = held.filter { $0.key != key }
                if !others.isEmpty { othersSigned = true }
                guard others.count < AccountSignatures.maximumSignatures else {
                    throw AuthorizationError.noRoomForSignature(entry: number, node: target.address)
                }
            }
        }
        if let stored = signatureExpirationLedger, stored != expirationLedger, othersSigned {
            throw AuthorizationError.expirationDiffers(entry: number, carried: stored)
        }
        targets.removeAll { alreadyThere.contains($0) }
        // Each signature written grows the entry: it must still be one the network (and this reader) accepts.
        let growth = targets.count * (signer.rules == nil ? 148 : SmartAccountCredential.growth(
            keySize: signer.keyData.count, signatureSize: signer.key == nil ? P256SignatureForm.largestCredentialSignature : 64))
        guard bytes.count + growth <= Self.maximumSize else { throw AuthorizationError.tooLarge(bytes.count + growth) }
        return targets
    }

    /// The entry signed by `signer` on each of its nodes, valid through `expirationLedger`: `signature` is asked
    /// once, for the payload all the nodes share, after every check of `nodes(for:expirationLedger:number:)` (and a V1
    /// entry only with `.notAddressBound` in `allowing`); it is
    /// written as the node's account reads it (`AuthorizationSigner`). The signature is spliced in as given:
    /// checking it is the caller's part, where the signer is not trusted.
    package func signed(for signer: AuthorizationSigner, on network: StellarNetwork, expirationLedger: UInt32,
                       allowing: AuthorizationRisks = [], signature: (AuthorizationPayload) throws -> [UInt8]) throws -> AuthorizationEntry {
        // A V1 payload binds no address; signed only when that risk was accepted.
        if !isAddressBound && names(signer) && !allowing.contains(.notAddressBound) { throw AuthorizationError.notAddressBound(entries: [1]) }
        return try signed(for: signer, on: network, expirationLedger: expirationLedger, number: 1, signature: signature)
    }

    package func signed(for signer: AuthorizationSigner, on network: StellarNetwork, expirationLedger: UInt32, number: Int,
                        signature: (AuthorizationPayload) throws -> [UInt8]) throws -> AuthorizationEntry {
        let targets = try nodes(for: signer, expirationLedger: expirationLedger, number: number)
        guard !targets.isEmpty else {
            // Every node of the signer's holds its signature already: there is nothing to add.
            if names(signer) { return self }
            throw AuthorizationError.notForSigner(entry: number, signer: signer.address)
        }
        let payload = AuthorizationPayload(preimage: try preimage(on: network, expirationLedger: expirationLedger),
                                           contextRuleIDs: signer.rules?.contextRuleIDs)
        let made = try signature(payload)
        var out = bytes
        // From the last node back, so that each splice leaves the offsets before it valid; the expiration is before all.
        for target in targets.reversed() {
            let value: [UInt8]
            let existing = Array(bytes[target.signatureRange])
            switch (signer.rules, signer.signingKey) {
            case (let rules?, .ed25519(let key)): value = try SmartAccountCredential.adding(signature: made, by: key, rules: rules, to: existing)
            case (let rules?, .p256(let key)): value = try SmartAccountCredential.adding(signature: made, by: key.keyData, rules: rules, to: existing)
            case (nil, _): value = try AccountSignatures.adding(signature: made, by: try signer.accountKey(), to: existing)
            }
            out.replaceSubrange(target.signatureRange, with: value)
        }
        out.replaceSubrange(expirationOffset..<expirationOffset + 4, with: Self.bigEndian(expirationLedger))
        return try AuthorizationEntry(xdr: out)
    }

    /// Some node of the entry is `signer`'s address.
    func names(_ signer: AuthorizationSigner) -> Bool { nodes.contains { $0.addressXDR == signer.addressXDR } }

    /// The addresses `node` signs on behalf of: the entry's own, then each delegate between them.
    func chain(to node: AuthorizationNode) -> [String] {
        guard let index = nodes.firstIndex(of: node) else { return [] }
        var chain: [String] = [], depth = node.depth
        for earlier in nodes[..<index].reversed() where earlier.depth == depth - 1 {
            chain.insert(earlier.address, at: 0)
            depth -= 1
        }
        return chain
    }

    /// What each authorization context of the tree is, depth first, as `contract "function"`; at most `limit`.
    func contextNames(limit: Int = 64) -> [String] {
        var names: [String] = []
        func walk(_ invocation: XDR.SorobanAuthorizedInvocation) {
            guard names.count < limit else { return }
            names.append(ContractCallText.contextName(invocation.function))
            for invoked in invocation.subInvocations { walk(invoked) }
        }
        walk(decoded.rootInvocation)
        return names
    }

    // MARK: Walking

    /// One credential node: its address, then what `between` reads (the top level's nonce and expiration), then
    /// its signature.
    private static func node(_ r: inout XDRReader, depth: Int, bytes: [UInt8],
                             between: (inout XDRReader) throws -> Void = { _ in }) throws -> AuthorizationNode {
        let start = r.offset
        let address = try XDR.SCAddress(xdr: &r)
        let addressEnd = r.offset
        try between(&r)
        let signatureStart = r.offset
        var peek = r
        let isSigned = try peek.int32() != 1  // SCV_VOID: nothing signed yet
        _ = try XDR.SCVal(xdr: &r)
        return AuthorizationNode(address: SummaryText.address(address), addressXDR: Array(bytes[start..<addressEnd]),
                                 signatureRange: signatureStart..<r.offset, depth: depth, isSigned: isSigned)
    }

    private static func delegates(_ r: inout XDRReader, depth: Int, bytes: [UInt8], into nodes: inout [AuthorizationNode],
                                  inOrder: inout Bool) throws {
        let count = try r.uint32()
        var previous: [UInt8]?
        for _ in 0..<count {
            let node = try node(&r, depth: depth, bytes: bytes)
            if let previous, !previous.lexicographicallyPrecedes(node.addressXDR) { inOrder = false }
            previous = node.addressXDR
            nodes.append(node)
            try delegates(&r, depth: depth + 1, bytes: bytes, into: &nodes, inOrder: &inOrder)
        }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func int64(_ bytes: [UInt8], at offset: Int) -> Int64 {
        Int64(bitPattern: bytes[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}

/// A place in an entry's credentials that carries a signature: the entry's own address, or a delegate's.
package struct AuthorizationNode: Sendable, Equatable {
    package let address: String
    /// The node's `SCAddress` XDR, what delegates are sorted by.
    package let addressXDR: [UInt8]
    /// Where its signature `SCVal` sits in the entry's bytes.
    package let signatureRange: Range<Int>
    /// 0 for the entry's own address, 1 for its delegates, 2 for theirs, …
    package let depth: Int
    /// It carries something other than `SCV_VOID`.
    package let isSigned: Bool
}

/// Which account a key signs authorization entries for, and so how its signature is written there.
public enum AuthorizationAccount: Sendable, Equatable {
    /// The key's own account (`G…`): `Vec[Map{public_key, signature}]`, the account convention of stellar-sdk
    /// and stellar-cli, over the payload's SHA-256, on the account's entries and on every delegate node that
    /// names it.
    case ownAccount
    /// Another Stellar account (`G…`) that lists the key as one of its signers: its map is added, in key order, to
    /// the `Vec[Map{public_key, signature}]` its other signers' are in (the host checks their weights together
    /// against the account's medium threshold), on the account's entries and on every delegate node naming it.
    case multisigAccount(String)
    /// A contract account (`C…`) whose `__check_auth` reads the account convention.
    case contractAccount(String)
    /// An OpenZeppelin smart account (`C…`, stellar-accounts) that lists the key as an `External(verifier, key)`
    /// signer: the signature is over SHA-256(payload ‖ XDR of the rule ids), added to the account's
    /// `AuthPayload { context_rule_ids, signers }` with every other signer's kept.
    case smartAccount(String, rules: SmartAccountRules)
}

/// A key and the account it signs authorization entries for: whose credential nodes it signs, and how.
public struct AuthorizationSigner: Sendable, Equatable {
    /// The key a signer signs with: an Ed25519 key, or a P-256 key, which signs only as a smart account's External
    /// signer (through a WebAuthn or secp256r1 verifier; `P256SignatureForm`): the account convention is Ed25519's.
    public enum Key: Sendable, Equatable, CustomStringConvertible {
        case ed25519(PublicKey)
        case p256(P256PublicKey)

        /// The account ID of an Ed25519 key; "P-256 key " and the hex of a P-256 key's data.
        public var description: String {
            switch self {
            case .ed25519(let key): key.accountID
            case .p256(let key): "P-256 key " + Hex.string(key.keyData)
            }
        }
    }

    public let signingKey: Key
    public let account: AuthorizationAccount
    /// The address whose nodes are signed (`G…`, `C…`).
    public let address: String
    let addressXDR: [UInt8]

    /// The Ed25519 key; nil for a P-256 key.
    public var key: PublicKey? {
        if case .ed25519(let key) = signingKey { key } else { nil }
    }

    public init(key: PublicKey, for account: AuthorizationAccount) throws {
        try self.init(signingKey: .ed25519(key), for: account)
    }

    /// Refused: a contract account that is not a contract address; a P-256 key for anything but a smart account.
    public init(signingKey: Key, for account: AuthorizationAccount) throws {
        switch account {
        case .ownAccount:
            guard case .ed25519(let key) = signingKey else { throw AuthorizationError.notAnEd25519Key(signingKey.description) }
            self = .account(key)
        case .multisigAccount(let address):
            guard case .ed25519(let key) = signingKey else { throw AuthorizationError.notAnEd25519Key(signingKey.description) }
            guard let strKey = try? StrKey(address, as: .accountID) else { throw AuthorizationError.notAnAccount(address) }
            // The key's own account is its own account, whatever it was called.
            if strKey.payload == key.rawRepresentation { self = .account(key); return }
            // SC_ADDRESS_TYPE_ACCOUNT, PUBLIC_KEY_TYPE_ED25519
            self.init(signingKey: signingKey, account: account, address: address, addressXDR: [0, 0, 0, 0, 0, 0, 0, 0] + strKey.payload)
        case .contractAccount(let contract), .smartAccount(let contract, _):
            if case .contractAccount = account, case .p256 = signingKey { throw AuthorizationError.notAnEd25519Key(signingKey.description) }
            guard let strKey = try? StrKey(contract), strKey.kind == .contract else { throw AuthorizationError.notAContract(contract) }
            self.init(signingKey: signingKey, account: account, address: contract, addressXDR: [0, 0, 0, 1] + strKey.payload)  // SC_ADDRESS_TYPE_CONTRACT
        }
    }

    private init(signingKey: Key, account: AuthorizationAccount, address: String, addressXDR: [UInt8]) {
        self.signingKey = signingKey
        self.account = account
        self.address = address
        self.addressXDR = addressXDR
    }

    /// The key's bytes as a smart account's External signer names them: an Ed25519 key's 32, a P-256 key's data.
    var keyData: [UInt8] {
        switch signingKey {
        case .ed25519(let key): key.rawRepresentation
        case .p256(let key): key.keyData
        }
    }

    /// The Ed25519 key of a signer that signs with the account convention (`init` gives no other such signer).
    func accountKey() throws -> PublicKey {
        guard let key else { throw AuthorizationError.notAnEd25519Key(signingKey.description) }
        return key
    }

    /// The rules of a smart account's signature; nil for the account convention.
    public var rules: SmartAccountRules? {
        if case .smartAccount(_, let rules) = account { rules } else { nil }
    }

    public static func account(_ key: PublicKey) -> Self {
        // SC_ADDRESS_TYPE_ACCOUNT, PUBLIC_KEY_TYPE_ED25519
        Self(signingKey: .ed25519(key), account: .ownAccount, address: key.accountID, addressXDR: [0, 0, 0, 0, 0, 0, 0, 0] + key.rawRepresentation)
    }

    /// `key` as one of the signers of the account `address` (`G…`).
    package static func multisigAccount(_ address: String, key: PublicKey) throws -> Self {
        try Self(key: key, for: .multisigAccount(address))
    }

    public static func contractAccount(_ address: String, key: PublicKey) throws -> Self {
        try Self(key: key, for: .contractAccount(address))
    }

    public static func smartAccount(_ address: String, key: PublicKey, rules: SmartAccountRules) throws -> Self {
        try Self(key: key, for: .smartAccount(address, rules: rules))
    }

    /// A P-256 key that the smart account lists as `External(rules.verifier, key.keyData)`.
    public static func smartAccount(_ address: String, p256Key key: P256PublicKey, rules: SmartAccountRules) throws -> Self {
        try Self(signingKey: .p256(key), for: .smartAccount(address, rules: rules))
    }
}

/// What a key signs for one authorization entry: the payload's preimage, and for a smart account's signer the rule
/// ids bound with it.
package struct AuthorizationPayload: Sendable {
    package let preimage: AuthorizationPreimage
    package let contextRuleIDs: [UInt32]?

    package init(preimage: AuthorizationPreimage, contextRuleIDs: [UInt32]? = nil) {
        self.preimage = preimage
        self.contextRuleIDs = contextRuleIDs
    }

    /// The 32 bytes the key signs: the preimage's SHA-256 (the host's payload), or for a smart account
    /// SHA-256(payload ‖ XDR of the rule ids). An Ed25519 key signs them as they are; a P-256 key signs what its
    /// form makes of them (`P256SignatureForm.digestToSign(for:)`).
    package var digest: [UInt8] {
        contextRuleIDs.map { SmartAccountCredential.digest(payload: preimage.hash, contextRuleIDs: $0) } ?? preimage.hash
    }
}
