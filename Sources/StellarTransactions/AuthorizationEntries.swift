import StellarKeys
import StellarText

/// Where each Soroban authorization entry of a v1 envelope sits in its bytes, so that signing one changes exactly
/// its expiration ledger and its signatures and leaves every other byte as it was given. (`package`: the fuzzer
/// checks the splice against it.)
package struct AuthorizationSlot: Sendable {
    /// 1-based across the envelope; a Soroban transaction has one operation, so this is the summary's number.
    package let number: Int
    /// The entry's bytes in the envelope.
    package let range: Range<Int>
    package let entry: AuthorizationEntry
    /// Its root invocation is exactly its operation's host function.
    package let isStrict: Bool
}

extension TransactionEnvelope {
    /// Every authorization entry in the envelope, in order. Only a v1 envelope can carry a Soroban operation
    /// the network accepts; a fee bump's entries are its inner transaction's, signed before it is wrapped.
    package func authorizationSlots() throws -> [AuthorizationSlot] {
        guard case .v1 = decoded else { throw AuthorizationError.notV1(kind.rawValue) }
        var reader = XDRReader(bytes)
        var slots: [AuthorizationSlot] = []
        do {
            _ = try reader.int32()  // ENVELOPE_TYPE_TX, checked when the envelope was read
            _ = try XDR.MuxedAccount(xdr: &reader)
            _ = try reader.uint32()
            _ = try reader.int64()
            _ = try XDR.Preconditions(xdr: &reader)
            _ = try XDR.Memo(xdr: &reader)
            let operations = try reader.uint32()
            for _ in 0..<operations {
                var walker = reader
                let operation = try XDR.Operation(xdr: &reader)
                guard case .invokeHostFunctionOp(let invoke) = operation.body else { continue }
                // The same operation again, field by field, noting where each entry is.
                _ = try walker.optional { r in try XDR.MuxedAccount(xdr: &r) }
                _ = try walker.int32()
                _ = try XDR.HostFunction(xdr: &walker)
                let count = Int(try walker.uint32())
                for index in 0..<count {
                    let start = walker.offset
                    _ = try XDR.SorobanAuthorizationEntry(xdr: &walker)
                    let entry = try AuthorizationEntry(xdr: Array(bytes[start..<walker.offset]))
                    slots.append(AuthorizationSlot(number: slots.count + 1, range: start..<walker.offset, entry: entry,
                                                   isStrict: ContractCallText.isStrict(invoke.auth[index], for: invoke.hostFunction)))
                }
                precondition(walker.offset == reader.offset, "the walk of an operation's entries lost its place")
            }
        } catch let error as XDRError {
            // The envelope was read in full when it was made; reading a part of it again cannot fail.
            preconditionFailure("an envelope that parsed failed to parse again: \(error)")
        }
        return slots
    }
}

/// What an authorization signature could be used for beyond what it was made for, each of which is accepted by
/// name or not at all.
public struct AuthorizationRisks: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// An entry whose root is not the transaction's own call: its signature could be used by any transaction
    /// whose tree contains it.
    package static let notStrict = AuthorizationRisks(rawValue: 1)
    /// A V1 payload (`ENVELOPE_TYPE_SOROBAN_AUTHORIZATION`), which binds no address (CAP-71-02): if another
    /// address accepts the same key (a smart account that lists it as a signer), the signature could be replayed
    /// as that address's credential for the same invocation and nonce.
    public static let notAddressBound = AuthorizationRisks(rawValue: 2)
}

/// Which authorization entries of an envelope a signer would sign, on which of their nodes, and which it leaves
/// alone and why (`TransactionEnvelope.authorizationPlan(for:expirationLedger:)`).
public struct AuthorizationPlan: Sendable {
    /// The numbers (1-based, across the envelope) of the entries to sign.
    package let toSign: [Int]
    /// Entries left byte for byte as they are, each with why.
    package let leftAlone: [LeftAlone]
    public let signer: AuthorizationSigner
    /// The entries to sign whose root is not the transaction's own call (their signatures could serve another
    /// transaction), in order.
    package var notStrict: [Int] { slots.filter { !$0.slot.isStrict }.map(\.slot.number) }
    /// The entries to sign whose payload is V1, bound to no address.
    public var notAddressBound: [Int] { slots.filter { !$0.slot.entry.isAddressBound }.map(\.slot.number) }
    /// The risks the entries to sign carry.
    public var risks: AuthorizationRisks {
        var risks: AuthorizationRisks = []
        if !notStrict.isEmpty { risks.insert(.notStrict) }
        if !notAddressBound.isEmpty { risks.insert(.notAddressBound) }
        return risks
    }
    let slots: [(slot: AuthorizationSlot, nodes: [AuthorizationNode])]

