import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

/// `web-auth --account C…`: SEP-45, a contract account signing in. The same conversation as SEP-10's: the
/// challenge fetched and checked, the review made (it checks the signer and the client domain's identity), the
/// summary shown, then the PIN, the signature, and only then the POST.
extension WebAuth {
    /// How the identity's key signs for the contract `account`: the library's account, from its parts.
    func signer(for account: String, key: PublicKey) throws -> AuthorizationSigner {
        try AuthorizationSigner(key: key, for: try AuthorizationAccount(contract: account, verifier: verifier, contextRuleIDs: contextRules))
    }

    /// The challenge, valid through `--expiration-ledger` when given (the library checks it and says who chose).
    func chosen(_ challenge: ContractWebAuthChallenge) throws -> ContractWebAuthChallenge {
        guard let expirationLedger else { return challenge }
        return try challenge.expiring(afterLedger: expirationLedger)
    }

    func signInAsContract(_ account: String) throws {
        let service = try ContractWebAuthService.discover(target ?? "")
        let clientDomain = try self.clientDomain.map { try WebAuthService.clientDomain($0) }
        let keystore = try key.identity.keystore.keystore()
        let signingKey = try keystore.signInKey(as: try key.identity.identityIfGiven(), keys: key.sources)
        // A P-256 key signs no sign-in: refused before anything is sent.
        let publicKey = try signingKey.ed25519Key()
        let challenge = try chosen(try service.challenge(for: account, clientDomain: clientDomain))
        let signer = try signer(for: account, key: publicKey)
        let signed = try run(.contractSignIn(challenge, as: signer, clientDomainIdentity: try clientDomainName.map { try IdentityName($0) },
                                             allowing: allowV1 ? .notAddressBound : []), with: signingKey).signed
        let token = try service.token(for: signed)
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
        let keystore = try key.identity.keystore.keystore()
        let signingKey = try keystore.signInKey(as: try key.identity.identityIfGiven(), keys: key.sources)
        let signer = try signer(for: account, key: try signingKey.ed25519Key())
        let expectation = ContractWebAuthExpectation(serverKey: serverKey, webAuthContract: webAuthContract ?? "", homeDomain: homeDomain ?? "",
                                                     webAuthDomain: webAuthDomain ?? "", network: network, clientAccount: account,
                                                     clientDomain: clientDomain)
        let challenge = try chosen(try ContractWebAuthChallenge(base64: String(decoding: text, as: UTF8.self), expecting: expectation))
        let signed = Base64.string(try run(.contractSignIn(challenge, as: signer, clientDomainIdentity: try clientDomainName.map { try IdentityName($0) },
                                                           allowing: allowV1 ? .notAddressBound : []), with: signingKey, alreadyRead: pinFirst).signed)
        if key.identity.json {
            struct Output: Encodable { let authorizationEntries, account, signerAddress: String }
            try Console.printJSON(Output(authorizationEntries: signed, account: account, signerAddress: signingKey.address))
        } else {
            Console.print(signed)
        }
    }
}
