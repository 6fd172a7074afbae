import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

/// `web-auth --account C…`: SEP-45, a contract account signing in. The same conversation as SEP-10's: the
/// challenge fetched and checked, the review made (it checks the signer and the client domain's identity), the
/// summary shown, then the PIN, the signature, and only then the POST.
extension WebAuth {
    func signInAsContract(_ account: String) throws {
        let signedIn = try key.run(ContractSignIn(as: account, verifier: verifier, contextRuleIDs: contextRules,
                                                  from: ContractWebAuthService.challenges(at: target ?? "", clientDomain: clientDomain),
                                                  expirationLedger: expirationLedger, clientDomainIdentity: clientDomainName,
                                                  allowing: allowV1 ? .notAddressBound : []),
                                   quiet: quiet, secondIdentity: clientDomainName)
        let issued = signedIn.answer
        if key.identity.json {
            struct Output: Encodable {
                let token, account, signer, homeDomain, server: String
                let claims: [String: JSONTree]
                let claimsVerified: Bool
            }
            try Console.printJSON(Output(token: issued.token.jwt, account: account, signer: signedIn.signer, homeDomain: issued.homeDomain,
                                         server: issued.serverKey.accountID, claims: issued.token.claims, claimsVerified: false))
        } else {
            Console.print(issued.token.jwt)
        }
    }

    /// `--challenge --account`: checked here, signed, printed; nothing is fetched or sent.
    func signGivenAsContract(_ account: String) throws {
        let fromStandardInput = target == nil || target == "-"
        let pinFirst = key.pin.pinStdin && fromStandardInput ? try key.pin.readFirst() : nil
        let text = try Console.readInput(fromStandardInput ? nil : target, file: nil, prompt: "Authorization entries, base64",
                                         limit: ContractWebAuthChallenge.maximumTextSize)
        let signedIn = try key.run(ContractSignIn.given(String(decoding: text, as: UTF8.self), as: account, verifier: verifier,
                                                        contextRuleIDs: contextRules, serverKey: serverKey ?? "", webAuthContract: webAuthContract ?? "",
                                                        homeDomain: homeDomain ?? "", webAuthDomain: webAuthDomain ?? "",
                                                        network: networkOptions.choice, clientDomain: givenClientDomain,
                                                        expirationLedger: expirationLedger, clientDomainIdentity: clientDomainName,
                                                        allowing: allowV1 ? .notAddressBound : []),
                                   alreadyRead: pinFirst, quiet: quiet, secondIdentity: clientDomainName)
        let signed = Base64.string(signedIn.answer)
        if key.identity.json {
            struct Output: Encodable { let authorizationEntries, account, signerAddress: String }
            try Console.printJSON(Output(authorizationEntries: signed, account: account, signerAddress: signedIn.signer))
        } else {
            Console.print(signed)
        }
    }
}
