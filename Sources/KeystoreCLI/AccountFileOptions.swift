import ArgumentParser
import Glibc
import StellarTransactions

/// The accounts' signers and thresholds a transaction is checked against offline: Horizon's JSON for each account.
struct AccountFileOptions: ParsableArguments {
    @Option(name: .customLong("account-file"),
            help: ArgumentHelp("An account's signers and thresholds: the JSON Horizon returns for /accounts/G… (repeatable, one file per account).",
                               valueName: "path"),
            completion: .file())
    var paths: [String] = []

    /// Every file's bytes, by its path, for the library to read strictly; one larger than an account's JSON is
    /// refused as such.
    func contents() throws -> [(source: String, bytes: [UInt8])] {
        try paths.map { path in
            do {
                return (path, try Console.readInput(nil, file: path, prompt: "", limit: AccountSigners.maximumSize))
            } catch CLIError.inputTooLarge {
                throw AccountSignersError(source: path, problem: .tooLarge)
            }
        }
    }
}
