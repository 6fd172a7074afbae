import StellarKeys

/// A key an account accepts signatures from, of the four kinds the protocol has (`SignerKey`, Stellar-types.x),
/// and how stellar-core matches a `DecoratedSignature` to it (src/transactions/SignatureUtils.cpp, read at
/// stellar/stellar-core a9b8613218e141ddb89d621e5f04d4c75a149d36).
public enum SignerKey: Hashable, Sendable {
    /// `G…`: an Ed25519 signature of the transaction hash.
    case ed25519(PublicKey)
    /// `T…`: the hash of one transaction, which it authorizes with no signature at all (and only that one).
    case preAuthTransaction([UInt8])
    /// `X…`: SHA-256 of a secret; the "signature" is the secret itself (`opaque<64>`, so at most 64 bytes).
    case hashX([UInt8])
    /// `P…` (CAP-40): an Ed25519 signature of the payload, not of the transaction hash.
    case signedPayload(PublicKey, payload: [UInt8])

    /// Reads a signer's StrKey: `G…`, `T…`, `X…` or `P…`.
    public init(strKey text: String) throws {
        let key = try StrKey(text)
        switch key.kind {
        case .accountID: self = .ed25519(try PublicKey(rawRepresentation: key.payload))
        case .preAuthTx: self = .preAuthTransaction(key.payload)
        case .sha256Hash: self = .hashX(key.payload)
        case .signedPayload:
            guard let signer = key.ed25519PublicKey, let payload = key.signedPayloadData else {
                throw StrKeyError.invalidPayloadLength(.signedPayload, key.payload.count)
            }
            self = .signedPayload(signer, payload: payload)
        default: throw StrKeyError.wrongKind(expected: .accountID, found: key.kind)
        }
    }

    init(_ key: XDR.SignerKey) throws {
        switch key {
        case .ed25519(let raw): self = .ed25519(try PublicKey(rawRepresentation: raw.value))
        case .preAuthTx(let hash): self = .preAuthTransaction(hash.value)
        case .hashX(let hash): self = .hashX(hash.value)
        case .ed25519SignedPayload(let signed):
            self = .signedPayload(try PublicKey(rawRepresentation: signed.ed25519.value), payload: signed.payload)
        }
    }

    /// The key as a StrKey.
    package var strKey: String {
        switch self {
        case .ed25519(let key): key.accountID
        case .preAuthTransaction(let hash): SummaryText.strKey(.preAuthTx, hash)
        case .hashX(let hash): SummaryText.strKey(.sha256Hash, hash)
        case .signedPayload(let key, let payload):
            (try? StrKey.signedPayload(signer: key, payload: payload).stringValue) ?? "(signed payload of \(key.accountID))"
        }
    }

    /// The kind, in words: `ed25519`, `pre-auth tx`, `hash-x`, `signed payload`.
    package var kindName: String {
        switch self {
        case .ed25519: "ed25519"
        case .preAuthTransaction: "pre-auth tx"
        case .hashX: "hash-x"
        case .signedPayload: "signed payload"
        }
    }

    /// The hint a signature by this signer carries: the last 4 bytes of the key (of the hash, for hash-x); for a
    /// signed payload, those of the key XOR those of the payload, a payload shorter than 4 bytes taken from its
    /// start and padded with zeros (`getHint`, `getSignedPayloadHint`). A pre-auth signer takes no signature.
    public var hint: [UInt8]? {
        switch self {
        case .ed25519(let key): Self.hint(of: key.rawRepresentation)
        case .preAuthTransaction: nil
        case .hashX(let hash): Self.hint(of: hash)
        case .signedPayload(let key, let payload):
            zip(Self.hint(of: key.rawRepresentation), Self.hint(of: payload)).map { $0 ^ $1 }
        }
    }

    /// Whether this signer accepts the signature for a transaction whose hash is `hash`, as stellar-core decides:
    /// the hint must match first (`doesHintMatch`), then an Ed25519 signature must verify (of the hash, or of the
    /// payload for a signed-payload signer), or a hash-x preimage must hash to the key (`verifyHashX`). A pre-auth
    /// signer is matched by the hash alone (`preAuthorizes(_:)`), never by a signature.
    public func accepts(hint: [UInt8], signature: [UInt8], hash: [UInt8]) -> Bool {
        guard let own = self.hint, own == hint else { return false }
        switch self {
        case .ed25519(let key): return signature.count == 64 && key.isValidSignature(signature, for: hash)
        case .preAuthTransaction: return false
        case .hashX(let expected): return signature.withUnsafeBytes { Sodium.sha256($0) } == expected
        case .signedPayload(let key, let payload): return signature.count == 64 && key.isValidSignature(signature, for: payload)
        }
    }

    /// Whether this is a pre-auth signer for the transaction whose hash is `hash`.
    package func preAuthorizes(_ hash: [UInt8]) -> Bool {
        if case .preAuthTransaction(let expected) = self { return expected == hash }
        return false
    }

    /// `getHint`: the last 4 bytes, or fewer bytes from the start padded with zeros.
    static func hint(of bytes: [UInt8]) -> [UInt8] {
        bytes.count >= 4 ? Array(bytes.suffix(4)) : bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
    }
}
