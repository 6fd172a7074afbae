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

    @Option(help: "Argon2id cost: auto (the strongest this machine unlocks within 1 s), interactive, moderate or sensitive.")
    var kdf: KDFChoice = .auto

    @Flag(help: "Bind the vault to this machine's TPM 2.0: a copied file is useless, and the TPM limits PIN guesses.")
    var tpm = false

    @OptionGroup var openLockout: OpenLockoutOption

    func validate() throws {
        try openLockout.validate(binding: tpm)
    }

    func run() throws {
        let keystore = try identity.keystore.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout)
        let name = try identity.identity()
        try keystore.refuseExisting(name, replacing: replace)
        if tpm { try TPMNotice.checkAndWarn(keystore) }
        // Nearest words for a typo only for a person watching: elsewhere the line lands in a log, and the
        // nearest word is usually the secret word itself.
        let mnemonic = try Mnemonic(Self.readSecret("Recovery phrase: ", asking: "the recovery phrase"),
                                    offeringCorrections: isatty(STDERR_FILENO) != 0)
        let secret = passphrase ? try Self.readSecret("BIP39 passphrase: ", asking: "the passphrase") : nil
        let newPIN = try pin.readNew()
        let created = try keystore.recover(name: name, phrase: mnemonic, passphrase: secret, account: account,
                                           pin: newPIN, kdf: keystore.level(for: kdf).level, replacing: replace,
                                           boundToTPM: tpm)
        KDFOptions.sayWhatAutoChose(kdf, keystore)
        if let backup = created.backup { Console.warn("the previous vault was kept as \(backup)") }
        try AccountReport.print(name: name, address: created.address, account: account, json: identity.json)
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
        let name = try identity.identity()
        let created = try identity.keystore.keystore().derive(
            name: name, account: account, addingAs: add.map(IdentityName.init), pin: { try pin.read() })
        try AccountReport.print(name: created.name, address: created.address, account: account, json: identity.json)
    }
}

extension AccountReport {
    static func print(name: IdentityName, address: String, account: UInt32, json: Bool) throws {
        if json {
            try Console.printJSON(AccountReport(name: name.rawValue, address: address, account: account))
        } else {
            Console.print(address)
        }
    }
}
