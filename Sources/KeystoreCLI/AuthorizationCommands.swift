import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

struct SignAuth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-auth",
        _superCommandName: KeystoreCommand.name,
        abstract: "Sign the Soroban authorization entries that ask for this identity, after showing what they authorize.",
        discussion: """
            Takes a simulated envelope (base64 XDR) and signs each authorization entry whose credentials are this \
            identity's account, or, with --account G…/C…, an account it signs for (a multisig account's signer, a \
            contract account, or with --verifier and --context-rules an OpenZeppelin smart account's External signer), \
            valid through --expiration-ledger. Prints the envelope with only those entries changed. Refused before any \
            PIN unless accepted: a non-strict entry (--allow-non-strict) and a V1 entry (--allow-v1). --preimage signs a \
            bare HashIDPreimage. See docs/guides/smart-accounts.md.
            """)

    @OptionGroup var key: SigningKeyOptions

    @Argument(help: ArgumentHelp("The envelope (or with --preimage the preimage), base64 XDR (default: standard input).",
                                 valueName: "xdr"))
    var xdr: String?

    @Option(help: ArgumentHelp("Read it from a file.", valueName: "path"))
    var file: String?

    @OptionGroup var networkOptions: NetworkOptions

    @Option(help: ArgumentHelp("The last ledger at which the signatures are valid (required for an envelope).", valueName: "n"))
    var expirationLedger: UInt32?

    @Flag(help: "Also sign entries whose root is not this transaction's call.")
    var allowNonStrict = false

    @Flag(name: .customLong("allow-v1"), help: "Also sign V1 entries and preimages, whose signatures bind no address.")
    var allowV1 = false

    @Option(help: ArgumentHelp("Sign the entries of this account instead of this identity's own: a Stellar account (G…) this identity is a signer of, or a contract account (C…).",
                               valueName: "G…|C…"))
    var account: String?

    @Option(help: ArgumentHelp("The smart account's verifier contract that checks this key (OpenZeppelin External signer).", valueName: "C…"))
    var verifier: String?

    @Option(help: ArgumentHelp("The smart account's context rule ids, one per context of the entry's tree, depth first.", valueName: "n,…"),
            transform: ContextRuleIDs.parse)
    var contextRules: [UInt32]?

    @Flag(help: "The input is a bare HashIDPreimage, not an envelope.")
    var preimage = false

    @Option(help: ArgumentHelp("For a P-256 key (signup --tpm --p256): what the smart account's verifier checks: webauthn (OpenZeppelin's WebAuthn verifier: an assertion) or secp256r1 (the digest itself).",
                               valueName: "form"))
    var signatureForm: P256SignatureForm = .webAuthn

    @Flag(help: "Do not print the summary.")
    var quiet = false

    func validate() throws {
        if xdr != nil && file != nil { throw ValidationError("Give the input as an argument or --file, not both.") }
        if preimage {
            if verifier != nil {
                throw ValidationError("A preimage's smart-account signature depends only on its rules: give --context-rules, without --verifier.")
            }
            if expirationLedger != nil { throw ValidationError("A preimage carries its own expiration ledger; drop --expiration-ledger.") }
            if allowNonStrict { throw ValidationError("--allow-non-strict is for an envelope's entries; a preimage has no transaction to compare with.") }
            if account != nil { throw ValidationError("A preimage names its own address; drop --account.") }
        } else {
            if (verifier == nil) != (contextRules == nil) {
                throw ValidationError("--verifier and --context-rules go together: they name the smart account's rules this key signs for.")
            }
            if expirationLedger == nil {
                throw ValidationError("--expiration-ledger is required: keystore has no network to learn the current ledger, and never guesses.")
            }
            if verifier != nil && account == nil { throw ValidationError("--verifier needs --account, the smart account's address (C…).") }
        }
    }

    private var allowing: AuthorizationRisks { [allowNonStrict ? .notStrict : [], allowV1 ? .notAddressBound : []] }

    func run() throws {
        let pinFirst = try key.readFirst(ifInputIsStandardInput: xdr == nil && file == nil)
        let input = try Console.readInput(xdr, file: file, prompt: preimage ? "Authorization preimage, base64" : "Transaction envelope, base64",
                                          limit: TransactionEnvelope.maximumTextSize)
        if preimage {
            try signPreimage(input, pinFirst: pinFirst)
        } else if let expirationLedger {
            try signEntries(input, expirationLedger: expirationLedger, pinFirst: pinFirst)
        }
    }

    /// One call: the network resolved, the envelope decoded, the account built from its parts, and every check
    /// the library makes run in the review, before the PIN (or, with a session, before the key signs); the summary
    /// is shown there too.
    private func signEntries(_ input: [UInt8], expirationLedger: UInt32, pinFirst: PINLine?) throws {
        let signed = try key.run(AuthorizationEntriesSigning(input, network: networkOptions.choice, expirationLedger: expirationLedger,
                                                             for: account, verifier: verifier, contextRuleIDs: contextRules,
                                                             allowing: allowing, p256Form: signatureForm),
                                 alreadyRead: pinFirst, quiet: quiet)
        let (entries, network) = (signed.approval.signed, signed.network)
        struct Output: Encodable {
            let envelope, network, signer: String
            let signed: [Int]
            let leftAlone: [AuthorizationPlan.LeftAlone]
        }
        try Console.printAnswer(json: key.json,
                                Output(envelope: entries.base64, network: network.name ?? network.passphrase, signer: signed.approval.signer.address,
                                       signed: entries.plan.toSign, leftAlone: entries.plan.leftAlone),
                                else: entries.base64)
    }

    private func signPreimage(_ input: [UInt8], pinFirst: PINLine?) throws {
        let approval = try key.run(AuthorizationPreimageSigning(input, network: networkOptions.choice, contextRuleIDs: contextRules,
                                                                allowing: allowing, p256Form: signatureForm),
                                   alreadyRead: pinFirst, quiet: quiet)
        let signature = Base64.string(approval.signed)
        struct Output: Encodable { let signedAuthEntry, signerAddress: String }
        try Console.printAnswer(json: key.json, Output(signedAuthEntry: signature, signerAddress: approval.signer.address),
                                else: signature)
    }
}

extension P256SignatureForm: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "webauthn": self = .webAuthn
        case "secp256r1": self = .secp256r1
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["webauthn", "secp256r1"] }
    public var defaultValueDescription: String { self == .webAuthn ? "webauthn" : "secp256r1" }
}
