import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

/// `web-auth --account C…`: SEP-45, a contract account signing in. The same conversation as SEP-10's: the
/// challenge fetched and checked, the review made (it checks the signer and the client domain's identity), the
/// summary shown, then the PIN, the signature, and only then the POST.
extension WebAuth {
    /// The contract account signed in as, from its parts: a smart account with `--verifier`, else one reading the
    /// account convention.
    func contractAccount(_ account: String) throws -> AuthorizationAccount {
        try AuthorizationAccount(contract: account, verifier: verifier, contextRuleIDs: contextRules)
    }

    func signInAsContract(_ account: String) throws {
        let service = try ContractWebAuthService.discover(target ?? "")
        let clientDomain = try self.clientDomain.map { try WebAuthService.clientDomain($0) }
        let signingKey = try self.signingKey()
        let token = try runner.signIn(as: try contractAccount(account), with: signingKey, from: service.challenges(clientDomain: clientDomain),
                                      expirationLedger: expirationLedger, clientDomainIdentity: try clientDomainIdentity(),
                                      allowing: allowV1 ? .notAddressBound : [])
        if key.identity.json {
            struct Output: Encodable {
                let token, account, signer, homeDomain, server: String
                let claims: [String: JSONTree]
                let claimsVerified: Bool
            }
            try Console.printJSON(Output(token: token.jwt, account: account, signer: signingKey.address, homeDomain: service.homeDomain,
                                         server: service.serverKey.accountID, claims: token.claims, claimsVerified: false))
        } else {
            Console.print(token.jwt)
        }
    }

    /// `--challenge --account`: checked here, signed, printed; nothing is fetched or sent.
    func signGivenAsContract(_ account: String) throws {
        let network = try networkOptions.resolve()
        let fromStandardInput = target == nil || target == "-"
        let pinFirst = key.pin.pinStdin && fromStandardInput ? try key.pin.readFirst() : nil
        let text = try Console.readInput(fromStandardInput ? nil : target, file: nil, prompt: "Authorization entries, base64",
                                         limit: ContractWebAuthChallenge.maximumTextSize)
        let serverKey = try PublicKey(accountID: serverKey ?? "")
        let clientDomain = try clientDomain.map { WebAuthExpectation.ClientDomain(domain: $0, key: try PublicKey(accountID: clientDomainKey ?? "")) }
        let signingKey = try self.signingKey()
        let expectation = ContractWebAuthExpectation(serverKey: serverKey, webAuthContract: webAuthContract ?? "", homeDomain: homeDomain ?? "",
                                                     webAuthDomain: webAuthDomain ?? "", network: network, clientAccount: account,
                                                     clientDomain: clientDomain)
        let signed = Base64.string(try terminal(alreadyRead: pinFirst).signIn(
            as: try contractAccount(account), with: signingKey, from: GivenContractWebAuthChallenge(String(decoding: text, as: UTF8.self), expecting: expectation),
            expirationLedger: expirationLedger, clientDomainIdentity: try clientDomainIdentity(), allowing: allowV1 ? .notAddressBound : []))
        if key.identity.json {
            struct Output: Encodable { let authorizationEntries, account, signerAddress: String }
            try Console.printJSON(Output(authorizationEntries: signed, account: account, signerAddress: signingKey.address))
        } else {
            Console.print(signed)
        }
    }
}
