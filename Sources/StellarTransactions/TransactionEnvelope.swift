import StellarKeys
/// A Stellar transaction envelope exactly as it was given: checked strictly against the XDR definitions, hashed
/// over its own bytes, and signed by appending one signature to those bytes. Nothing is ever decoded and encoded
/// again, so a signer can never sign (or return) a transaction other than the one it was asked to.
public struct TransactionEnvelope: Sendable {
    public enum Kind: String, Sendable {
        /// `ENVELOPE_TYPE_TX_V0`: the pre-protocol-13 form, hashed as the equivalent v1 transaction.
        case v0 = "v0"
        /// `ENVELOPE_TYPE_TX`.
        case v1 = "v1"
        /// `ENVELOPE_TYPE_TX_FEE_BUMP`: signing it signs the outer fee-bump transaction.
        case feeBump = "fee-bump"
    }

    /// The XDR limit on signatures in an envelope (`DecoratedSignature signatures<20>`).
    package static let maximumSignatures = 20
    /// The largest envelope accepted, in base64 as given.
    package static let maximumTextSize = 1 << 20

    public let bytes: [UInt8]
    public let kind: Kind
    /// The signatures already in the envelope.
    public let signatures: [(hint: [UInt8], signature: [UInt8])]
    let decoded: Decoded
    /// The bytes of the transaction that is signed, inside `bytes`.
    let signedRange: Range<Int>
    /// Where the signature count starts: the signatures are the last field of every envelope arm.
    let signaturesOffset: Int

    enum Decoded: Sendable {
        case v0(XDR.TransactionV0)
        case v1(XDR.Transaction)
        case feeBump(XDR.FeeBumpTransaction)
    }

    /// Reads an envelope in base64, as stellar-cli prints a transaction it built without sending it: white space (a final newline
    /// included) is ignored; anything else that is not canonical base64 is refused.
    public init(base64 text: [UInt8]) throws {
        guard text.count <= Self.maximumTextSize else { throw TransactionError.tooLarge(text.count) }
        let compact = Base64.removingWhiteSpace(text)
        guard !compact.isEmpty else { throw TransactionError.empty }
        // Hex XDR is a common slip (some tools print it). Every hex digit is a base64 symbol too, so hex can
        // decode as base64 into nonsense: when the text, read as hex, is an envelope, that is what is said, not
        // the XDR error at some offset of that nonsense.
        func isHexEnvelope() -> Bool {
            guard let hex = Hex.bytes(String(decoding: compact, as: UTF8.self)) else { return false }
            return (try? TransactionEnvelope(xdr: hex)) != nil
        }
        guard let bytes = Base64.decode(compact) else { throw isHexEnvelope() ? TransactionError.hexNotBase64 : TransactionError.notBase64 }
        do {
            try self.init(xdr: bytes)
        } catch TransactionError.invalidXDR(_) where isHexEnvelope() {
            throw TransactionError.hexNotBase64
        }
    }

    public init(base64 text: String) throws {
        try self.init(base64: Array(text.utf8))
    }

    /// Reads an envelope's XDR bytes.
    public init(xdr bytes: [UInt8]) throws {
        var reader = XDRReader(bytes)
        do {
            let type = try XDR.EnvelopeType(xdr: &reader)
            let start = reader.offset
            switch type {
            case .txV0:
                decoded = .v0(try XDR.TransactionV0(xdr: &reader))
                kind = .v0
            case .tx:
                decoded = .v1(try XDR.Transaction(xdr: &reader))
                kind = .v1
            case .txFeeBump:
                decoded = .feeBump(try XDR.FeeBumpTransaction(xdr: &reader))
                kind = .feeBump
            default:
                throw XDRError(offset: 0, expected: "a transaction envelope (type 0, 2 or 5), not \(type.xdrName)")
            }
            signedRange = start..<reader.offset
            signaturesOffset = reader.offset
            signatures = try reader.variableArray(max: Self.maximumSignatures) { r in
                let signature = try XDR.DecoratedSignature(xdr: &r)
                return (signature.hint.value, signature.signature.value)
            }
            try reader.finish()
        } catch let error as XDRError {
            throw TransactionError.invalidXDR(error)
        }
        self.bytes = bytes
    }

    /// The transaction hash on `network`: what is signed (the network's signature payload, hashed).
    ///
    /// `SHA-256(SHA-256(passphrase) ‖ ENVELOPE_TYPE_TX ‖ Transaction)` for v1; a v0 transaction is hashed as the
    /// v1 one it stands for, whose source is the `KEY_TYPE_ED25519` muxed account: the same bytes after a 4-byte
    /// zero key type (its optional time bounds are byte for byte `PRECOND_NONE` or `PRECOND_TIME`); a fee bump
    /// as `SHA-256(SHA-256(passphrase) ‖ ENVELOPE_TYPE_TX_FEE_BUMP ‖ FeeBumpTransaction)`.
    public func hash(on network: StellarNetwork) -> [UInt8] {
        let networkID = network.id
        let tag: [UInt8] = kind == .feeBump ? [0, 0, 0, 5] : [0, 0, 0, 2]
        let v0Prefix: [UInt8] = kind == .v0 ? [0, 0, 0, 0] : []
        return networkID.withUnsafeBytes { id in
            tag.withUnsafeBytes { tag in
                v0Prefix.withUnsafeBytes { prefix in
                    bytes.withUnsafeBytes { all in
                        Sodium.sha256(parts: [id, tag, prefix, UnsafeRawBufferPointer(rebasing: all[signedRange])])
                    }
                }
            }
        }
    }

    /// Whether the envelope already holds a valid signature of `hash` by `key`.
    package func isSigned(by key: PublicKey, hash: [UInt8]) -> Bool {
        let hint = Array(key.rawRepresentation.suffix(4))
        return signatures.contains { $0.hint == hint && key.isValidSignature($0.signature, for: hash) }
    }

    /// The envelope with one more `DecoratedSignature` (the key's last 4 bytes, then the 64-byte signature)
    /// spliced in: the count goes up by one and the signature is appended at the end; every other byte stays.
    func adding(signature: [UInt8], by key: PublicKey) throws -> [UInt8] {
        try adding([(key, signature)])
    }

    /// The envelope with these `DecoratedSignature`s appended in order, the count raised to match.
    func adding(_ added: [(key: PublicKey, signature: [UInt8])]) throws -> [UInt8] {
        precondition(added.allSatisfy { $0.signature.count == 64 })
        guard signatures.count + added.count <= Self.maximumSignatures else { throw TransactionError.full }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 72 * added.count)
        out += bytes[0..<signaturesOffset]
        let count = UInt32(signatures.count + added.count)
        out += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        out += bytes[(signaturesOffset + 4)...]
        for (key, signature) in added { out += Self.decoratedSignature(key: key, signature: signature) }
        return out
    }

    /// A `DecoratedSignature`'s XDR: the key's last 4 bytes as its hint, then the 64-byte signature.
    package static func decoratedSignature(key: PublicKey, signature: [UInt8]) -> [UInt8] {
        Array(key.rawRepresentation.suffix(4)) + [0, 0, 0, 64] + signature
    }
}
