import StellarKeys
import StellarTransactions

extension TransactionRequest {
    /// A request made to hand a transaction to a co-signer, and what identifies it.
    public struct Shared: Sendable {
        public let request: TransactionRequest
        /// The transaction's hash on `network`: what every signature of it signs.
        public let hash: [UInt8]
        public let network: StellarNetwork
    }

    /// A request that hands `envelope` to a co-signer's wallet (unsigned, with no origin domain: a person passing a
    /// transaction on has no domain to prove), made in one call from what was given, each part checked in this
    /// order before the next is read: the network; the key the co-signer is asked to sign with (`pubkey`, G…); the
    /// callback, an address a signed envelope may be POSTed to (https, or http on this machine: `WebAddress`); then
    /// the envelope's text, decoded strictly.
    public static func sharing(_ envelope: () throws -> [UInt8], network: () throws -> StellarNetwork, message: String? = nil,
                               callback: String? = nil, pubkey: String? = nil) throws -> Shared {
        let network = try network()
        let pubkey = try pubkey.map { try PublicKey(accountID: $0) }
        if let callback { _ = try WebAddress(callback) }
        let envelope = try TransactionEnvelope(base64: try envelope())
        let request = try TransactionRequest(envelope: envelope, network: network, message: message, callback: callback, pubkey: pubkey)
        return Shared(request: request, hash: envelope.hash(on: network), network: network)
    }
}
