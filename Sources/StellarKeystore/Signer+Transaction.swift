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

extension Signer {
    /// Signs each authorization entry of `envelope` that asks for this identity's signature, valid through
    /// `expirationLedger` (`TransactionEnvelope.signingAuthorizations(by:on:expirationLedger:allowingNonStrict:)`).
    public func signAuthorizations(in envelope: TransactionEnvelope, on network: StellarNetwork, expirationLedger: UInt32,
                                   allowingNonStrict: Bool = false) throws -> SignedAuthorizations {
        try envelope.signingAuthorizations(by: keyPair, on: network, expirationLedger: expirationLedger,
                                           allowingNonStrict: allowingNonStrict)
    }
}
