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
                --fingerprint), and wraps only to a file whose storage key has that fingerprint, before any PIN. Prints \
                a transfer code, which the new machine's import asks for: carry it apart from the move file.
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
            let wrapped = try keystore.keystore().wrapForTPMMove(IdentityName(name), target: target, fingerprint: confirmed, to: output) {
                try pin.read()
            }
            Console.note("wrote \(output): \(wrapped.address), which only the holder of that storage key's private half (the new machine's TPM, if the fingerprint came from it) can open, with this transfer code; carry the code apart from the file, and delete the file once imported:")
            Console.printSecret(wrapped.transferCode)
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import", abstract: "On the new machine: import a move file and bind its key to this TPM under a new PIN.")
        @OptionGroup var keystore: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: ArgumentHelp("The move file.", valueName: "path")) var file: String
        @Option(help: ArgumentHelp("The identity's name here.", valueName: "name")) var name: String
        @Option(help: ArgumentHelp("Read the transfer code 'wrap' printed from the first line of this open file descriptor (else asked at the terminal).", valueName: "n"))
        var codeFd: Int32?
        @OptionGroup var openLockout: OpenLockoutOption

        func run() throws {
            let bytes = try Console.readInput(nil, file: file, prompt: "", limit: 16 * 1024)
            let made = try keystore.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout).importTPMMove(bytes, as: IdentityName(name)) {
                try codeFd.map { try SecretInput.line(from: $0, describing: "descriptor \($0)") }
                    ?? SecretInput.prompt("The transfer code 'keystore tpm-move wrap' printed: ", asking: "the transfer code", instead: "--code-fd")
            } pin: { try pin.readNew() }
            Console.print("\(made.name.rawValue)\t\(made.key)")
            Console.note("bound to this machine's TPM under the new PIN, and checked by a probe signature")
        }
    }
}

extension TPMMoveError: CommandLineError {
    var exitStatus: ExitStatus {
        switch self {
        case .malformed, .futureVersion, .addressMismatch, .fingerprintMismatch, .malformedTransferCode: .invalidInput
        case .wrongTransferCode: .incorrectPIN
        case .noSuchIdentity: .vaultNotFound
        case .outputExists: .vaultExists
        }
    }
}
