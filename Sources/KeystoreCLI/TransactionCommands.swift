import ArgumentParser
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

/// Which network a transaction is for: named on the command line or in the environment, never guessed.
struct NetworkOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The network: public (or mainnet, pubnet), testnet or futurenet (default: $STELLAR_NETWORK; none: an error).",
                               valueName: "name"),
            completion: .list(Completions.networks))
    var network: String?

    @Option(help: ArgumentHelp("Another network, by its passphrase (default: $STELLAR_NETWORK_PASSPHRASE).", valueName: "text"))
    var networkPassphrase: String?

    func validate() throws {
        if network != nil && networkPassphrase != nil { throw ValidationError("Give --network or --network-passphrase, not both.") }
    }

    /// The network as named here or in the environment, for the library to resolve (`NetworkChoice`).
    var choice: NetworkChoice { NetworkChoice(name: network, passphrase: networkPassphrase, environment: Environment.values) }
}

/// Where the envelope comes from: the argument, `--file`, or standard input.
struct EnvelopeOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The transaction envelope, base64 XDR (default: standard input).", valueName: "envelope"))
    var envelope: String?

    @Option(help: ArgumentHelp("Read the envelope from a file.", valueName: "path"))
    var file: String?

    func validate() throws {
        if envelope != nil && file != nil { throw ValidationError("Give the envelope as an argument or --file, not both.") }
    }

    var fromStandardInput: Bool { envelope == nil && file == nil }

    /// The envelope's text, for the library to decode.
    func readText() throws -> [UInt8] {
        try Console.readInput(envelope, file: file, prompt: "Transaction envelope, base64", limit: TransactionEnvelope.maximumTextSize)
    }
}

struct SignTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-tx",
        _superCommandName: KeystoreCommand.name,
        abstract: "Sign a Stellar transaction envelope (base64 XDR), after showing what it does.",
        discussion: """
            Prints the same envelope with one signature appended; nothing else changes. The network is required \
            (--network, --network-passphrase, or $STELLAR_NETWORK). A summary of what it does goes to standard error \
            first (--quiet drops it). --batch reads JSON lines {"id": …, "envelope": "…"}; --account-file and --trim: \
            docs/guides/multisig.md.


            """ + SignTx.requestHelp)

    @OptionGroup var key: SigningKeyOptions
    @OptionGroup var input: EnvelopeOptions
    @OptionGroup var networkOptions: NetworkOptions

    @Flag(help: "Sign newline-delimited JSON requests from standard input, one result per line.")
    var batch = false

    @Flag(help: "Do not print the summary.")
    var quiet = false

    @OptionGroup var accountFiles: AccountFileOptions

    @Flag(help: "Remove the signatures the network would refuse the transaction for (needs an --account-file for every account it needs).")
    var trim = false

    @Flag(help: "With a SEP-7 request that has a callback (url:…), also POST the signed envelope there.")
    var submitCallback = false

    @Flag(help: "Accept a SEP-7 request whose origin_domain is a port on this machine (localhost:PORT, 127.x.x.x:PORT), its stellar.toml fetched over plain http: for testing a requester here.")
    var allowLocalOrigin = false

    func validate() throws {
        if batch && submitCallback { throw ValidationError("--submit-callback is for a SEP-7 request, not --batch.") }
        if batch && !input.fromStandardInput {
            throw ValidationError("--batch reads its requests from standard input; drop the envelope and --file.")
        }
        if batch && (trim || !accountFiles.paths.isEmpty) { throw ValidationError("--batch takes no --account-file or --trim.") }
    }

    func run() throws {
        if batch {
            return try BatchSigner.run(try key.run(TransactionBatchSigning(network: networkOptions.choice), quiet: quiet).signed)
        }
        // With --pin-stdin, the PIN is the first line of standard input and the envelope the rest.
        let pinFirst = try key.readFirst(ifInputIsStandardInput: input.fromStandardInput)
        // An envelope or a SEP-7 request (web+stellar:…), told apart, decoded, its network resolved, a request's
        // origin checked and the accounts read by the library's one call.
        let signed = try key.run(TransactionSigning(try input.readEnvelopeOrRequest(), network: networkOptions.choice,
                                                    accountFiles: try accountFiles.contents(), trimming: trim,
                                                    origins: FetchedOrigins(allowingThisMachine: allowLocalOrigin), forCallback: submitCallback),
                                 alreadyRead: pinFirst, quiet: quiet)
        for note in signed.notes { Console.note(note) }
        if let request = signed.request { return try printSigned(signed, request: request) }
        try Console.printAnswer(json: key.json, Output(signed, removed: signed.approval.signed.removed), else: signed.approval.signed.base64)
    }
}

struct ShowTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show-tx",
        _superCommandName: KeystoreCommand.name,
        abstract: "Show what a transaction envelope does, and its hash, without any key.",
        discussion: """
            For checking what a script or a person is about to sign; the network is required, as for sign-tx. With \
            --account-file (Horizon's JSON for an account), it shows whether the signatures present meet the \
            thresholds of each account the transaction needs, and which signatures the network would refuse it for.
            """)

    @OptionGroup var input: EnvelopeOptions
    @OptionGroup var networkOptions: NetworkOptions
    @OptionGroup var accountFiles: AccountFileOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let (summary, network) = try TransactionShowing(try input.readText(), network: networkOptions.choice,
                                                        accountFiles: try accountFiles.contents()).summary()
        struct Output: Encodable { let hash, network: String; let summary: TransactionSummary? }
        try Console.printAnswer(json: json, Output(hash: summary.transaction?.hash ?? "", network: network.name ?? network.passphrase, summary: summary.transaction),
                                else: summary.text.joined(separator: "\n"))
    }
}
