import ArgumentParser
import StellarKeys
import StellarTransactions
import StellarWebAuth

struct ShareTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share-tx",
        _superCommandName: KeystoreCommand.name,
        abstract: "Make a SEP-7 request (web+stellar:tx?xdr=…) of a transaction envelope, to hand it to a co-signer's wallet.",
        discussion: """
            Prints one line: the envelope as a web+stellar:tx URI, with --msg, --callback and --pubkey when given, \
            and network_passphrase unless the network is the public one (which SEP-7 assumes when none is named); \
            written as stellar-sdk writes the same fields. The network is required, as for sign-tx. The request \
            is not signed and names no origin_domain: SEP-7's request signature proves which domain made a \
            request, which a person handing a transaction to a co-signer does not need; the co-signer's wallet \
            shows it as from an unknown origin. Nothing is signed and no key is used.
            """)

    @OptionGroup var input: EnvelopeOptions
    @OptionGroup var networkOptions: NetworkOptions

    @Option(help: ArgumentHelp("A message for the co-signer (at most 300 characters; not part of the transaction).", valueName: "text"))
    var msg: String?

    @Option(help: ArgumentHelp("Where the co-signer's wallet is to POST the signed envelope (an https:// URL).", valueName: "url"))
    var callback: String?

    @Option(help: ArgumentHelp("The key the co-signer is asked to sign with.", valueName: "G…"))
    var pubkey: String?

    @Flag(help: "Print one JSON object: {\"uri\", \"hash\", \"network\"}.")
    var json = false

    func run() throws {
        let shared = try TransactionRequest.sharing(input.readText, network: networkOptions.choice.network, message: msg, callback: callback, pubkey: pubkey)
        struct Output: Encodable { let uri, hash, network: String }
        try Console.printAnswer(json: json, Output(uri: shared.request.uri, hash: Hex.string(shared.hash), network: shared.network.name ?? shared.network.passphrase),
                                else: shared.request.uri)
    }
}
