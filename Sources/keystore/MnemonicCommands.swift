import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import StellarKeystore

/// What a mnemonic command prints with `--json`. The phrase is never in it.
struct AccountReport: Encodable {
    let name: String
    let address: String
    let account: UInt32
}

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore an identity from a SEP-5 recovery phrase (BIP39), under a new PIN.",
        discussion: """
            The phrase is asked on the terminal (echo off), or read from the first line of standard input; with \
            --passphrase the BIP39 passphrase is asked next (or is the next line). Then a new PIN, as for signup.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Option(help: "The account to restore: m/44'/148'/N'.")
    var account: UInt32 = 0

    @Flag(help: "The phrase was protected with a BIP39 passphrase; ask for it.")
    var passphrase = false

    @Flag(help: "Replace an existing identity; its old vault is kept as NAME.vault.backup-….")
    var replace = false

    @Option(help: "Argon2id cost: interactive, moderate or sensitive.")
    var kdf: KDFParameters.Level = .moderate

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        if store.exists(name) && !replace { throw VaultError.alreadyExists(name: name.rawValue) }
        // Nearest words for a typo only for a person watching: elsewhere the line lands in a log, and the
        // nearest word is usually the secret word itself.
        let mnemonic = try Mnemonic(Self.readSecret("Recovery phrase: ", asking: "the recovery phrase"),
                                    offeringCorrections: isatty(STDERR_FILENO) != 0)
        let secret = passphrase ? try Self.readSecret("BIP39 passphrase: ", asking: "the passphrase") : nil
        let root = AccountRoot(bip39Seed: try mnemonic.seed(passphrase: secret))
        let keyPair = try root.keyPair(account: account)
        let vault = try Vault.seal(keyPair, root: (root, account), name: name, pin: pin.readNew(), kdf: kdf.parameters)
        let backup = try store.create(vault, replacing: replace)
        if let backup { Console.warn("the previous vault was kept as \(backup)") }
        try AccountReport.print(name: name, keyPair: keyPair, account: account, json: identity.json)
    }

    /// A line from the terminal with echo off when standard input is one, else from standard input.
    static func readSecret(_ prompt: String, asking what: String) throws -> SecureBytes {
        isatty(STDIN_FILENO) != 0
            ? try SecretInput.prompt(prompt, asking: what, instead: "standard input")
            : try SecretInput.line(from: STDIN_FILENO, describing: "standard input")
    }
}

struct Derive: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the address of another account of an identity made from a recovery phrase.",
        discussion: "With --add NAME, also keep that account as identity NAME, under the same PIN and cost.")

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Option(help: "The account: m/44'/148'/N'.")
    var account: UInt32

    @Option(help: ArgumentHelp("Add the account as a new identity with this name.", valueName: "name"))
    var add: String?

    func run() throws {
        let store = try identity.store()
        let name = try identity.identity()
        let newName = try add.map(IdentityName.init)
        if let newName, store.exists(newName) { throw VaultError.alreadyExists(name: newName.rawValue, canReplace: false) }
        let vault = try identity.vaultReadyForPIN(in: store, name)
        guard vault.account != nil else { throw DeriveError.notFromPhrase(name.rawValue) }
        let pin = try pin.read()
        guard let root = try store.unlockWithRoot(name, pin: pin).root else { throw DeriveError.notFromPhrase(name.rawValue) }
        let keyPair = try root.keyPair(account: account)
        if let newName {
            do {
                try store.create(Vault.seal(keyPair, root: (root, account), name: newName, pin: pin, kdf: vault.kdf))
            } catch VaultError.alreadyExists(let name, _) {
                throw VaultError.alreadyExists(name: name, canReplace: false)  // created meanwhile
            }
        }
        try AccountReport.print(name: (newName ?? name), keyPair: keyPair, account: account, json: identity.json)
    }

    enum DeriveError: KeystoreError {
        case notFromPhrase(String)
        var message: String {
            switch self {
            case .notFromPhrase(let name):
                "Identity '\(name)' was not made from a recovery phrase, so it has no other accounts."
            }
        }
        var exitStatus: ExitStatus { .invalidInput }
    }
}

extension AccountReport {
    static func print(name: IdentityName, keyPair: KeyPair, account: UInt32, json: Bool) throws {
        if json {
            try Console.printJSON(AccountReport(name: name.rawValue, address: keyPair.publicKey.accountID, account: account))
        } else {
            Console.print(keyPair.publicKey.accountID)
        }
    }
}
