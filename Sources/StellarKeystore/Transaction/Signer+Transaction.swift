/// A transaction envelope after `Signer.signTransaction`.
public struct SignedTransaction: Sendable {
    /// The envelope's XDR: the one given, with this signer's signature appended (or unchanged if it held one).
    public let envelope: [UInt8]
    /// The transaction hash that was signed.
    public let hash: [UInt8]
    /// The envelope already held a valid signature by this key, and is returned as it was: a second one would
    /// make the network reject the transaction.
    public let wasAlreadySigned: Bool

    public var base64: String { Base64.string(envelope) }
}

extension Signer {
    /// Signs `envelope` for `network`: an Ed25519 signature of the network's transaction hash, appended as a
    /// `DecoratedSignature` (hint: the key's last 4 bytes) to the envelope's own bytes, which are never
    /// re-encoded. An envelope this key has signed already is returned unchanged; a full one (20 signatures) is
    /// `TransactionError.full`.
    public func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        let hash = envelope.hash(on: network)
        if envelope.isSigned(by: publicKey, hash: hash) {
            return SignedTransaction(envelope: envelope.bytes, hash: hash, wasAlreadySigned: true)
        }
        let signed = try envelope.adding(signature: sign(hash), by: publicKey)
        return SignedTransaction(envelope: signed, hash: hash, wasAlreadySigned: false)
    }
}
