import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        _superCommandName: KeystoreCommand.name,
        abstract: "Back up identities to one age file, encrypted to a new recovery key (shown once), age recipients, or a new passphrase.",
        discussion: """
            Every identity unless --name picks some; each sealed seed's PIN is asked as for export. Never encrypted \
            to a PIN alone. The file is age's (age-encryption.org/v1): `age -d` opens it too. See docs/guides/backup.md.
            """)

    @OptionGroup var keystore: HomeOptions
    @OptionGroup var pin: PINOptions

    @Option(name: .customLong("name"), help: ArgumentHelp("An identity to back up (repeat for several; default: all).", valueName: "name"))
    var names: [String] = []

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The backup file to write (mode 0600).", valueName: "path"))
    var output: String

    @Option(help: ArgumentHelp("Encrypt to this age recipient (age1…, or a plugin's: age1yubikey1…) instead of a new recovery key; repeat for several.", valueName: "age1…"))
    var recipient: [String] = []

    @Option(help: ArgumentHelp("Encrypt to the age recipients in this file, one per line.", valueName: "path"))
    var recipientsFile: String?

    @Flag(help: "Encrypt to a new passphrase of ten words (110 bits), shown once, instead of a new recovery key.")
    var passphrase = false

    @Flag(help: "Write the age file ASCII-armored (PEM), for a printout or an email.")
    var armor = false

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    @Flag(help: "Print a new recovery key or passphrase even when standard output is not a terminal.")
    var printKey = false

    func validate() throws {
        if passphrase && (!recipient.isEmpty || recipientsFile != nil) {
            throw ValidationError("--passphrase goes without --recipient or --recipients-file.")
        }
    }

    func run() throws {
        let keystore = try keystore.keystore()
        // Read as secret bytes: the file given by mistake may be an identity file.
        let file = try recipientsFile.map { try SecretInput.file($0, limit: 1 << 20) }
        let protection: BackupProtection = passphrase ? .newPassphrase
            : recipient.isEmpty && file == nil ? .newRecoveryKey : .recipients(recipient, file: file)
        // A new secret is shown only where a person reads it, checked before any PIN is asked or file written.
        if recipient.isEmpty && file == nil {
            try CLIError.refuseNonTerminal(for: "a backup's new recovery key or passphrase", unless: printKey,
                                           instead: "run in a terminal, add --print-key, or give --recipient. Nothing was written.")
        }
        // A person is asked each identity's PIN by name; a script's one PIN (--pin-stdin, …) is read once and tried
        // for each, as the identities of one keystore usually share it.
        var given: PIN?
        let made = try keystore.backUp(try names.isEmpty ? nil : names.map(IdentityName.init), protection: protection, armored: armor,
                                       to: output, replacing: force, plugins: AgePluginTerminal.host) { name in
            if pin.isInteractive { return try pin.read(prompt: "PIN of \(name.rawValue): ") }
            if let given { return given }
            given = try pin.read()
            return given!
        } deliver: { made in
            // Before the file is in place: a key that did not reach its reader leaves no backup it alone opens.
            try Self.deliver(made)
        }
        for item in made.items {
            Console.note("\(item.name.rawValue) (\(item.key)): " + (item.notInBackup ?? "in the backup"))
        }
        Console.note("wrote \(made.path)")
    }

    /// Shows the new key or passphrase on standard output, flushed to its disk when that is a file; throws when it
    /// could not be written whole.
    private static func deliver(_ made: BackupMade) throws {
        guard let secret = made.recoveryKey ?? made.passphrase else { return }
        var written = Console.printSecret(secret)
        // The QR code only where a person can scan it.
        if written, isatty(STDOUT_FILENO) != 0, let lines = made.recoveryKeyQRCode {
            written = Console.write(Array(("\n" + lines.joined(separator: "\n") + "\n").utf8), to: STDOUT_FILENO)
        }
        guard written && Console.flushStandardOutput() else {
            throw CLIError.backupKeyNotDelivered(reason: Console.outputError?.reason ?? "unknown error")
        }
        // Said once the key is out, so that a failure is one line, like every other.
        Console.warn("""
            that is the backup's \(made.recoveryKey != nil ? "recovery key" : "passphrase"), shown this once and kept nowhere: \
            write it down and keep it apart from the file; whoever has both has every key in it
            """)
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        _superCommandName: KeystoreCommand.name,
        abstract: "Restore identities from a backup: shown first, each address checked, written under a new PIN.",
        discussion: """
            Asks the recovery key (or the passphrase) at the terminal, or reads it from --secret-fd or an age \
            identity file. A different key under a name here is replaced only with --replace NAME. --dry-run \
            checks the whole backup and writes nothing.
            """)

    @OptionGroup var keystore: HomeOptions
    @OptionGroup var pin: PINOptions

    @Argument(help: ArgumentHelp("The backup file.", valueName: "file"))
    var file: String

    @Option(name: .customLong("name"), help: ArgumentHelp("An identity to restore (repeat for several; default: all).", valueName: "name"))
    var names: [String] = []

    @Option(name: .customLong("replace"), help: ArgumentHelp("Replace this identity if it holds a different key here (the old vault is kept as a backup).", valueName: "name"))
    var replacing: [String] = []

    @Option(help: ArgumentHelp("An age identity file (AGE-SECRET-KEY-1… or a plugin's AGE-PLUGIN-… lines) that opens the backup.", valueName: "path"))
    var identity: String?

    @Option(help: ArgumentHelp("Read the recovery key or passphrase from the first line of this open file descriptor.", valueName: "n"))
    var secretFd: Int32?

    @Flag(help: "Check the backup end to end (decrypt, every address, a probe signature per key) and write nothing.")
    var dryRun = false

    @Option(help: "Argon2id cost for the restored vaults whose cost was not chosen: auto, interactive, moderate or sensitive.")
    var kdf: KDFChoice = .auto

    @Flag(help: "Bind the restored vaults to this machine's TPM 2.0.")
    var tpm = false

    @Flag(help: "Restore identities that were bound to a TPM as vaults the PIN alone guards (at --kdf, not their bound cost).")
    var unbound = false

    @OptionGroup var openLockout: OpenLockoutOption

    func validate() throws {
        if identity != nil && secretFd != nil { throw ValidationError("Use --identity or --secret-fd, not both.") }
        if tpm && unbound { throw ValidationError("Use --tpm or --unbound, not both.") }
        try openLockout.validate(binding: tpm)
    }

    func run() throws {
        let keystore = try keystore.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout)
        let bytes = try Console.readInput(nil, file: file, prompt: "", limit: Keystore.largestBackupFile)
        let secret = try readSecret(asksForPassphrase: try Keystore.asksForPassphrase(bytes))
        let plan = try keystore.planRestore(bytes, with: secret, names: try names.isEmpty ? nil : names.map(IdentityName.init),
                                            replacing: Set(try replacing.map(IdentityName.init)), plugins: AgePluginTerminal.host)
        Console.note("the backup made \(plan.created) holds:")
        for item in plan.items {
            Console.note("  \(item.name.rawValue) (\(item.key)): \(Self.describe(item))")
        }
        if dryRun {
            _ = try keystore.check(plan, boundToTPM: tpm, unbinding: unbound)
            Console.note("every key in it signed and verified its probe; nothing was written (--dry-run)")
            return
        }
        let restored = try keystore.restore(plan, kdf: kdf, boundToTPM: tpm, unbinding: unbound) { try pin.readNew() }
        if !restored.isEmpty { KDFOptions.sayWhatAutoChose(kdf, keystore) }
        for created in restored {
            if let backup = created.backup { Console.warn("the previous vault of \(created.name.rawValue) was kept as \(backup)") }
            GPUEstimate.sayWhatACopyIsWorth(created.name, in: keystore)
            Console.print("\(created.name.rawValue)\t\(created.key)")
        }
        Console.note(restored.isEmpty ? "nothing to restore: every key in the backup is here already"
                                      : "restored \(restored.count), each opened with the new PIN and checked by a probe signature")
    }

    static func describe(_ item: RestorePlan.Item) -> String {
        let origin = (item.isFromPhrase ? ", from a recovery phrase" : "")
            + (item.wasTPMBound ? ", was TPM-bound (bound here with --tpm; else only with --unbound, guarded by the PIN alone)" : "")
        switch item.action {
        case .add: return "new\(origin)"
        case .alreadyHere: return "the same key is here already"
        case .replace(let here): return "replaces \(here) here\(origin)"
        case .differentKeyHere(let here): return "a different key, \(here), is here: refused without --replace \(item.name.rawValue)"
        case .notInBackup(let note): return "not in the backup. \(note)"
        }
    }

    private func readSecret(asksForPassphrase: Bool) throws -> BackupSecret {
        if let identity { return .identityFile(try SecretInput.file(identity, limit: 1 << 16)) }
        let what = asksForPassphrase ? "passphrase" : "recovery key"
        let line = try secretFd.map { try SecretInput.line(from: $0, describing: "descriptor \($0)") }
            ?? SecretInput.prompt("The backup's \(what): ", asking: "the backup's \(what)", instead: "--secret-fd or --identity")
        return asksForPassphrase ? .passphrase(line) : .recoveryKey(line)
    }
}
