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
        try printToken(signedIn, account: account)
    }

    /// `--challenge --account`: checked here, signed, printed; nothing is fetched or sent.
    func signGivenAsContract(_ account: String) throws {
        let (text, pinFirst) = try readGiven(prompt: "Authorization entries, base64", limit: ContractWebAuthChallenge.maximumTextSize)
        let signedIn = try key.run(ContractSignIn.given(text, as: account, verifier: verifier,
                                                        contextRuleIDs: contextRules, serverKey: serverKey ?? "", webAuthContract: webAuthContract ?? "",
                                                        homeDomain: homeDomain ?? "", webAuthDomain: webAuthDomain ?? "",
                                                        network: networkOptions.choice, clientDomain: givenClientDomain,
                                                        expirationLedger: expirationLedger, clientDomainIdentity: clientDomainName,
                                                        allowing: allowV1 ? .notAddressBound : []),
                                   alreadyRead: pinFirst, quiet: quiet, secondIdentity: clientDomainName)
        let signed = Base64.string(signedIn.answer)
        struct Output: Encodable { let authorizationEntries, account, signerAddress: String }
        try Console.printAnswer(json: key.json, Output(authorizationEntries: signed, account: account, signerAddress: signedIn.signer),
                                else: signed)
    }
}
