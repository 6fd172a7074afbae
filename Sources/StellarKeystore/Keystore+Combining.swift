import StellarKeys
import StellarTransactions

extension Keystore {
    /// Copies of one transaction combined (`TransactionEnvelope.combining(_:on:knownSigners:)`), each signature
    /// checked whose hint is a known key's: one of `signers`, a signer of one of `accounts` (the master key when its
    /// weight is not 0), or an identity of this keystore (its public key, read from its vault without a PIN).
    /// The rest are kept unchecked.
    package func combining(_ copies: [(name: String, envelope: TransactionEnvelope)], on network: StellarNetwork,
                          signers: [PublicKey] = [], accounts: [AccountSigners] = []) throws -> CombinedTransaction {
        var known = signers.map(SignerKey.ed25519)
        known += accounts.flatMap { account in
            (account.masterWeight > 0 ? [SignerKey.ed25519(account.account)] : []) + account.signers.map(\.key)
        }
        known += try identities().compactMap { identity in identity.address.flatMap { try? PublicKey(accountID: $0) }.map(SignerKey.ed25519) }
        return try TransactionEnvelope.combining(copies, on: network, knownSigners: known)
    }
}

/// What `Keystore.combine(_:network:signers:accountFiles:trimming:)` made: the envelope, on its network; what
/// combining found of each signature; what it and the trim said; the signatures trimmed; and the thresholds
/// checked (with accounts' files only).
package struct CombinedCopies: Sendable {
    package let envelope: TransactionEnvelope
    package let network: StellarNetwork
    package let combination: CombinedTransaction
    package let notes: [String]
    package let removed: [SignatureCheck.Signature]?
    package let check: SignatureCheck?
}

extension Keystore {
    /// Copies of one transaction combined as a person gives them: each copy's text (base64 XDR) by its name (a
    /// file, a line), the network named, the signers (`G…`) whose signatures are checked, the accounts' files,
    /// and whether to trim. One call: the network resolved, the accounts read, every copy read (`copies`, called
    /// only then, so that a missing network is said before any name a person typed is quoted) and decoded, the
    /// copies combined (`combining(_:on:signers:accounts:)`), trimmed (or refused) when asked, and the envelope
    /// checked against the accounts' thresholds when there are any.
    package func combine(_ copies: () throws -> [(name: String, text: [UInt8])], network: NetworkChoice, signers: [String] = [],
                        accountFiles: [(source: String, bytes: [UInt8])] = [], trimming: Bool = false) throws -> CombinedCopies {
        let network = try network.network()
        let accounts = try AccountSigners.read(accountFiles)
        let copies = try copies().map { copy in
            do {
                return (copy.name, try TransactionEnvelope(base64: copy.text))
            } catch let error as TransactionError {
                throw CombineError.unreadableCopy(copy: copy.name, error)
            }
        }
        let combined = try combining(copies, on: network, signers: try signers.map { try PublicKey(accountID: $0) }, accounts: accounts)
        var envelope = try TransactionEnvelope(xdr: combined.envelope)
        let trimmed = trimming ? try envelope.trimmed(on: network, accounts: accounts) : nil
        if let trimmed { envelope = try TransactionEnvelope(xdr: trimmed.envelope) }
        return CombinedCopies(envelope: envelope, network: network, combination: combined, notes: combined.notes + (trimmed?.notes ?? []),
                              removed: trimmed?.removed, check: accountFiles.isEmpty ? nil : envelope.signatureCheck(on: network, accounts: accounts))
    }
}
