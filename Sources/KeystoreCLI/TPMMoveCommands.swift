import ArgumentParser
import Foundation
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
        static let configuration = CommandConfiguration(
            commandName: "target", abstract: "On the new machine: write this TPM's storage key's public part, and print its fingerprint.",
            discussion: """
                The fingerprint goes to the old machine by another way than the file (read it out, type it): 'wrap' \
                refuses a file whose key has another one, so that a file swapped on the way gets nothing.
                """)
        @OptionGroup var keystore: HomeOptions
        @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The file to write (a new one).", valueName: "path"))
        var output: String

        func run() throws {
            let fingerprint = try keystore.keystore().writeTPMMoveTarget(to: output)
            Console.note("wrote \(output): give it to the machine the key moves from, and this fingerprint apart from it, read out or typed:")
            Console.print(fingerprint)
        }
    }

    struct Wrap: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "wrap", abstract: "On the old machine: wrap an identity's key to the new machine's TPM, after its PIN.",
            discussion: """
                Asks at the terminal for the fingerprint 'keystore tpm-move target' printed on the new machine (or takes \
                --fingerprint), and wraps only to a file whose storage key has that fingerprint, before any PIN.
                """)
        @OptionGroup var keystore: HomeOptions
        @OptionGroup var pin: PINOptions
        @Option(help: ArgumentHelp("The identity to move.", valueName: "name")) var name: String
        @Option(help: ArgumentHelp("The new machine's file from 'keystore tpm-move target'.", valueName: "path")) var to: String
        @Option(help: ArgumentHelp("The fingerprint 'keystore tpm-move target' printed on the new machine (not a secret).", valueName: "xxxx-…"))
        var fingerprint: String?
        @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The move file to write (a new one).", valueName: "path"))
        var output: String

        func run() throws {
            let target = try Console.readInput(nil, file: to, prompt: "", limit: 16 * 1024)
            let confirmed = try fingerprint ?? SecretInput.prompt("The fingerprint 'keystore tpm-move target' printed on the new machine: ",
                                                                  asking: "the new machine's fingerprint", instead: "--fingerprint")
                .withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            let address = try keystore.keystore().wrapForTPMMove(IdentityName(name), target: target, fingerprint: confirmed, to: output) {
                try pin.read()
            }
            Console.note("wrote \(output): \(address), which only the holder of that storage key's private half (the new machine's TPM, if the fingerprint came from it) can open; delete it once imported")
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
        case .malformed, .futureVersion, .addressMismatch, .fingerprintMismatch: .invalidInput
        case .noSuchIdentity: .vaultNotFound
        case .outputExists: .vaultExists
        }
    }
}
