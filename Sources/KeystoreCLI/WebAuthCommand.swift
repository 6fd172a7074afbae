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
            Reads https://DOMAIN/.well-known/stellar.toml (WEB_AUTH_ENDPOINT, SIGNING_KEY, NETWORK_PASSPHRASE), \
            asks the endpoint for a challenge for this identity's account (home_domain: DOMAIN, or a URL's host), \
            and checks it: a v1 transaction for the stellar.toml's network, from the server's key, sequence number \
            0, time bounds around now (10 s of grace), no memo but an ID, a first manage_data operation from the \
            account named "DOMAIN auth" with a 64-byte nonce, every other operation a manage_data from the server \
            (but client_domain, from the client domain's key), web_auth_domain equal to the endpoint's host, and \
            exactly one signature, the server's. Only then is the summary shown and the PIN asked (or the session \
            used); the signed challenge is sent back and the token (a JWT) printed. A broken rule is exit 12 and \
            nothing is signed or sent; a server or network failure is exit 13. https only; http:// only to this \
            machine (loopback). --json adds the token's claims, unverified: a client cannot check the server's \
            signature on it. With --client-domain, the challenge must carry that domain's client_domain \
            operation, which --client-domain-name's identity signs too; its key must be the client domain's \
            stellar.toml SIGNING_KEY. With --challenge, nothing is fetched: the challenge (argument, or standard \
            input) is checked against --server-key, --home-domain, --web-auth-domain and the network, and the \
            signed challenge printed (base64), for a script with its own HTTP client.

            With --account C…, the identity signs in as that contract account (SEP-45, draft 0.1.1), as a key \
            the account's __check_auth accepts: with the account convention (Vec[Map{public_key, signature}]), or \
            with --verifier and --context-rules as the External(verifier, key) signer of an OpenZeppelin smart \
            account. The stellar.toml gives WEB_AUTH_FOR_CONTRACTS_ENDPOINT, WEB_AUTH_CONTRACT_ID, SIGNING_KEY and \
            NETWORK_PASSPHRASE. Before the summary and the PIN, every authorization entry must call \
            web_auth_verify on WEB_AUTH_CONTRACT_ID with no sub-invocations and one map of SEP-45's keys only \
            (account, home_domain, web_auth_domain: the endpoint's host with its port if it names one, \
            web_auth_domain_account, a nonce the same in every entry, client_domain and client_domain_account only \
            if asked for); there must be exactly one entry for the server, signed by SIGNING_KEY on the network, \
            one unsigned for the account and one for the client domain if asked for, and nothing else. SEP-45 \
            leaves the signatures' expiration ledger to the client, and keystore has no network to learn the \
            current ledger: the account's entry (and the client domain's) is signed valid through \
            --expiration-ledger, else the ledger the server put in it, else (stellar-sdk's servers leave it 0) the \
            ledger through which the server's own signature is valid, after which the challenge is dead anyway; \
            the summary says which. A ledger after the server's is refused. V1 entries, which bind no address, need --allow-v1 or a yes typed at \
            the terminal. No Soroban RPC is used: the SEP's simulation step is not made. With \
            --challenge, --web-auth-contract names the contract and the entries (base64) are checked, signed and \
            printed.
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

