import StellarTransactions

extension SigningRequest where Signed == SignedTransaction {
    /// The transaction of a SEP-7 request whose origin was checked (`TransactionRequest.checked(originKey:)`,
    /// or StellarWebAuth's `verifiedOrigin()`, which fetches the key), signed as `transaction(_:network:)` signs
    /// an envelope; the summary shows the request's lines. `network`: the one the caller gave, which the
    /// request's must be (else `TransactionRequestError.networkMismatch`, before any review); nil: the
    /// request's, which the review then asks a consent for (`SigningConsent.requestedNetwork`), so that a
    /// request never picks the network its signature counts on without a person agreeing. `accounts` and
    /// `trimming`: as for an envelope.
    public static func transaction(_ request: TransactionRequest.Checked, network given: StellarNetwork?,
                                   accounts: [AccountSigners]? = nil, trimming: Bool = false) throws -> Self {
        let (network, needsConsent) = try request.network(given: given)
        var signing = Self.transaction(request.request.envelope, network: network, accounts: accounts, trimming: trimming)
        signing.transactionRequest = (request, needsConsent)
        return signing
    }
}