    package struct LeftAlone: Sendable, Equatable, Encodable {
        public let number: Int
        public let reason: String
    }

    /// The refusal for the risks not accepted in `allowing`, the first one first; nil when all are accepted.
    public func refusal(allowing: AuthorizationRisks) -> AuthorizationError? {
        if !allowing.contains(.notStrict), let first = notStrict.first { return .notStrict(entry: first) }
        if !allowing.contains(.notAddressBound), !notAddressBound.isEmpty { return .notAddressBound(entries: notAddressBound) }
        return nil
    }

    /// For a person, after the transaction's summary: who signs, which entries and nodes (a delegate "on behalf
    /// of" the entry's address; a smart account's rules and what each context is), valid through which ledger,
    /// and which are left alone. (The summary itself is made without a signer: its warning that the key has no
    /// part in the transaction is for an envelope signature, which this is not.)
    public func lines(expirationLedger: UInt32, signingAs identity: (name: String, key: PublicKey)) -> [String] {
        lines(expirationLedger: expirationLedger, signingAs: (identity.name, .ed25519(identity.key)))
    }

    /// The same for a signer with any key.
    public func lines(expirationLedger: UInt32, signingAs identity: (name: String, key: AuthorizationSigner.Key)) -> [String] {
        let role = switch signer.account {
        case .multisigAccount: ", as a signer of \(signer.address)"
        case .ownAccount, .contractAccount, .smartAccount:
            signer.rules == nil && signer.address == identity.key.description ? ", for its authorization entries" : ", for \(signer.address)"
        }
        var lines = ["  signer      \(SummaryText.quotedIfNeeded(identity.name)) (\(identity.key))" + role]
        if let rules = signer.rules {
            lines.append("  as          External(\(rules.verifier), this key), a signer of the smart account \(signer.address)")
        }
        for (slot, nodes) in slots {
            let entry = slot.entry
            for node in nodes {
                var line = "  signs       authorization \(slot.number)"
                if node.depth > 0 { line += " as delegate \(node.address), on behalf of " + entry.chain(to: node).joined(separator: " through ") }
                lines.append(line + ", valid through ledger \(expirationLedger)" + cosigners(of: node, in: entry))
            }
            if let rules = signer.rules {
                lines.append("    for rules " + rules.contextRuleIDs.map(String.init).joined(separator: ", ")
                             + ": the signature is valid only for these rules, one per context:")
                for (index, context) in entry.contextNames().enumerated() where index < rules.contextRuleIDs.count {
                    lines.append("      rule \(rules.contextRuleIDs[index]) for \(context)")
                }
            }
        }
        return lines + leftAlone.map { "  leaves      authorization \($0.number) as it is: \($0.reason)" }
    }

    /// The other signers of the account whose maps `node` holds already and keeps (the account convention):
    /// `, beside the signatures of G…, G…`; nothing when there are none.
    private func cosigners(of node: AuthorizationNode, in entry: AuthorizationEntry) -> String {
        guard signer.rules == nil, let key = signer.key,
              let held = try? AccountSignatures.read(Array(entry.bytes[node.signatureRange])) else { return "" }
        let others = held.filter { $0.key != key.rawRepresentation }.compactMap { try? PublicKey(rawRepresentation: $0.key).accountID }
        guard !others.isEmpty else { return "" }
        return ", beside the signature\(others.count == 1 ? "" : "s") of " + others.joined(separator: ", ")
    }

    /// The `!!` lines a person must not miss: the V1 entries, whose signatures bind no address.
    public var warnings: [String] {
        guard !notAddressBound.isEmpty else { return [] }
        let which = notAddressBound.count == 1 ? "authorization \(notAddressBound[0]) is" : "authorizations \(notAddressBound.map(String.init).joined(separator: ", ")) are"
        return ["\(which) V1: the signature binds no address, so any other address that accepts this key (a smart account that lists it) could replay it as its own credential (CAP-71-02)"]
    }
}

/// An envelope whose authorization entries for one signer were signed (`TransactionEnvelope.signingAuthorizations`).
public struct SignedAuthorizations: Sendable {
    /// The envelope's XDR: the one given, with each signed entry's expiration ledger and signatures replaced.
    public let envelope: [UInt8]
    package let plan: AuthorizationPlan

