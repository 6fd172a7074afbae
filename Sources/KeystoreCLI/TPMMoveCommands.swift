import ArgumentParser
import FoundationEssentials
import StellarKeys
import StellarKeystore

/// `keystore tpm-move`: a TPM-bound identity to another machine's TPM (Keystore+TPMMove). The target writes its
/// storage key, the source wraps to it, the target imports.
struct TPMMove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm-move", _superCommandName: KeystoreCommand.name,
        abstract: "Move an identity's key to another machine's TPM, never in the clear on disk.",
        subcommands: [Target.self, Wrap.self, Import.self])

    struct Target: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "target", abstract: "On the new machine: write this TPM's storage key's public part.")
        @OptionGroup var keystore: HomeOptions
        @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The file to write (a new one).", valueName: "path"))
        var output: String

        func run() throws {
            try keystore.keystore().writeTPMMoveTarget(to: output)
            Console.note("wrote \(output): give it to the machine the key moves from")
        }
    }

    struct Wrap: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "wrap", abstract: "On the old machine: wrap an identity's key to the new machine's TPM, after its PIN.")
        @OptionGroup var keystore: HomeOptions
        @OptionGroup var pin: PINOptions
        @Option(help: ArgumentHelp("The identity to move.", valueName: "name")) var name: String
        @Option(help: ArgumentHelp("The new machine's file from 'keystore tpm-move target'.", valueName: "path")) var to: String
        @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The move file to write (a new one).", valueName: "path"))
        var output: String

        func run() throws {
            let target = try Console.readInput(nil, file: to, prompt: "", limit: 16 * 1024)
            let address = try keystore.keystore().wrapForTPMMove(IdentityName(name), target: target, to: output) { try pin.read() }
            Console.note("wrote \(output): \(address), which only the new machine's TPM can open")
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import", abstract: "On the new machine: import a move file and bind its key to this TPM under a new PIN.")
        @OptionGroup var keystore: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: ArgumentHelp("The move file.", valueName: "path")) var file: String
        @Option(help: ArgumentHelp("The identity's name here.", valueName: "name")) var name: String
        @OptionGroup var openLockout: OpenLockoutOption

        func run() throws {
            let bytes = try Console.readInput(nil, file: file, prompt: "", limit: 16 * 1024)
            let made = try keystore.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout).importTPMMove(bytes, as: IdentityName(name)) { try pin.readNew() }
            Console.print("\(made.name.rawValue)\t\(made.key)")
            Console.note("bound to this machine's TPM under the new PIN, and checked by a probe signature")
        }
    }
}

extension TPMMoveError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .malformed, .futureVersion, .addressMismatch: .invalidInput
        case .noSuchIdentity: .vaultNotFound
        case .outputExists: .vaultExists
        }
    }
}
