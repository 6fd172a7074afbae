import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

/// What a mnemonic command prints with `--json`. The phrase is never in it.
struct AccountReport: Encodable {
    let name: String
    let address: String
    let account: UInt32
}

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        _superCommandName: KeystoreCommand.name,
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
        let keystore = try identity.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout)
        let name = try identity.identity()
        try keystore.refuseExisting(name, replacing: replace)
        if tpm { try TPMNotice.checkAndWarn(keystore, keyFromPhrase: true) }
        let mnemonic = try Self.readPhrase()
        let secret = passphrase ? try SecretInput.line(prompting: "BIP39 passphrase: ", asking: "the passphrase") : nil
        let created = try keystore.recover(name: name, phrase: mnemonic, passphrase: secret, account: account,
                                           kdf: kdf, replacing: replace, boundToTPM: tpm) {
            try pin.readNew()
        }
        KDFOptions.sayWhatAutoChose(kdf, keystore)
        GPUEstimate.sayWhatACopyIsWorth(name, in: keystore)
        if let backup = created.backup { Console.warn("the previous vault was kept as \(backup)") }
        try AccountReport.print(name: name, address: created.key.shown, account: account, json: identity.json)
    }

    /// A person gets this many tries at each kind of mistake: a word not in the list, a phrase that does not add up.
    static let phraseTries = 3

    /// The phrase, from standard input, or from the terminal where one typo does not end the command: a word not
    /// in the list is asked again by itself, and a phrase whose checksum fails is asked again whole.
    static func readPhrase() throws -> Mnemonic {
        var text = try SecretInput.line(prompting: "Recovery phrase: ", asking: "the recovery phrase")
        guard isatty(STDIN_FILENO) != 0 else {
            // Nearest words for a typo only for a person watching: elsewhere the line lands in a log, and the
            // nearest word is usually the secret word itself.
            return try Mnemonic(text, offeringCorrections: isatty(STDERR_FILENO) != 0)
        }
        var wordTries = 1, phraseTries = 1
        while true {
            do {
                return try Mnemonic(text, offeringCorrections: true)
            } catch MnemonicError.unknownWord(let position, let suggestions) where wordTries < Self.phraseTries {
                SecretInput.tell(MnemonicError.unknownWord(position: position, suggestions: suggestions).message)
                let word = SecretInput.trimmingSpaces(try SecretInput.prompt("Word \(position): ", asking: "the word", instead: "standard input"))
                guard let corrected = Mnemonic.replacingWord(at: position, in: text, with: word) else { throw MnemonicError.badChecksum }
                text = corrected
                wordTries += 1
            } catch let error as MnemonicError where error != .accountOutOfRange && phraseTries < Self.phraseTries {
                if case .unknownWord = error { throw error }
                SecretInput.tell(error.message + " Type the whole phrase again.")
                text = try SecretInput.line(prompting: "Recovery phrase: ", asking: "the recovery phrase")
                phraseTries += 1
            }
        }
    }
}

struct Derive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        _superCommandName: KeystoreCommand.name,
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
        let created = try identity.keystore().derive(
            name: name, account: account, addingAs: add.map { try IdentityName($0) }, pin: { try pin.read() })
        if add != nil {
            Console.note("added identity \(created.name.rawValue) (\(created.key.shown)): account \(account) of \(name.rawValue)'s recovery phrase, under the same PIN")
        }
        try AccountReport.print(name: created.name, address: created.key.shown, account: account, json: identity.json)
    }
}

extension AccountReport {
    static func print(name: IdentityName, address: String, account: UInt32, json: Bool) throws {
        try Console.printAnswer(json: json, AccountReport(name: name.rawValue, address: address, account: account), else: address)
    }
}
