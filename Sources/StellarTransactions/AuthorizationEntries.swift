import StellarKeys
import StellarText

/// Where each Soroban authorization entry of a v1 envelope sits in its bytes, so that signing one changes exactly
/// its expiration ledger and its signature and leaves every other byte as it was given. (`package`: the fuzzer
/// checks the splice against it.)
package struct AuthorizationSlot: Sendable {
    package enum Credentials: Sendable { case sourceAccount, address, addressV2, addressWithDelegates }
    /// 1-based across the envelope; a Soroban transaction has one operation, so this is the summary's number.
    package let number: Int
    package let credentials: Credentials
    /// The credentials' address, as `G…`/`C…`/`M…` (nil for the source account's).
    package let address: String?
    package let addressRange: Range<Int>
    package let nonce: Int64
    package let expirationOffset: Int
    package let signatureRange: Range<Int>
    package let invocationRange: Range<Int>
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
                // The same operation again, field by field, noting where each entry's parts are.
                _ = try walker.optional { r in try XDR.MuxedAccount(xdr: &r) }
                _ = try walker.int32()
                _ = try XDR.HostFunction(xdr: &walker)
                let count = Int(try walker.uint32())
                for index in 0..<count {
                    let entry = invoke.auth[index]
                    let type = try walker.int32()
                    var address: String?, addressRange = walker.offset..<walker.offset, nonce: Int64 = 0
                    var expirationOffset = walker.offset, signatureRange = walker.offset..<walker.offset
                    let credentials: AuthorizationSlot.Credentials
                    switch entry.credentials {
                    case .sourceAccount:
                        credentials = .sourceAccount
                    case .address, .addressV2, .addressWithDelegates:
                        credentials = type == 1 ? .address : type == 2 ? .addressV2 : .addressWithDelegates
                        let start = walker.offset
                        let scAddress = try XDR.SCAddress(xdr: &walker)
                        address = SummaryText.address(scAddress)
                        addressRange = start..<walker.offset
                        nonce = try walker.int64()
                        expirationOffset = walker.offset
                        _ = try walker.uint32()
                        let signatureStart = walker.offset
                        _ = try XDR.SCVal(xdr: &walker)
                        signatureRange = signatureStart..<walker.offset
                        if credentials == .addressWithDelegates {
                            _ = try walker.variableArray(max: nil) { r in try XDR.SorobanDelegateSignature(xdr: &r) }
                        }
                    }
                    let invocationStart = walker.offset
                    _ = try XDR.SorobanAuthorizedInvocation(xdr: &walker)
                    slots.append(AuthorizationSlot(
                        number: slots.count + 1, credentials: credentials, address: address, addressRange: addressRange,
                        nonce: nonce, expirationOffset: expirationOffset, signatureRange: signatureRange,
                        invocationRange: invocationStart..<walker.offset,
                        isStrict: ContractCallText.isStrict(entry, for: invoke.hostFunction)))
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

/// Which authorization entries of an envelope one key would sign, and which it leaves alone and why
/// (`TransactionEnvelope.authorizationPlan(for:allowingNonStrict:)`).
public struct AuthorizationPlan: Sendable {
    /// The numbers (1-based, across the envelope) of the entries to sign.
    public let toSign: [Int]
    /// Entries left byte for byte as they are, each with why.
    public let leftAlone: [LeftAlone]
    /// The entries to sign whose root is not the transaction's own call (their signatures could serve another
    /// transaction), in order.
    public var notStrict: [Int] { slots.filter { !$0.isStrict }.map(\.number) }
    let slots: [AuthorizationSlot]

    public struct LeftAlone: Sendable, Equatable, Encodable {
        public let number: Int
        public let reason: String
    }

    /// For a person, after the transaction's summary: who signs, what, valid through which ledger. (The
    /// summary itself is made without a signer: its warning that the key has no part in the transaction is for
    /// an envelope signature, which this is not.)
    public func lines(expirationLedger: UInt32, signingAs identity: (name: String, key: PublicKey)) -> [String] {
        ["  signer      \(SummaryText.quotedIfNeeded(identity.name)) (\(identity.key.accountID)), for its authorization entries"]
            + toSign.map { "  signs       authorization \($0), valid through ledger \(expirationLedger)" }
            + leftAlone.map { "  leaves      authorization \($0.number) as it is: \($0.reason)" }
    }
}

/// An envelope whose authorization entries for one key were signed (`TransactionEnvelope.signingAuthorizations`).
public struct SignedAuthorizations: Sendable {
    /// The envelope's XDR: the one given, with each signed entry's expiration ledger and signature replaced.
    public let envelope: [UInt8]
    public let plan: AuthorizationPlan

    public var base64: String { Base64.string(envelope) }
}

extension TransactionEnvelope {
    /// Which entries `key` would sign. Refused: an envelope that carries envelope signatures (changing its
    /// entries changes the transaction hash and voids them), one with no entry for `key`, and, unless
    /// `allowingNonStrict`, an entry for `key` whose root is not its operation's own call (its signature could
    /// be used by any transaction whose tree contains it). Entries with delegates are left alone. Needs only the
    /// public key, so that every check runs before a PIN is asked.
    public func authorizationPlan(for key: PublicKey, allowingNonStrict: Bool = false) throws -> AuthorizationPlan {
        guard signatures.isEmpty else { throw AuthorizationError.envelopeAlreadySigned(signatures.count) }
        let slots = try authorizationSlots()
        let ours = [0, 0, 0, 0, 0, 0, 0, 0] + key.rawRepresentation  // SC_ADDRESS_TYPE_ACCOUNT, PUBLIC_KEY_TYPE_ED25519
        var toSign: [AuthorizationSlot] = [], leftAlone: [AuthorizationPlan.LeftAlone] = []
        for slot in slots {
            guard let address = slot.address else {
                leftAlone.append(.init(number: slot.number, reason: "the transaction's source account"))
                continue
            }
            guard Array(bytes[slot.addressRange]) == ours else {
                leftAlone.append(.init(number: slot.number, reason: "for \(address)"))
                continue
            }
            if slot.credentials == .addressWithDelegates {
                leftAlone.append(.init(number: slot.number, reason: "for \(address) with delegates, which are not signed here"))
                continue
            }
            toSign.append(slot)
        }
        guard !toSign.isEmpty else {
            throw AuthorizationError.noEntry(for: key.accountID, asked: Set(slots.compactMap(\.address)).sorted())
        }
        if !allowingNonStrict, let loose = toSign.first(where: { !$0.isStrict }) {
            throw AuthorizationError.notStrict(entry: loose.number)
        }
        return AuthorizationPlan(toSign: toSign.map(\.number), leftAlone: leftAlone, slots: toSign)
    }

    /// Signs each authorization entry whose credentials are `keyPair`'s account (`SOROBAN_CREDENTIALS_ADDRESS`,
    /// or `…_ADDRESS_V2` of CAP-71, which binds the address too), valid through `expirationLedger`, after the
    /// checks of `authorizationPlan(for:allowingNonStrict:)`: the entry's expiration is set, and its signature
    /// becomes `Vec[Map{"public_key": Bytes(32), "signature": Bytes(64)}]`, the account convention of stellar-sdk
    /// and stellar-cli, over SHA-256 of its `HashIDPreimage`. Every other byte stays as given.
    public func signingAuthorizations(by keyPair: KeyPair, on network: StellarNetwork, expirationLedger: UInt32,
                                      allowingNonStrict: Bool = false) throws -> SignedAuthorizations {
        try signingAuthorizations(by: keyPair.publicKey, on: network, expirationLedger: expirationLedger,
                                  allowingNonStrict: allowingNonStrict) { keyPair.signature(for: $0.hash) }
    }

    /// The same, for a key held elsewhere (a signing agent): `signature` is asked for each entry's Ed25519
    /// signature of its preimage's SHA-256 (what SEP-43's `signAuthEntry` returns), after every check. It is
    /// spliced in as given: checking it is the caller's part, where the signer is not trusted.
    public func signingAuthorizations(by key: PublicKey, on network: StellarNetwork, expirationLedger: UInt32,
                                      allowingNonStrict: Bool = false,
                                      signature: (AuthorizationPreimage) throws -> [UInt8]) throws -> SignedAuthorizations {
        let plan = try authorizationPlan(for: key, allowingNonStrict: allowingNonStrict)
        let expiration = Self.bigEndian(expirationLedger)
        var out = bytes
        // From the last entry back, so that each splice leaves the offsets before it valid.
        for slot in plan.slots.reversed() {
            let tag: [UInt8] = slot.credentials == .addressV2 ? [0, 0, 0, 10] : [0, 0, 0, 9]
            var preimage = tag + network.id + Array(bytes[slot.expirationOffset - 8..<slot.expirationOffset]) + expiration
            if slot.credentials == .addressV2 { preimage += bytes[slot.addressRange] }
            preimage += bytes[slot.invocationRange]
            let signature = try signature(try AuthorizationPreimage(xdr: preimage))
            out.replaceSubrange(slot.signatureRange, with: Self.accountSignature(key: key, signature: signature))
            out.replaceSubrange(slot.expirationOffset..<slot.expirationOffset + 4, with: expiration)
        }
        return SignedAuthorizations(envelope: out, plan: plan)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// `SCV_VEC [SCV_MAP {SCV_SYMBOL "public_key": SCV_BYTES key, SCV_SYMBOL "signature": SCV_BYTES signature}]`,
    /// the map's keys in the sorted order the host requires: an account's signature of an authorization entry.
    public static func accountSignature(key: PublicKey, signature: [UInt8]) -> [UInt8] {
        func symbol(_ text: String) -> [UInt8] {
            let utf8 = Array(text.utf8)
            return [0, 0, 0, 15] + bigEndian(UInt32(utf8.count)) + utf8 + [UInt8](repeating: 0, count: (4 - utf8.count % 4) % 4)
        }
        func bytes(_ value: [UInt8]) -> [UInt8] { [0, 0, 0, 13] + bigEndian(UInt32(value.count)) + value }
        return [0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 1]  // SCV_VEC, present, one element
            + [0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 2]  // SCV_MAP, present, two entries
            + symbol("public_key") + bytes(key.rawRepresentation) + symbol("signature") + bytes(signature)
    }
}