    public var base64: String { Base64.string(envelope) }
}

extension TransactionEnvelope {
    /// Which entries `signer` would sign, valid through `expirationLedger`, after every check that needs only
    /// public keys, so that all of them run before a PIN is asked. Refused: an envelope that carries envelope
    /// signatures (changing its entries changes the transaction hash and voids them), one with no entry for the
    /// signer, and an entry that breaks a rule of `AuthorizationEntry.nodes(for:expirationLedger:number:)`. The
    /// risks the entries carry are the plan's (`AuthorizationPlan.risks`); accepting them is the caller's part.
    package func authorizationPlan(for signer: AuthorizationSigner, expirationLedger: UInt32) throws -> AuthorizationPlan {
        guard signatures.isEmpty else { throw AuthorizationError.envelopeAlreadySigned(signatures.count) }
        var toSign: [(slot: AuthorizationSlot, nodes: [AuthorizationNode])] = [], leftAlone: [AuthorizationPlan.LeftAlone] = []
        let slots = try authorizationSlots()
        for slot in slots {
            guard let address = slot.entry.address else {
                leftAlone.append(.init(number: slot.number, reason: "the transaction's source account"))
                continue
            }
            let nodes = try slot.entry.nodes(for: signer, expirationLedger: expirationLedger, number: slot.number)
            guard !nodes.isEmpty else {
                let signed = slot.entry.names(signer)
                leftAlone.append(.init(number: slot.number, reason: signed ? "it holds this key's signature already" : "for \(address)"))
                continue
            }
            toSign.append((slot, nodes))
        }
        guard !toSign.isEmpty || slots.contains(where: { $0.entry.names(signer) }) else {
            throw AuthorizationError.noEntry(for: signer.address, asked: Set(slots.flatMap { $0.entry.nodes.map(\.address) }).sorted())
        }
        return AuthorizationPlan(toSign: toSign.map(\.slot.number), leftAlone: leftAlone, signer: signer, slots: toSign)
    }

    /// Signs each authorization entry of `keyPair`'s account (its own entries, and the delegate nodes that name
    /// it), valid through `expirationLedger`, with the risks in `allowing` accepted: the entry's expiration is set,
    /// and each node's signature becomes `Vec[Map{"public_key": Bytes(32), "signature": Bytes(64)}]`, the account
    /// convention of stellar-sdk and stellar-cli. Every other byte stays as given.
    package func signingAuthorizations(by keyPair: KeyPair, on network: StellarNetwork, expirationLedger: UInt32,
                                      allowing: AuthorizationRisks = []) throws -> SignedAuthorizations {
        let plan = try authorizationPlan(for: .account(keyPair.publicKey), expirationLedger: expirationLedger)
        if let refusal = plan.refusal(allowing: allowing) { throw refusal }
        return try signing(plan, on: network, expirationLedger: expirationLedger) { keyPair.signature(for: $0.digest) }
    }

    /// Signs the entries of `plan` (made for this envelope): `signature` is asked for each entry's Ed25519
    /// signature of its payload's digest (what SEP-43's `signAuthEntry` returns), after every check. It is spliced
    /// in as given: checking it is the caller's part, where the signer is not trusted. Accepting the plan's risks
    /// is the caller's part too.
    package func signing(_ plan: AuthorizationPlan, on network: StellarNetwork, expirationLedger: UInt32,
                        signature: (AuthorizationPayload) throws -> [UInt8]) throws -> SignedAuthorizations {
        var out = bytes
        // From the last entry back, so that each splice leaves the offsets before it valid.
        for (slot, _) in plan.slots.reversed() {
            let signed = try slot.entry.signed(for: plan.signer, on: network, expirationLedger: expirationLedger,
                                               number: slot.number, signature: signature)
            out.replaceSubrange(slot.range, with: signed.bytes)
        }
        return SignedAuthorizations(envelope: out, plan: plan)
    }

    /// `SCV_VEC [SCV_MAP {SCV_SYMBOL "public_key": SCV_BYTES key, SCV_SYMBOL "signature": SCV_BYTES signature}]`,
    /// the map's keys in the sorted order the host requires: an account's signature of an authorization entry, by
    /// one of its signers (`AccountSignatures` holds several).
    package static func accountSignature(key: PublicKey, signature: [UInt8]) -> [UInt8] {
        AccountSignatures.encoded([.init(key: key.rawRepresentation, signature: signature)])
    }
}
