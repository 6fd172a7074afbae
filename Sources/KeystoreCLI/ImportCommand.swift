import ArgumentParser
import FoundationEssentials
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

struct ImportStellarCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-stellar-cli",
        _superCommandName: KeystoreCommand.name,
        abstract: "Import stellar-cli's plaintext identities, each encrypted under a PIN.",
        discussion: """
            Reads identity/NAME.toml under --config-dir (default: $STELLAR_CONFIG_HOME, else \
            $XDG_CONFIG_HOME/stellar, else ~/.config/stellar): secret keys, and seed phrases at their hd_path \
            account (kept as phrase vaults). Ledger, secure-store and public-only identities are skipped, and so \
            are names taken here or not allowed (capitals are lowered once). One PIN, asked once, protects them \
            all. With --delete-plaintext each TOML file is overwritten and removed, only after its vault opens \
            with that PIN. One line per identity: SOURCE, then imported, skipped or failed and why.
            """)

    @OptionGroup var keystore: HomeOptions
    @OptionGroup var pin: PINOptions

    @Argument(help: "The stellar-cli identities to import (default: all; --all says so explicitly).")
    var names: [String] = []

    @Flag(help: "Import every stellar-cli identity.")
    var all = false

    @Option(help: ArgumentHelp("stellar-cli's configuration directory.", valueName: "dir"))
    var configDir: String?

    @Flag(help: "Overwrite and remove each plaintext TOML file once its vault opens with the PIN.")
    var deletePlaintext = false

    @Option(help: "Argon2id cost: auto, interactive, moderate or sensitive.")
    var kdf: KDFChoice = .auto

    func validate() throws {
        if all && !names.isEmpty { throw ValidationError("Name identities or pass --all, not both.") }
    }

    func run() throws {
        let store = try keystore.keystore()
        guard let directory = configDir ?? Keystore.stellarCLIDirectory(environment: Environment.values) else {
            throw StellarCLIImportError.noConfigDirectory("~/.config/stellar")
        }
        let results = try store.importStellarCLI(from: directory, names: names, pin: { importing in
            // What was found, before a person chooses a PIN for it.
            if pin.isInteractive { Console.note("importing \(importing.count) stellar-cli \(importing.count == 1 ? "identity" : "identities") from \(TerminalText.escaped(directory, limit: nil)): \(importing.map { TerminalText.escaped($0) }.joined(separator: ", "))") }
            return try pin.readNew()
        }, kdf: kdf, deletePlaintext: deletePlaintext)
        struct Line: Encodable {
            let source, outcome: String
            var name, address, reason: String?
            var deletedPlaintext: Bool?
            /// Other hard links of a plaintext file that was unlinked but not overwritten.
            var plaintextLinksLeft: Int?
        }
        let lines = results.map { result -> Line in
            switch result.outcome {
            case .imported(let name, let address, let plaintext):
                var line = Line(source: result.source, outcome: "imported", name: name, address: address,
                                deletedPlaintext: plaintext == .overwrittenAndRemoved)
                if case .removedNotOverwritten(let links) = plaintext { line.plaintextLinksLeft = links }
                return line
            case .skipped(let reason): return Line(source: result.source, outcome: "skipped", reason: reason)
            case .failed(let reason): return Line(source: result.source, outcome: "failed", reason: reason)
            }
        }
        if keystore.json {
            struct Output: Encodable { let identities: [Line] }
            try Console.printJSON(Output(identities: lines))
        } else {
            for line in lines {
                let plaintext = line.plaintextLinksLeft.map {
                    ", plaintext unlinked here but not overwritten: \($0) other hard \($0 == 1 ? "link still holds" : "links still hold") the seed"
                } ?? (line.deletedPlaintext == true ? ", plaintext removed" : "")
                let detail = line.outcome == "imported"
                    ? "as \(line.name!) (\(line.address!))\(plaintext)"
                    : TerminalText.escaped(line.reason ?? "", limit: nil)
                Console.print("\(TerminalText.escaped(line.source))\t\(line.outcome)\t\(detail)")
            }
        }
        let failed = lines.filter { $0.outcome == "failed" }.count
        if failed > 0 { throw CLIError.someFailed(failed, of: lines.count, "stellar-cli identities could not be imported; see their lines.") }
    }
}
