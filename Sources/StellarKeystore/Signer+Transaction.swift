import StellarKeys
import StellarTransactions

extension Signer {
    /// Signs `envelope` for `network` with this identity's key (`TransactionEnvelope.signed(by:on:)`).
    public func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        try envelope.signed(by: keyPair, on: network)
    }
}

extension Signer {
    /// Signs a Soroban authorization preimage for `network` (what SEP-43's `signAuthEntry` receives): the
    /// 64-byte Ed25519 signature of its SHA-256, which stellar-sdk's `authorize_entry` puts in the entry. A
    /// preimage for another network is refused before the key is used.
    public func signAuthorization(preimage: AuthorizationPreimage, on network: StellarNetwork) throws -> [UInt8] {
        try preimage.check(on: network)
        return sign(preimage.hash)
    }
}
