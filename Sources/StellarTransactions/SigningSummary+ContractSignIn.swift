import StellarKeys

extension SigningSummary {
    /// A SEP-45 challenge that passed its checks (`ContractWebAuthChallenge`): the service, the contract account
    /// and the key signing on its behalf, how that account reads the signature (`how`: the account convention, or
    /// a smart account's verifier and rules), the server, the contract whose `web_auth_verify` is authorized, the
    /// network, the nonce, the ledger through which the signature is valid, and the client domain.
    public static func contractSignIn(_ challenge: ContractWebAuthChallenge, signingAs signer: (name: String, key: PublicKey),
                                      how: String) -> SigningSummary {
        let expectation = challenge.expectation
        var lines = [
            "  signer      \(quotedIfNeeded(signer.name)) (\(signer.key.accountID)), on behalf of \(expectation.clientAccount)",
            "  as          \(how)",
            "  server      \(expectation.serverKey.accountID) (\(quoted(expectation.webAuthDomain)))",
            "  contract    \(expectation.webAuthContract), \(ContractWebAuthChallenge.function) only",
            "  network     \(expectation.network.shown)",
            "  nonce       \(quoted(challenge.nonce))",
            "  expires     after ledger \(challenge.expirationLedger)"
                + (challenge.isAddressBound ? "" : "; the signature does not bind the address (a V1 entry)"),
        ]
        if let clientDomain = expectation.clientDomain {
            lines.append("  client      \(quoted(clientDomain.domain)) (\(clientDomain.key.accountID))"
                         + (challenge.clientDomainExpirationLedger.map { ", after ledger \($0)" } ?? ""))
        }
        return SigningSummary(kind: "contract-sign-in",
                              title: "Sign in to \(quoted(expectation.homeDomain)) as \(expectation.clientAccount)",
                              warnings: [], lines: lines, elided: false, network: expectation.network)
    }
}
