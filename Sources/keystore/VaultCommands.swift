import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import StellarKeystore

/// What the vault commands print with `--json`. Never holds a secret (`export` writes its own).
struct IdentityReport: Encodable {
    var name: String
    var address: String?
    var path: String?
    var backup: String?
    var error: String?
    /// `list`: the identity's backups (old vaults kept by `--replace`), each an old key under an old PIN.
    var backups: [BackupReport]?
}

struct BackupReport: Encodable {
    var file: String
    var address: String?
    var error: String?
}

struct Signup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create an identity: a new key, or an imported one, encrypted under a 6-digit PIN.",
        discussion: """
            Prints the new G… address. The PIN is asked twice on the terminal, or read once with --pin-stdin, \
            --pin-file or --pin-fd. With --import the S… seed is read from the first line of standard input \
            (or asked on the terminal); with --import --pin-stdin the PIN is the second line.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(name: .customLong("import"), help: "Import an existing secret seed (S…) instead of generating a key.")
    var importSeed = false

    @Flag(help: "Replace an existing identity; its old vault is kept as NAME.vault.backup-….")
    var replace = false

    @Option(help: "Argon2id cost: interactive, moderate or sensitive.")
    var kdf: KDFParameters.Level = .moderate

    @Flag(help: "Make the key from a new SEP-5 recovery phrase, shown once to write down.")
    var mnemonic = false

    @Option(help: "Words in the recovery phrase: 12, 15, 18, 21 or 24.")
    var words = 24

    @Option(help: "With --mnemonic, the account to use: m/44'/148'/N'.")
    var account: UInt32 = 0

    @Flag(help: "With --mnemonic, print the phrase even when standard output is not a terminal.")
    var printPhrase = false

    func validate() throws {
        if mnemonic && importSeed { throw ValidationError("Use --mnemonic or --import, not both; to restore a phrase use 'keystore recover'.") }
        if mnemonic && !Mnemonic.wordCounts.contains(words) { throw ValidationError("--words is 12, 15, 18, 21 or 24.") }
        if mnemonic && identity.json { throw ValidationError("--json is not offered with --mnemonic: the phrase is for a person to write down.") }
    }

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        if store.exists(name) && !replace { throw VaultError.alreadyExists(name: name.rawValue) }
        if mnemonic && !printPhrase && isatty(STDOUT_FILENO) == 0 { throw CLIError.phraseToNonTerminal }
        var phrase: Mnemonic?
        var root: (root: AccountRoot, account: UInt32)?
        let keyPair: KeyPair
        if mnemonic {
            let generated = try Mnemonic.generate(wordCount: words)
            let accounts = AccountRoot(bip39Seed: try generated.seed())
            keyPair = try accounts.keyPair(account: account)
            (phrase, root) = (generated, (accounts, account))
        } else {
            keyPair = importSeed ? try readSeed() : KeyPair.random()
        }
        let vault = try Vault.seal(keyPair, root: root, name: name, pin: pin.readNew(), kdf: kdf.parameters)
        let backup = try store.create(vault, replacing: replace)
        if let phrase {
            // Shown only once the vault is safely written, so that a failure cannot leave a phrase for no key.
            Console.warn("your recovery phrase follows: write it down and keep it offline; anyone who has it has the key")
            phrase.phrase.withUnsafeBytes { Console.write($0, to: STDOUT_FILENO) }
            Console.write(Array("\n".utf8), to: STDOUT_FILENO)
        }
        identity.keystore.warnAboutPermissions(of: store, name)
        if identity.json {
            try Console.printJSON(IdentityReport(
                name: name.rawValue, address: keyPair.publicKey.accountID, path: store.path(of: name), backup: backup))
        } else {
            if let backup { Console.warn("the previous vault was kept as \(backup)") }
            Console.print(keyPair.publicKey.accountID)
        }
    }

    private func readSeed() throws -> KeyPair {
        let line = isatty(STDIN_FILENO) != 0
            ? try SecretInput.prompt("Secret seed (S…): ", asking: "the secret seed", instead: "standard input")
            : try SecretInput.line(from: STDIN_FILENO, describing: "standard input")
        do {
            return try KeyPair(secretSeed: SecretInput.trimmingSpaces(line))
        } catch let error as StrKeyError {
            throw ImportError(reason: error.message)
        }
    }

    /// The seed's own error, restated so that it cannot be mistaken for a PIN problem.
    struct ImportError: KeystoreError {
        let reason: String
        var message: String { "The imported secret seed is not valid: \(reason)" }
        var exitStatus: ExitStatus { .invalidInput }
    }
}

struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open an identity with its PIN and print its address.",
        discussion: """
            With --session, also start a signed-in session and print a shell line that sets KEYSTORE_SESSION:             eval "$(keystore login --session)". While it lasts, sign and sign-message need no PIN.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Start a signed-in session for scripts.")
    var session = false

    @Option(help: ArgumentHelp("How long the session lasts, up to 24h, with a unit: e.g. 90s, 15m, 8h, 1h30m.", valueName: "duration"))
    var ttl: SessionDuration = SessionDuration(seconds: SessionStore.defaultTTL)

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        _ = try identity.vaultReadyForPIN(in: store, name)
        let keyPair = try store.unlock(name, pin: pin.read())
        if session {
            let sessions = SessionStore.currentUser
            let token = try sessions.open(keyPair, for: identity.sessionIdentity(), ttl: ttl.seconds)
            if identity.json {
                struct Output: Encodable { let name, address, token: String; let expiresIn: Int }
                try Console.printJSON(Output(name: name.rawValue, address: keyPair.publicKey.accountID,
                                             token: token.stringValue, expiresIn: ttl.seconds))
            } else {
                Console.print("export \(SigningKeyOptions.sessionVariable)=\(token.stringValue)")
                Console.note("signed in as \(name.rawValue) (\(keyPair.publicKey.accountID)) for \(ttl)")
            }
            return
        }
        if identity.json {
            try Console.printJSON(IdentityReport(name: name.rawValue, address: keyPair.publicKey.accountID))
        } else {
            Console.print(keyPair.publicKey.accountID)
        }
    }
}

