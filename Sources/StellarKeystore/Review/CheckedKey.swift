import StellarKeys
import StellarTransactions

/// A key opened in this process, each of whose signatures is checked against its public key before it is
/// used: a fault while signing (a flipped bit in memory) must not leave as a signature. The transaction and
/// authorization forms go through the same checked raw signature.
struct CheckedKey: Signing {
    let signer: Signer

    init(_ signer: Signer) { self.signer = signer }

    var name: IdentityName { signer.name }
    var publicKey: PublicKey { signer.publicKey }

    func sign(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        let signature = signer.sign(bytes)
        guard publicKey.isValidSignature(signature, for: Array(bytes)) else { throw ReviewError.signatureInvalid(signer.address) }
        return signature
    }

    func signMessage(_ message: UnsafeRawBufferPointer) throws -> [UInt8] {
        let signature = signer.signMessage(message)
        guard publicKey.isValidMessageSignature(signature, for: Array(message)) else { throw ReviewError.signatureInvalid(signer.address) }
        return signature
    }

    func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        try envelope.signed(by: publicKey, on: network) { hash in try sign(hash) }
    }

    /// The same, with the hash a review computed already.
    func signTransaction(_ envelope: TransactionEnvelope, hash: [UInt8]) throws -> SignedTransaction {
        try envelope.signed(by: publicKey, hash: hash) { hash in try sign(hash) }
    }

    func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8] {
        try payload.preimage.check(on: network)
        return try sign(payload.digest)
    }
}
