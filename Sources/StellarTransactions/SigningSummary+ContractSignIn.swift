import StellarKeys

extension SigningSummary {
    /// A SEP-45 challenge that passed its checks (`ContractWebAuthChallenge`): the service, the contract account
    /// and the key signing on its behalf, how the account reads the signature (`signer`: the account convention,
    /// or a smart account's verifier and rules), the server, the contract whose `web_auth_verify` is authorized,
    /// the network, the nonce, the ledger through which the signature is valid and who chose it, and the client domain. A V1 entry
    /// to sign, which binds no address, is a warning.
    public static func contractSignIn(_ challenge: ContractWebAuthChallenge, as signer: AuthorizationSigner,
                                      signingAs identity: (name: String, key: PublicKey)) -> SigningSummary {
        let expectation = challenge.expectation
        let how = switch signer.account {
        case .ownAccount: "its own account"
        case .multisigAccount: "one of the account's signers (Vec[Map{public_key, signature}])"
        case .contractAccount: "a signer of the contract account, as an account signs (Vec[Map{public_key, signature}])"
        case .smartAccount(_, let rules):
            "the OpenZeppelin smart account's signer External(\(rules.verifier), this key), context rule"
                + (rules.contextRuleIDs.count == 1 ? " " : "s ") + rules.contextRuleIDs.map(String.init).joined(separator: ", ")
        }
        var lines = [
            "  signer      \(quotedIfNeeded(identity.name)) (\(identity.key.accountID)), on behalf of \(signer.address)",
            "  as          \(how)",
            "  server      \(expectation.serverKey.accountID) (\(quoted(expectation.webAuthDomain)))",
            "  contract    \(expectation.webAuthContract), \(ContractWebAuthChallenge.function) only",
            "  network     \(expectation.network.shown)",
            "  nonce       \(quoted(challenge.nonce))",
            "  expires     after ledger \(challenge.expirationLedger)" + expirationNote(challenge.expirationChoice),
        ]
        if let clientDomain = expectation.clientDomain {
            lines.append("  client      \(quoted(clientDomain.domain)) (\(clientDomain.key.accountID))"
                         + (challenge.clientDomainExpirationLedger.map { ", after ledger \($0)" } ?? ""))
        }
        return SigningSummary(kind: "contract-sign-in",
                              title: "Sign in to \(quoted(expectation.homeDomain)) as \(expectation.clientAccount)",
                              warnings: challenge.notAddressBound.isEmpty ? [] : [AuthorizationPreimage.notAddressBoundWarning],
                              lines: lines, elided: false, network: expectation.network)
    }

    /// Who chose the ledger: a person who never gave one learns it was chosen for them, and how.
    private static func expirationNote(_ choice: ContractWebAuthChallenge.ExpirationChoice) -> String {
        switch choice {
        case .challenge: ", as the server asked"
        case .serverSignature: ", with the server's own signature (the challenge left it to the client)"
        case .given: ", as given"
        }
    }
}
