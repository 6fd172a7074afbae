import StellarKeys
import StellarTransactions

extension Signer {
    /// Signs `envelope` for `network` with this identity's key (`TransactionEnvelope.signed(by:on:)`).
    package func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        try envelope.signed(by: keyPair, on: network)
    }
}

extension Signer {
    /// Signs a Soroban authorization payload for `network` (what SEP-43's `signAuthEntry` receives, with a smart
    /// account's rule ids when there are): the 64-byte Ed25519 signature of its digest, which stellar-sdk's
    /// `authorize_entry` puts in the entry. A preimage for another network is refused before the key is used.
    package func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8] {
        try payload.preimage.check(on: network)
        return sign(payload.digest)
    }
}

extension WebAuthChallenge {
    /// This verified SEP-10 challenge signed by the account signing in, and, when a client domain was asked
    /// for, by that domain's key: the envelope to POST back. Each signer must be the key the challenge expects
    /// (checked before either signs), so that a sign-in never carries a signature nobody asked for.
    package func signed(by signer: any Signing, clientDomainSigner: (any Signing)? = nil) throws -> [UInt8] {
        let client = try StrKey(expectation.clientAccount).ed25519PublicKey
        guard signer.publicKey == client else {
            throw WebAuthSigningError.notTheAccount(signer: signer.address, account: expectation.clientAccount)
        }
        var signers: [any Signing] = [signer]
        switch (expectation.clientDomain, clientDomainSigner) {
        case (nil, nil): break
        case (let domain?, let domainSigner?):
            guard domainSigner.publicKey == domain.key else {
                throw WebAuthSigningError.notTheClientDomainKey(signer: domainSigner.address, key: domain.key.accountID)
            }
            signers.append(domainSigner)
        case (nil, _?), (_?, nil): throw WebAuthSigningError.clientDomainSignerMismatch
        }
        return try signed(adding: signers.map { (key: $0.publicKey, signature: try $0.sign(hash)) })
    }
}

/// A sign-in challenge offered to the wrong key.
public enum WebAuthSigningError: KeystoreError, Equatable {
    case notTheAccount(signer: String, account: String)
    case notTheClientDomainKey(signer: String, key: String)
    /// A client-domain signer without a client domain to sign for, or the other way round.
    case clientDomainSignerMismatch

    public var message: String {
        switch self {
        case .notTheAccount(let signer, let account):
            "The challenge is for \(account), and this identity is \(signer); nothing was signed."
        case .notTheClientDomainKey(let signer, let key):
            "The client domain's signing key is \(key), and the identity given for it is \(signer); nothing was signed."
        case .clientDomainSignerMismatch:
            "A client-domain signature needs both a client domain and an identity for it; nothing was signed."
        }
    }
}
