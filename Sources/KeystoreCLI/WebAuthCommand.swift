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
        let service = try WebAuthService.discover(target ?? "")
        let clientDomain = try self.clientDomain.map { try WebAuthService.clientDomain($0) }
        // The account is the signing key's (from the vault's header, or from the session that decides which
        // identity signs); the challenge is fetched for it and checked, then reviewed, before that key opens.
        let signingKey = try self.signingKey()
        let token = try runner.signIn(with: signingKey, from: service.challenges(clientDomain: clientDomain),
                                      clientDomainIdentity: try clientDomainIdentity())
        if key.identity.json {
            struct Output: Encodable {
                let token, account, homeDomain, server: String
                let claims: [String: JSONTree]
                let claimsVerified: Bool
            }
            try Console.printJSON(Output(token: token.jwt, account: signingKey.address, homeDomain: service.homeDomain,
                                         server: service.serverKey.accountID, claims: token.claims, claimsVerified: false))
        } else {
            Console.print(token.jwt)
        }
    }

    /// The library's conversation on the terminal: the account's PIN as the PIN options say (or `alreadyRead`),
    /// the client domain's identity's asked as "PIN for NAME", or the next line of standard input with --pin-stdin.
    func terminal(alreadyRead: PINLine? = nil) -> SigningRunner<TerminalPresenter> {
        SigningRunner(presenter: key.terminal(alreadyRead: alreadyRead, quiet: quiet, secondIdentity: clientDomainName))
    }

    var runner: SigningRunner<TerminalPresenter> { terminal() }

    func clientDomainIdentity() throws -> IdentityName? { try clientDomainName.map { try IdentityName($0) } }

    /// The key that signs in: the identity's (a session's or the agent's holding it, else the vault's).
    func signingKey() throws -> SigningKey {
        let keystore = try key.identity.keystore.keystore()
        return try keystore.signInKey(as: try key.identity.identityIfGiven(), keys: key.sources)
    }

    /// `--challenge`: checked here, signed, printed; nothing is fetched or sent.
    private func signGiven() throws {
        let network = try networkOptions.resolve()
        let fromStandardInput = target == nil || target == "-"
        let pinFirst = key.pin.pinStdin && fromStandardInput ? try key.pin.readFirst() : nil
        let text = try Console.readInput(fromStandardInput ? nil : target, file: nil, prompt: "Challenge, base64",
                                         limit: TransactionEnvelope.maximumTextSize)
        let serverKey = try PublicKey(accountID: serverKey ?? "")
        let clientDomain = try clientDomain.map { WebAuthExpectation.ClientDomain(domain: $0, key: try PublicKey(accountID: clientDomainKey ?? "")) }
        let signingKey = try self.signingKey()
        let challenge = GivenWebAuthChallenge(String(decoding: text, as: UTF8.self), serverKey: serverKey, homeDomain: homeDomain ?? "",
                                              webAuthDomain: webAuthDomain ?? "", network: network, clientDomain: clientDomain,
                                              now: UInt64(max(0, Date().timeIntervalSince1970)))
        let signed = Base64.string(try terminal(alreadyRead: pinFirst).signIn(with: signingKey, from: challenge,
                                                                              clientDomainIdentity: try clientDomainIdentity()))
        if key.identity.json {
            struct Output: Encodable { let transaction, signerAddress: String }
            try Console.printJSON(Output(transaction: signed, signerAddress: signingKey.address))
        } else {
            Console.print(signed)
        }
    }
}

