import StellarKeys
import StellarTransactions

extension SigningRequest {
    /// For a request that trims: throws unless the envelope's extra signatures can be taken out once `key` has
    /// signed. Checked in the review, before any PIN: the signature about to be made must not be one that trimming
    /// would take out again, and which signatures are extra needs every account the transaction needs.
    func checkTrimmable(_ envelope: TransactionEnvelope, on network: StellarNetwork, adding key: PublicKey) throws {
        guard trimming else { return }
        try envelope.signatureCheck(on: network, accounts: accounts ?? [], adding: key).checkTrimmable()
    }
}

extension Approval where Signed == SignedTransaction {
    /// What a person should know about the signed envelope besides the envelope itself: that it held this key's
    /// signature already and is given back unchanged, and each signature trimming took out, and why.
    public var notes: [String] {
        var notes: [String] = []
        if signed.wasAlreadySigned {
            notes.append("the envelope already holds a valid signature by \(signer.address); printed unchanged (a second one would make the network reject it)")
        }
        if let removed = signed.removed {
            notes += TrimmedTransaction.notes(removed)
        }
        return notes
    }
}
