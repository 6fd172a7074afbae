import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

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
        let network = try networkOptions.resolve()
        let accounts = try accountFiles.read()
        let combined = try keystore.keystore().combining(try readCopies(), on: network,
                                                         signers: try signers.map { try PublicKey(accountID: $0) }, accounts: accounts)
        var envelope = try TransactionEnvelope(xdr: combined.envelope)
        // Trimmed (or refused) before anything is said: a refusal is one line.
        let trimmed = trim ? try envelope.trimmed(on: network, accounts: accounts) : nil
        for note in combined.notes + (trimmed?.notes ?? []) { Console.note(note) }
        if let trimmed { envelope = try TransactionEnvelope(xdr: trimmed.envelope) }
        let removed = trimmed?.removed
        let check = accountFiles.paths.isEmpty ? nil : envelope.signatureCheck(on: network, accounts: accounts)
        if let check {
            // As a summary shows them (the same lines as show-tx's), unprefixed: only keys, hints and numbers.
            let text = check.warnings.map { "  !! " + $0 + "\n" }.joined() + check.lines.map { $0 + "\n" }.joined()
            _ = Console.write(Array(text.utf8), to: STDERR_FILENO)
        }
        if keystore.json {
            struct Output: Encodable {
                let envelope, hash, network: String
                let kept, dropped, notChecked: [CombinedTransaction.Signature]
                let removed: [SignatureCheck.Signature]?
                let thresholds: SignatureCheck?
            }
            try Console.printJSON(Output(envelope: Base64.string(envelope.bytes), hash: Hex.string(combined.hash),
                                         network: network.name ?? network.passphrase, kept: combined.kept, dropped: combined.dropped,
                                         notChecked: combined.notChecked, removed: removed, thresholds: check))
        } else {
            Console.print(Base64.string(envelope.bytes))
        }
    }

    /// The copies, by file name, or by line of standard input.
    private func readCopies() throws -> [(name: String, envelope: TransactionEnvelope)] {
        if !files.isEmpty {
            return try files.map { path in
                let text = try Console.readInput(nil, file: path, prompt: "", limit: TransactionEnvelope.maximumTextSize)
                do {
                    return (path, try TransactionEnvelope(base64: text))
                } catch let error as TransactionError {
                    throw CopyError(copy: path, error: error)
                }
            }
        }
        if isatty(STDIN_FILENO) != 0 { SecretInput.tell("Transaction envelopes, base64, one a line (end with Ctrl-D):") }
        let text = try Console.readAll(STDIN_FILENO, source: "standard input",
                                       limit: (TransactionEnvelope.maximumTextSize + 1) * TransactionEnvelope.maximumSignatures)
        var copies: [(name: String, envelope: TransactionEnvelope)] = []
        for (number, line) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        where line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
            do {
                copies.append(("line \(number + 1)", try TransactionEnvelope(base64: Array(line))))
            } catch let error as TransactionError {
                throw CopyError(copy: "line \(number + 1)", error: error)
            }
        }
        return copies
    }
}

/// A copy that is not an envelope: the reason, said of that copy (its file, or its line of standard input).
struct CopyError: CommandLineError {
    let copy: String
    let error: TransactionError

    var message: String { "\(TerminalText.escaped(copy)): \(error.message)" }
    var exitStatus: ExitStatus { error.exitStatus }
}
