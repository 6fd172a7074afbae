import StellarKeys

/// A transaction envelope after it was signed (`TransactionEnvelope.signed(by:on:)`).
public struct SignedTransaction: Sendable {
    /// The envelope's XDR: the one given, with the signature appended (or unchanged if it held one).
    public let envelope: [UInt8]
    /// The transaction hash that was signed.
    public let hash: [UInt8]
    /// The envelope already held a valid signature by this key, and is returned as it was: a second one would
    /// make the network reject the transaction.
    public let wasAlreadySigned: Bool
    /// The key's signature of `hash`: the one appended, or the one the envelope held.
    public let signature: [UInt8]
    /// The signatures taken out after signing, when the envelope was trimmed (`trimmed(on:accounts:)`); nil when
    /// it was not.
    public var removed: [SignatureCheck.Signature]? = nil

    public var base64: String { Base64.string(envelope) }
}

extension TransactionEnvelope {
    /// This envelope signed by `keyPair` for `network`: an Ed25519 signature of the network's transaction hash,
    /// appended as a `DecoratedSignature` (hint: the key's last 4 bytes) to the envelope's own bytes, which are
    /// never re-encoded. An envelope this key has signed already is returned unchanged; a full one (20
    /// signatures) is `TransactionError.full`.
    public func signed(by keyPair: KeyPair, on network: StellarNetwork) throws -> SignedTransaction {
        try signed(by: keyPair.publicKey, on: network) { keyPair.signature(for: $0) }
    }

    /// The same, for a key held elsewhere (a signing agent): `signature` is asked for the Ed25519 signature of
    /// the hash, and only when the envelope does not hold one by `key` already. It is spliced in as given:
    /// checking it is the caller's part, where the signer is not trusted (`AgentSigner` checks the agent's).
    public func signed(by key: PublicKey, on network: StellarNetwork,
                       signature: ([UInt8]) throws -> [UInt8]) throws -> SignedTransaction {
        try signed(by: key, hash: hash(on: network), signature: signature)
    }

    /// The same, with the transaction hash on the network already computed (a review computes it once).
    package func signed(by key: PublicKey, hash: [UInt8], signature: ([UInt8]) throws -> [UInt8]) throws -> SignedTransaction {
        let hint = Array(key.rawRepresentation.suffix(4))
        if let held = signatures.first(where: { $0.hint == hint && key.isValidSignature($0.signature, for: hash) }) {
            return SignedTransaction(envelope: bytes, hash: hash, wasAlreadySigned: true, signature: held.signature)
        }
        let signature = try signature(hash)
        let signed = try adding(signature: signature, by: key)
        return SignedTransaction(envelope: signed, hash: hash, wasAlreadySigned: false, signature: signature)
    }
}
