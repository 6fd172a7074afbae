import StellarKeys
import StellarTransactions

extension Keystore {
    /// Copies of one transaction combined (`TransactionEnvelope.combining(_:on:knownSigners:)`), each signature
    /// checked whose hint is a known key's: one of `signers`, a signer of one of `accounts` (the master key when its
    /// weight is not 0), or an identity of this keystore (its public key, read from its vault without a PIN).
    /// The rest are kept unchecked.
    public func combining(_ copies: [(name: String, envelope: TransactionEnvelope)], on network: StellarNetwork,
                          signers: [PublicKey] = [], accounts: [AccountSigners] = []) throws -> CombinedTransaction {
        var known = signers.map(SignerKey.ed25519)
        known += accounts.flatMap { account in
            (account.masterWeight > 0 ? [SignerKey.ed25519(account.account)] : []) + account.signers.map(\.key)
        }
        known += try identities().compactMap { identity in identity.address.flatMap { try? PublicKey(accountID: $0) }.map(SignerKey.ed25519) }
        return try TransactionEnvelope.combining(copies, on: network, knownSigners: known)
    }
}
