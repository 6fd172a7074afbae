import StellarKeys
import StellarTransactions

extension Signer {
    /// Signs `envelope` for `network` with this identity's key (`TransactionEnvelope.signed(by:on:)`).
    public func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        try envelope.signed(by: keyPair, on: network)
    }
}
