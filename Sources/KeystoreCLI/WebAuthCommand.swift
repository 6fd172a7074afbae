import ArgumentParser
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

struct WebAuth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-auth",
        _superCommandName: KeystoreCommand.name,
        abstract: "Sign in to a Stellar service (SEP-10, or SEP-45 for a contract account) and print the token it issues.",
        discussion: """
            Reads https://DOMAIN/.well-known/stellar.toml, fetches a challenge for this identity's account, and checks \
            every rule of SEP-10 before the summary and the PIN: a broken rule is exit 12, and nothing is signed or \
            sent; a server or network failure is exit 13. Prints the token. With --account C…, signs in as that contract \
            account (SEP-45), with --verifier and --context-rules as a smart account's signer. With --challenge, nothing \
            is fetched: the challenge given is checked and printed signed. See docs/guides/sign-in.md.
            """)

    @OptionGroup var key: SigningKeyOptions

    @Argument(help: ArgumentHelp("The service's domain or URL; with --challenge, the challenge (base64 XDR; default: standard input).",
                                 valueName: "domain-or-url"))
    var target: String?

    @Option(help: ArgumentHelp("Also attribute the sign-in to this client domain (a domain or URL; SEP-10's client_domain).", valueName: "domain"))
    var clientDomain: String?

    @Option(help: ArgumentHelp("The identity whose key is the client domain's SIGNING_KEY.", valueName: "name"))
    var clientDomainName: String?

    @Flag(help: "Check and sign a challenge given here instead of fetching one.")
    var challenge = false

    @Option(help: ArgumentHelp("With --challenge: the server's signing key.", valueName: "G…"))
    var serverKey: String?

    @Option(help: ArgumentHelp("With --challenge: the home domain the challenge is for.", valueName: "domain"))
    var homeDomain: String?

    @Option(help: ArgumentHelp("With --challenge: the web-auth endpoint's host.", valueName: "host"))
    var webAuthDomain: String?

    @Option(help: ArgumentHelp("With --challenge and --client-domain: the client domain's signing key.", valueName: "G…"))
    var clientDomainKey: String?

    @Option(help: ArgumentHelp("Sign in as this contract account (SEP-45), the identity's key signing for it.", valueName: "C…"))
    var account: String?

    @Option(help: ArgumentHelp("With --account: the account is an OpenZeppelin smart account; its signer is External(this verifier, the identity's key).",
                               valueName: "C…"))
    var verifier: String?

    @Option(help: ArgumentHelp("With --verifier: the smart account's context rule ids, one per authorization context (web_auth_verify is one).",
                               valueName: "n,…"),
            transform: ContextRuleIDs.parse)
    var contextRules: [UInt32]?

    @Flag(name: .customLong("allow-v1"), help: "With --account: also sign a V1 entry, whose signature binds no address.")
    var allowV1 = false

    @Option(help: ArgumentHelp("With --challenge and --account: the web-auth contract (WEB_AUTH_CONTRACT_ID).", valueName: "C…"))
    var webAuthContract: String?

    @Option(help: ArgumentHelp("With --account: the last ledger at which the signatures are valid (default: the server's choice, else the server's own signature's).",
                               valueName: "n"))
    var expirationLedger: UInt32?

    @OptionGroup var networkOptions: NetworkOptions

    @Flag(help: "Do not print the summary.")
    var quiet = false

    func validate() throws {
        if (verifier == nil) != (contextRules == nil) { throw ValidationError("--verifier and --context-rules go together.") }
        if account == nil && (verifier != nil || allowV1 || expirationLedger != nil) {
            throw ValidationError("--verifier, --allow-v1 and --expiration-ledger are for a contract account: give --account too.")
        }
        if webAuthContract != nil && !(challenge && account != nil) {
            throw ValidationError("--web-auth-contract is for --challenge with --account; without it, it comes from stellar.toml.")
        }
        if challenge && account != nil && webAuthContract == nil {
            throw ValidationError("--challenge with --account needs --web-auth-contract: nothing is fetched.")
        }
        if (clientDomain == nil) != (clientDomainName == nil) {
            throw ValidationError("--client-domain and --client-domain-name go together.")
        }
        if challenge {
            guard serverKey != nil, homeDomain != nil, webAuthDomain != nil else {
                throw ValidationError("--challenge needs --server-key, --home-domain and --web-auth-domain.")
            }
            if clientDomain != nil && clientDomainKey == nil {
                throw ValidationError("--challenge with --client-domain needs --client-domain-key: nothing is fetched.")
            }
        } else {
            guard target != nil else { throw ValidationError("Give the service's domain or URL, or --challenge.") }
            if serverKey != nil || homeDomain != nil || webAuthDomain != nil || clientDomainKey != nil {
                throw ValidationError("--server-key, --home-domain, --web-auth-domain and --client-domain-key are for --challenge; without it they come from stellar.toml.")
            }
            if networkOptions.network != nil || networkOptions.networkPassphrase != nil {
                throw ValidationError("The network comes from the service's stellar.toml; --network is for --challenge.")
            }
        }
    }

    func run() throws {
        if let account { return challenge ? try signGivenAsContract(account) : try signInAsContract(account) }
        if challenge { return try signGiven() }
        // One call: the key that signs in found (a session's, else the vault's), then the service's stellar.toml
        // read, the challenge fetched for the key's account and checked, reviewed, shown, approved, and sent back.
        let signedIn = try key.run(SignIn(from: WebAuthService.challenges(at: target ?? "", clientDomain: clientDomain),
                                          clientDomainIdentity: clientDomainName),
                                   quiet: quiet, secondIdentity: clientDomainName)
        try printToken(signedIn)
    }

    /// The token a service issued; with `--json`, who signed in and who issued it. A contract account (`account`)
    /// is named beside its signer.
    func printToken(_ signedIn: SignedIn<IssuedToken>, account: String? = nil) throws {
        struct Output: Encodable {
            let token, account: String
            let signer: String?
            let homeDomain, server: String
            let claims: [String: JSONTree]
            let claimsVerified: Bool
        }
        let issued = signedIn.answer
        try Console.printAnswer(json: key.json,
                                Output(token: issued.token.jwt, account: account ?? signedIn.signer, signer: account.map { _ in signedIn.signer },
                                       homeDomain: issued.homeDomain, server: issued.serverKey.accountID, claims: issued.token.claims,
                                       claimsVerified: false),
                                else: issued.token.jwt)
    }

    /// `--challenge`'s input: the argument, else standard input, after the PIN's line with `--pin-stdin`.
    func readGiven(prompt: String, limit: Int) throws -> (text: String, pinFirst: PINLine?) {
        let fromStandardInput = target == nil || target == "-"
        let pinFirst = try key.readFirst(ifInputIsStandardInput: fromStandardInput)
        let text = try Console.readInput(fromStandardInput ? nil : target, file: nil, prompt: prompt, limit: limit)
        return (String(decoding: text, as: UTF8.self), pinFirst)
    }

    /// The client domain and its key, as given with `--challenge` (nothing is fetched).
    var givenClientDomain: (domain: String, key: String)? { clientDomain.map { ($0, clientDomainKey ?? "") } }

    /// `--challenge`: checked here, signed, printed; nothing is fetched or sent.
    private func signGiven() throws {
        let (text, pinFirst) = try readGiven(prompt: "Challenge, base64", limit: TransactionEnvelope.maximumTextSize)
        let signedIn = try key.run(SignIn.given(text, serverKey: serverKey ?? "", homeDomain: homeDomain ?? "",
                                                webAuthDomain: webAuthDomain ?? "", network: networkOptions.choice,
                                                clientDomain: givenClientDomain, clientDomainIdentity: clientDomainName),
                                   alreadyRead: pinFirst, quiet: quiet, secondIdentity: clientDomainName)
        let signed = Base64.string(signedIn.answer)
        struct Output: Encodable { let transaction, signerAddress: String }
        try Console.printAnswer(json: key.json, Output(transaction: signed, signerAddress: signedIn.signer), else: signed)
    }
}
