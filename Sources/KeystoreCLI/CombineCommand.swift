import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

struct CombineTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "combine-tx",
        _superCommandName: KeystoreCommand.name,
        abstract: "Combine the signatures of copies of one transaction envelope, signed apart, into one envelope.",
        discussion: """
            Each FILE holds one copy (base64 XDR); with no FILE, standard input holds one a line. Every copy must be the \
            same transaction on the network. Prints the first copy with the others' signatures appended, each once; \
            nothing else changes. A signature by a known signer (--signer, an --account-file, an identity here) is \
            checked and left out if not valid; the others are kept and listed as not checked. --account-file shows the \
            thresholds; --trim removes the signatures the network would refuse. See docs/guides/multisig.md.
            """)

    @Argument(help: ArgumentHelp("Files holding one copy each (default: standard input, one copy a line).", valueName: "file"),
              completion: .file())
    var files: [String] = []

    @OptionGroup var networkOptions: NetworkOptions

    @Option(name: .customLong("signer"), help: ArgumentHelp("A signer (G…) whose signatures are checked (repeatable).", valueName: "address"))
    var signers: [String] = []

    @OptionGroup var accountFiles: AccountFileOptions

    @Flag(help: "Remove the signatures the network would refuse the transaction for (needs an --account-file for every account it needs).")
    var trim = false

    @OptionGroup var keystore: HomeOptions

    func run() throws {
        // One call: the network resolved, the accounts read, the copies decoded, combined and, when asked, trimmed
        // (or refused) before anything is said, so that a refusal is one line.
        let made = try keystore.keystore().combine({ try readCopies() }, network: networkOptions.choice, signers: signers,
                                                   accountFiles: try accountFiles.contents(), trimming: trim)
        let (combined, network) = (made.combination, made.network)
        for note in made.notes { Console.note(note) }
        if let check = made.check {
            // As a summary shows them (the same lines as show-tx's), unprefixed: only keys, hints and numbers.
            let text = check.warnings.map { "  !! " + $0 + "\n" }.joined() + check.lines.map { $0 + "\n" }.joined()
            _ = Console.write(Array(text.utf8), to: STDERR_FILENO)
        }
        struct Output: Encodable {
            let envelope, hash, network: String
            let kept, dropped, notChecked: [CombinedTransaction.Signature]
            let removed: [SignatureCheck.Signature]?
            let thresholds: SignatureCheck?
        }
        try Console.printAnswer(json: keystore.json,
                                Output(envelope: Base64.string(made.envelope.bytes), hash: Hex.string(combined.hash),
                                       network: network.name ?? network.passphrase, kept: combined.kept, dropped: combined.dropped,
                                       notChecked: combined.notChecked, removed: made.removed, thresholds: made.check),
                                else: Base64.string(made.envelope.bytes))
    }

    /// The copies' texts, by file name, or by line of standard input.
    private func readCopies() throws -> [(name: String, text: [UInt8])] {
        if !files.isEmpty {
            return try files.map { path in (path, try Console.readInput(nil, file: path, prompt: "", limit: TransactionEnvelope.maximumTextSize)) }
        }
        if isatty(STDIN_FILENO) != 0 { SecretInput.tell("Transaction envelopes, base64, one a line (end with Ctrl-D):") }
        let text = try Console.readAll(STDIN_FILENO, source: "standard input",
                                       limit: (TransactionEnvelope.maximumTextSize + 1) * TransactionEnvelope.maximumSignatures)
        return text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
            .filter { $0.element.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) }
            .map { ("line \($0.offset + 1)", Array($0.element)) }
    }
}