struct ChangePIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-pin",
        abstract: "Re-encrypt an identity under a new PIN, with a new salt and nonce.",
        discussion: """
            The current PIN comes as for login; the new one is asked twice on the terminal, or read once from \
            --new-pin-file or --new-pin-fd.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Option(help: ArgumentHelp("Read the new PIN from the first line of a file.", valueName: "path"))
    var newPinFile: String?

    @Option(help: ArgumentHelp("Read the new PIN from the first line of an open file descriptor.", valueName: "n"))
    var newPinFd: Int32?

    @Option(help: "Argon2id cost for the new encryption (default: keep the current one).")
    var kdf: KDFParameters.Level?

    func validate() throws {
        if newPinFile != nil && newPinFd != nil { throw ValidationError("Use only one of --new-pin-file or --new-pin-fd.") }
    }

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        let seen = try identity.vaultReadyForPIN(in: store, name)
        let current = try pin.read(prompt: "Current PIN: ")
        let new: PIN
        if let newPinFile {
            new = try PIN(SecretInput.line(fromFile: newPinFile))
            try new.checkStrength()
        } else if let newPinFd {
            new = try PIN(SecretInput.line(from: newPinFd, describing: "descriptor \(newPinFd)"))
            try new.checkStrength()
        } else {
            // A person who mistyped the current PIN should hear so before choosing a new one.
            if pin.isInteractive { _ = try store.unlock(name, pin: current) }
            new = try PINOptions.promptNew("New PIN (6 digits): ", instead: "--new-pin-file or --new-pin-fd")
        }
        let vault = try store.changePIN(name, from: current, to: new, kdf: kdf?.parameters, expecting: seen)
        if identity.json {
            try Console.printJSON(IdentityReport(
                name: name.rawValue, address: vault.publicKey.accountID, path: store.path(of: name)))
        } else {
            Console.print("PIN changed for \(name.rawValue) (\(vault.publicKey.accountID))")
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the secret seed (S…) of an identity, for a backup.",
        discussion: "Refuses to write the seed to a pipe or a file unless --force is given.")

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Write the seed even when standard output is not a terminal.")
    var force = false

    func run() throws {
        guard force || isatty(STDOUT_FILENO) != 0 else { throw CLIError.seedToNonTerminal }
        let store = try identity.store()
        let name = try identity.identity()
        _ = try identity.vaultReadyForPIN(in: store, name)
        let keyPair = try store.unlock(name, pin: pin.read())
        Console.warn("""
            this is the secret seed of \(keyPair.publicKey.accountID): anyone who sees it controls the account. \
            Keep it offline.
            """)
        // Written piece by piece so that the seed never becomes a Swift String, which could not be zeroed.
        let seed = keyPair.secretSeedStrKey()
        let (before, after) = identity.json
            ? ("{\"address\":\"\(keyPair.publicKey.accountID)\",\"name\":\"\(name.rawValue)\",\"secretSeed\":\"", "\"}\n")
            : ("", "\n")
        Console.write(Array(before.utf8), to: STDOUT_FILENO)
        seed.withUnsafeBytes { Console.write($0, to: STDOUT_FILENO) }
        Console.write(Array(after.utf8), to: STDOUT_FILENO)
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the identities in the keystore with their addresses, and their backups (no PIN needed).",
        discussion: """
            One line per identity, NAME<tab>ADDRESS, then one per backup kept by --replace, \
            NAME (backup FILE)<tab>ADDRESS: a backup is the old key under its old PIN.
            """)

    @OptionGroup var keystore: HomeOptions

    func run() throws {
        let store = try keystore.store()
        keystore.warnAboutPermissions(of: store, nil)
        let backups = try store.backups()
        let names = Set(try store.names()).union(backups.map(\.name)).sorted()
        let reports = names.map { name in
            var report = IdentityReport(name: name.rawValue)
            do {
                report.address = try store.vault(named: name).publicKey.accountID
            } catch VaultError.notFound {
                report.error = "removed; only its backups remain"
            } catch {
                report.error = (error as? KeystoreError)?.message ?? "\(error)"
            }
            let own = backups.filter { $0.name == name }
            if !own.isEmpty {
                report.backups = own.map { backup in
                    do {
                        return BackupReport(file: backup.fileName, address: try store.vault(in: backup).publicKey.accountID)
                    } catch {
                        return BackupReport(file: backup.fileName, error: (error as? KeystoreError)?.message ?? "\(error)")
                    }
                }
            }
            return report
        }
        if keystore.json {
            struct Listing: Encodable { let directory: String; let identities: [IdentityReport] }
            try Console.printJSON(Listing(directory: store.directory, identities: reports))
            return
        }
        if reports.isEmpty { Console.note("no identities in \(store.directory); create one with: keystore signup") }
        for report in reports {
            Console.print("\(report.name)\t\(report.address ?? "(cannot be read: \(report.error ?? "it is missing"))")")
            for backup in report.backups ?? [] {
                Console.print("\(report.name) (backup \(backup.file))\t\(backup.address ?? "(cannot be read: \(backup.error ?? ""))")")
            }
        }
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete an identity, after its PIN (or --force).")

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Delete without asking for the PIN.")
    var force = false

    @Flag(help: "Also delete the identity's backups (NAME.vault.backup-…: old keys under old PINs).")
    var backups = false

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        if !force { _ = try identity.vaultReadyForPIN(in: store, name) }
        let removal = try store.remove(name, pin: force ? nil : pin.read(), includingBackups: backups)
        let address = removal.vault?.publicKey.accountID ?? "backups only"
        if identity.json {
            struct Output: Encodable { let name, address: String; let removedBackups, keptBackups: [String] }
            try Console.printJSON(Output(name: name.rawValue, address: address,
                                         removedBackups: removal.removedBackups.map(\.fileName),
                                         keptBackups: removal.keptBackups.map(\.fileName)))
            return
        }
        Console.print("Removed \(name.rawValue) (\(address))" + (removal.removedBackups.isEmpty ? "" : " and \(removal.removedBackups.count) backup(s)"))
        if !removal.keptBackups.isEmpty {
            Console.warn("""
                \(removal.keptBackups.count) backup(s) of \(name.rawValue) remain, each an old key under an old PIN: \
                \(removal.keptBackups.map(\.fileName).joined(separator: ", ")); delete them with 'keystore remove --backups --force --name \(name.rawValue)'
                """)
        }
    }
}

struct Address: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the address (G…) of an identity (no PIN needed).",
        aliases: ["whoami"])

    @OptionGroup var identity: IdentityOptions

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        let address = try store.vault(named: name).publicKey.accountID
        if identity.json {
            try Console.printJSON(IdentityReport(name: name.rawValue, address: address))
        } else {
            Console.print(address)
        }
    }
}
