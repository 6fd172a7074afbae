import ArgumentParser
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

/// What the vault commands print with `--json`. Never holds a secret (`export` writes its own).
extension AuthorizationSigner.Key {
    /// What a command prints for a key: an Ed25519 key's G… address, or a P-256 key's public key in hex, which is
    /// what a smart account registers (it has no address).
    var shown: String {
        switch self {
        case .ed25519(let publicKey): publicKey.accountID
        case .p256(let publicKey): Hex.string(publicKey.point)
        }
    }
}

struct IdentityReport: Encodable {
    var name: String
    var address: String?
    var path: String?
    var backup: String?
    var error: String?
    /// `list`: the identity's backups (old vaults kept by `--replace`), each an old key under an old PIN.
    var backups: [BackupReport]?
    /// `list`, `signup`, `recover`, `bind`, `unbind`: whether the vault needs this machine's TPM too.
    var tpm: Bool?
    /// `list`, `signup --pkcs11`: where the key is: `vault` (sealed in the file, with `tpm` saying whether the
    /// TPM is needed too) or `pkcs11` (in a token, which signs).
    var keySource: String?
    /// `list`, `signup --tpm --p256`: a P-256 key's 65-byte public key, in hex.
    var p256PublicKey: String?
    /// `list` (and `status`, per session): whether a backup (`keystore backup`) made since the key last changed holds it.
    var inBackup: Bool? = nil
}

extension IdentityReport {
    /// A key as `signup` and `login` report it: an Ed25519 key's address (`pkcs11` its source when a token holds
    /// it), or a P-256 key in the TPM, which has no address.
    init(name: IdentityName, key: AuthorizationSigner.Key, inToken: Bool) {
        self.init(name: name.rawValue)
        switch key {
        case .ed25519(let publicKey): (address, keySource) = (publicKey.accountID, inToken ? "pkcs11" : nil)
        case .p256(let publicKey): (tpm, keySource, p256PublicKey) = (true, "tpm-p256", Hex.string(publicKey.point))
        }
    }
}

struct BackupReport: Encodable {
    var file: String
    var address: String?
    var error: String?
}

struct Signup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        _superCommandName: KeystoreCommand.name,
        abstract: "Create an identity: a new key, or an imported one, encrypted under a 6-digit PIN.",
        discussion: """
            Prints the new G… address. The PIN is asked twice on the terminal, or read once with --pin-stdin, \
            --pin-file or --pin-fd. With --import the S… seed is read from the first line of standard input \
            (or asked on the terminal); with --import --pin-stdin the PIN is the second line. \
            With --pkcs11 the key is made (or, with --existing, found) inside a PKCS#11 token and never leaves it: \
            the PIN is then the token's own user PIN, read once. With --tpm --p256 a NIST P-256 key is made inside \
            this machine's TPM for a smart account to register; it prints that key, not an address.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(name: .customLong("import"), help: "Import an existing secret seed (S…) instead of generating a key.")
    var importSeed = false

    @Flag(help: "Replace an existing identity; its old vault is kept as NAME.vault.backup-….")
    var replace = false

    @Option(help: "Argon2id cost: auto (the strongest this machine unlocks within 1 s), interactive, moderate or sensitive.")
    var kdf: KDFChoice = .auto

    @Flag(help: "Make the key from a new SEP-5 recovery phrase, shown once to write down.")
    var mnemonic = false

    @Option(help: "Words in the recovery phrase: 12, 15, 18, 21 or 24.")
    var words = 24

    @Option(help: "With --mnemonic, the account to use: m/44'/148'/N'.")
    var account: UInt32 = 0

    @Flag(help: "With --mnemonic, print the phrase even when standard output is not a terminal.")
    var printPhrase = false

    @Flag(help: "Bind the vault to this machine's TPM 2.0: a copied file is useless, and the TPM limits PIN guesses.")
    var tpm = false

    @OptionGroup var openLockout: OpenLockoutOption

    @Option(help: ArgumentHelp("Keep the key in a PKCS#11 token (an HSM, a YubiKey, SoftHSM2), through this module: its absolute path.",
                               valueName: "module"))
    var pkcs11: String?

    @Option(name: .customLong("token"), help: ArgumentHelp("With --pkcs11, the token's label (default: the module's only token that signs Ed25519).",
                                                           valueName: "label"))
    var tokenLabel: String?

    @Option(help: ArgumentHelp("With --pkcs11, the key's label in the token (default: the identity's name).", valueName: "label"))
    var keyLabel: String?

    @Option(help: ArgumentHelp("With --pkcs11 --existing, the key's id (CKA_ID) as hex.", valueName: "hex"))
    var keyId: String?

    @Flag(help: "With --pkcs11, use a key already in the token, found by --key-label or --key-id, instead of making one.")
    var existing = false

    @Flag(help: "With --tpm, make a NIST P-256 key inside the TPM instead: it never leaves it, and signs only as a smart account's signer (prints its 65-byte public key in hex).")
    var p256 = false

    func validate() throws {
        if pkcs11 == nil && (tokenLabel != nil || keyLabel != nil || keyId != nil || existing) {
            throw ValidationError("--token, --key-label, --key-id and --existing go with --pkcs11.")
        }
        if pkcs11 != nil && (importSeed || mnemonic || tpm) {
            throw ValidationError("A key in a token is made in the token: --pkcs11 goes without --import, --mnemonic or --tpm.")
        }
        if p256 && (!tpm || importSeed || mnemonic) {
            throw ValidationError("--p256 makes a key inside the TPM: it goes with --tpm, and without --import or --mnemonic.")
        }
        if keyId != nil && !existing { throw ValidationError("--key-id finds a key already in the token: give --existing too.") }
        if existing && keyLabel == nil && keyId == nil { throw ValidationError("--existing needs --key-label or --key-id to find the key.") }
        if let keyId, Hex.bytes(keyId)?.isEmpty ?? true { throw ValidationError("--key-id is the key's id as hex, e.g. 01 or a1b2c3.") }
        if mnemonic && importSeed { throw ValidationError("Use --mnemonic or --import, not both; to restore a phrase use 'keystore recover'.") }
        if mnemonic && !Mnemonic.wordCounts.contains(words) { throw ValidationError("--words is 12, 15, 18, 21 or 24.") }
        if mnemonic && identity.json { throw ValidationError("--json is not offered with --mnemonic: the phrase is for a person to write down.") }
        try openLockout.validate(binding: tpm)
    }

    func run() throws {
        let keystore = try identity.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout)
        let name = try identity.identity()
        try keystore.refuseExisting(name, replacing: replace)
        let created = try keystore.signUp(name: name, kdf: kdf, key: try newKey(name, keystore: keystore), replacing: replace,
                                          boundToTPM: tpm) { try pin.readNew($0) }
        if let key = created.token {
            Console.note("\(created.foundInToken ? "found" : "made") key \"\(TerminalText.escaped(key.keyLabel))\" (id \(Hex.string(key.keyID))) in \(key.tokenDescription): \(key.publicKey.accountID)")
        } else if !p256 {
            KDFOptions.sayWhatAutoChose(kdf, keystore)
            GPUEstimate.sayWhatACopyIsWorth(name, in: keystore)
        }
        if let phrase = created.phrase {
            Console.warn("your recovery phrase follows: write it down and keep it offline; anyone who has it has the key")
            Console.printSecret(phrase.phrase)
        }
        var report = IdentityReport(name: name, key: created.key, inToken: created.token != nil)
        (report.path, report.backup, report.tpm) = (created.path, created.backup, tpm)
        if !identity.json {
            if let backup = created.backup { Console.warn("the previous vault was kept as \(backup)") }
            if p256 { Console.note("register it on the smart account as External(webauthn verifier, this key), or with a verifier that checks secp256r1") }
        }
        try Console.printAnswer(json: identity.json, report, else: created.key.shown)
    }

    /// The key to make, in a token, in the TPM or sealed in the vault, after what is said and checked before any
    /// PIN is asked.
    private func newKey(_ name: IdentityName, keystore: Keystore) throws -> Keystore.NewKey {
        if let pkcs11 {
            return .inToken(module: pkcs11, token: tokenLabel,
                            key: existing ? .existing(label: keyLabel, id: keyId.flatMap(Hex.bytes)) : .new(label: keyLabel ?? name.rawValue))
        }
        if p256 {
            // Said before the PIN, as for any TPM binding: on an open lockout the TPM does not limit guesses.
            TPMNotice.warnIfOpen(try keystore.checkTPMReadyToBind())
            Console.warn("the key is made inside this machine's TPM and can never leave it: if the machine dies, is replaced or its TPM is cleared, the key is gone; register another signer on the smart account too")
            return .p256InTPM
        }
        if mnemonic { try CLIError.refuseNonTerminal(for: "a recovery phrase", unless: printPhrase, instead: "run in a terminal, or add --print-phrase.") }
        if tpm { try TPMNotice.checkAndWarn(keystore, keyFromPhrase: mnemonic) }
        // The seed first: with --pin-stdin it is the first line.
        return mnemonic ? .phrase(words: words, account: account) : importSeed ? .imported(try readSeed()) : .random
    }

    private func readSeed() throws -> KeyPair {
        let line = try SecretInput.line(prompting: "Secret seed (S…): ", asking: "the secret seed")
        do {
            return try KeyPair(secretSeed: SecretInput.trimmingSpaces(line))
        } catch let error as StrKeyError {
            throw CLIError.invalidImportedSeed(reason: error.message)
        }
    }
}

struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        _superCommandName: KeystoreCommand.name,
        abstract: "Open an identity with its PIN and print its address.",
        discussion: """
            With --session, also start a signed-in session and print a shell line that sets KEYSTORE_SESSION, \
            for eval "$(keystore login --session)". While it lasts, sign and sign-message need no PIN; end it with \
            eval "$(keystore logout)". \
            With --agent, hand the opened key to the signing agent (KEYSTORE_AGENT, else the default socket; see \
            `keystore agent`), which then signs for it without a PIN until --ttl, the agent's own limits, \
            `agent remove`, `agent lock` or its end.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Start a signed-in session for scripts.")
    var session = false

    @Flag(help: "Hand the key to the signing agent.")
    var agent = false

    // A transform, so that a bad value is told what is wrong with it; argument-parser then shows no default itself.
    @Option(help: ArgumentHelp("How long the session (or the agent's copy) lasts, up to 24h, with a unit: e.g. 90s, 15m, 8h, 1h30m. (default: \(SessionDuration(seconds: SessionStore.defaultTTL)); with --agent, the agent's limits)",
                               valueName: "duration"),
            transform: SessionDuration.parse)
    var ttl: SessionDuration?

    func validate() throws {
        if session && agent { throw ValidationError("Give --session or --agent, not both.") }
    }

    func run() throws {
        let keystore = try identity.keystore()
        let name = try identity.identity()
        // An agent that is not there is said before the PIN, not after it was typed for nothing.
        let agentClient = agent ? AgentClient(socketPath: try AgentSocketOptions.path(nil)) : nil
        if let agentClient { _ = try agentClient.status() }
        guard session else { return try logIn(name, keystore: keystore, agent: agentClient) }
        // A session holds a seed: the library refuses, before any PIN, a key that has none.
        let ttl = ttl ?? SessionDuration(seconds: SessionStore.defaultTTL)
        let token = try keystore.startSession(name: name, ttl: .seconds(ttl.seconds)) { try pin.read() }
        noteIfWeak(name, keystore: keystore)
        let address = try keystore.address(of: name)
        if identity.json {
            struct Output: Encodable { let name, address, token: String; let expiresIn: Int }
            try Console.printJSON(Output(name: name.rawValue, address: address, token: token.stringValue, expiresIn: ttl.seconds))
        } else {
            Console.print("export \(SigningKeyOptions.sessionVariable)=\(token.stringValue)")
            Console.note("signed in as \(name.rawValue) (\(address)) for \(ttl)")
            // Typed bare at a prompt, the line above is only shown: the shell itself is not signed in.
            if isatty(STDOUT_FILENO) != 0 {
                Console.note("this shell does not have the session yet: run eval \"$(keystore login --session)\" to set \(SigningKeyOptions.sessionVariable), or paste the export line above")
            }
        }
    }
}

extension Login {
    /// Without a session: the key's PIN tried (the token's for a key in a token), and with --agent the key handed
    /// to the agent, which opens a token's or a TPM's key itself. What is printed is the key's: an address, or a
    /// P-256 key's public key, which has no address.
    private func logIn(_ name: IdentityName, keystore: Keystore, agent: AgentClient?) throws {
        let opened = try agent.map { try keystore.addToAgent(name: name, client: $0, ttl: ttl.map { .seconds($0.seconds) }, pin: { try pin.read($0) }) }
            ?? keystore.logIn(name: name, pin: { try pin.read($0) })
        noteIfWeak(name, keystore: keystore)
        let shown = opened.key.shown
        if let agent {
            let who = if case .p256 = opened.key { "P-256 key" } else { shown }
            let tokenNote = opened.token.map { ", logged in to \($0.tokenDescription)" } ?? ""
            Console.note("\(name.rawValue) (\(who)) is in the agent at \(agent.socketPath)\(tokenNote)\(ttl.map { " for \($0)" } ?? "")")
        }
        try Console.printAnswer(json: identity.json, IdentityReport(name: name, key: opened.key, inToken: opened.token != nil), else: shown)
    }

    private func noteIfWeak(_ name: IdentityName, keystore: Keystore) {
        if keystore.isWeakerThanThisMachineAffords(name) == true, let level = keystore.calibration()?.level {
            Console.note("\(name.rawValue)'s vault is cheaper to attack than this machine affords (\(level.rawValue)); 'keystore upgrade --name \(name.rawValue)' re-encrypts it under the same PIN")
        }
    }
}

struct ChangePIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-pin",
        _superCommandName: KeystoreCommand.name,
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

    @Option(help: "Argon2id cost for the new encryption: auto, interactive, moderate or sensitive (default: keep the current one).")
    var kdf: KDFChoice?

    func validate() throws {
        if newPinFile != nil && newPinFd != nil { throw ValidationError("Use only one of --new-pin-file or --new-pin-fd.") }
    }

    func run() throws {
        let keystore = try identity.keystore()
        let name = try identity.identity()
        let scripted = newPinFile != nil || newPinFd != nil
        let vault = try keystore.changePIN(
            name: name, kdf: kdf, checkingCurrentFirst: !scripted && pin.isInteractive,
            from: { try pin.read(prompt: "Current PIN: ") },
            to: {
                if let newPinFile { return try PIN(SecretInput.line(fromFile: newPinFile)) }
                if let newPinFd { return try PIN(SecretInput.line(from: newPinFd, describing: "descriptor \(newPinFd)")) }
                return try PINOptions.promptNew("New PIN (6 digits): ", instead: "--new-pin-file or --new-pin-fd")
            })
        if let kdf { KDFOptions.sayWhatAutoChose(kdf, keystore) }
        try Console.printAnswer(json: identity.json,
                                IdentityReport(name: name.rawValue, address: vault.publicKey.accountID, path: keystore.vaults.path(of: name)),
                                else: "PIN changed for \(name.rawValue) (\(vault.publicKey.accountID))")
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        _superCommandName: KeystoreCommand.name,
        abstract: "Print the secret seed (S…) of an identity, for a backup.",
        discussion: "Refuses to write the seed to a pipe or a file unless --force is given.")

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Write the seed even when standard output is not a terminal.")
    var force = false

    func run() throws {
        try CLIError.refuseNonTerminal(for: "the secret seed", unless: force, instead: "add --force if that is really what you want.")
        let name = try identity.identity()
        let signer = try identity.keystore().signIn(name: name, for: .export) { try pin.read() }
        Console.warn("""
            this is the secret seed of \(signer.address): anyone who sees it controls the account. \
            Keep it offline.
            """)
        let (opening, closing) = identity.json
            ? ("{\"address\":\"\(signer.address)\",\"name\":\"\(name.rawValue)\",\"secretSeed\":\"", "\"}\n") : ("", "\n")
        Console.printSecret(signer.exportSecretSeed(), opening: opening, closing: closing)
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        _superCommandName: KeystoreCommand.name,
        abstract: "List the identities in the keystore with their addresses, and their backups (no PIN needed).",
        discussion: """
            One line per identity, NAME<tab>ADDRESS, with a third column 'tpm' for a vault bound to this \
            machine's TPM, or 'pkcs11' for a key in a PKCS#11 token; a P-256 key in the TPM, which has no \
            address, as NAME<tab>PUBLIC-KEY-HEX<tab>tpm-p256; then one per backup kept by --replace, NAME (backup FILE)<tab>ADDRESS: a backup is the \
            old key under its old PIN.
            """)

    @OptionGroup var keystore: HomeOptions

    func run() throws {
        let store = try keystore.keystore()
        let identities = try store.identities()
        let reports = identities.map { identity in
            IdentityReport(name: identity.name.rawValue, address: identity.address, error: identity.problem,
                           backups: identity.backups.isEmpty ? nil : identity.backups.map {
                               BackupReport(file: $0.fileName, address: $0.address, error: $0.problem)
                           }, tpm: identity.address == nil ? nil : identity.isTPMBound,
                           keySource: identity.p256PublicKey != nil ? "tpm-p256" : identity.address == nil ? nil : identity.token != nil ? "pkcs11" : "vault",
                           p256PublicKey: identity.p256PublicKey.map { Hex.string($0.point) },
                           inBackup: identity.problem == nil ? identity.isInBackup : nil)
        }
        if keystore.json {
            struct Listing: Encodable { let directory: String; let identities: [IdentityReport] }
            try Console.printJSON(Listing(directory: store.directory, identities: reports))
            return
        }
        if reports.isEmpty { Console.note("no identities in \(store.directory); create one with: keystore signup") }
        for report in reports {
            if let key = report.p256PublicKey {
                Console.print("\(report.name)\t\(key)\ttpm-p256")
                continue
            }
            Console.print("\(report.name)\t\(report.address ?? "(cannot be read: \(report.error ?? "it is missing"))")"
                          + (report.tpm == true ? "\ttpm" : "") + (report.keySource == "pkcs11" ? "\tpkcs11" : ""))
            for backup in report.backups ?? [] {
                Console.print("\(report.name) (backup \(backup.file))\t\(backup.address ?? "(cannot be read: \(backup.error ?? ""))")")
            }
        }
        let missing = reports.filter { $0.inBackup == false }
        // A key that never leaves its token or TPM is in no backup, and no backup can hold it: said apart.
        let inHardware = missing.filter { $0.keySource == "pkcs11" || $0.keySource == "tpm-p256" }.map(\.name)
        Self.noteInNoBackup(missing.map(\.name).filter { !inHardware.contains($0) }, inHardware: inHardware)
    }

    /// The notes of `list` and `status`: the identities whose key no backup made since it last changed holds, and
    /// apart, those whose key never leaves its hardware, which no backup can hold.
    static func noteInNoBackup(_ names: [String], inHardware: [String] = []) {
        if !names.isEmpty {
            Console.note("in no backup made since its key last changed: \(names.joined(separator: ", ")) (keystore backup)")
        }
        if !inHardware.isEmpty {
            Console.note("in no backup, as no backup can hold a key that never leaves its hardware: \(inHardware.joined(separator: ", ")) (add a second signer, or keep the token's own backup)")
        }
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        _superCommandName: KeystoreCommand.name,
        abstract: "Delete an identity, after its PIN (or --force).")

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Delete without asking for the PIN.")
    var force = false

    @Flag(help: "Also delete the identity's backups (NAME.vault.backup-…: old keys under old PINs).")
    var backups = false

    func run() throws {
        let name = try identity.identity()
        let removal = try identity.keystore().remove(name: name, pin: force ? nil : { try pin.read() }, includingBackups: backups)
        let address = removal.key?.description ?? "backups only"
        struct Output: Encodable { let name, address: String; let removedBackups, keptBackups: [String] }
        try Console.printAnswer(json: identity.json,
                                Output(name: name.rawValue, address: address, removedBackups: removal.removedBackups.map(\.fileName),
                                       keptBackups: removal.keptBackups.map(\.fileName)),
                                else: "Removed \(name.rawValue) (\(address))" + (removal.removedBackups.isEmpty ? "" : " and \(removal.removedBackups.count) backup(s)"))
        if !identity.json && !removal.keptBackups.isEmpty {
            Console.warn("""
                \(removal.keptBackups.count) backup(s) of \(name.rawValue) remain, each an old key under an old PIN: \
                \(removal.keptBackups.map(\.fileName).joined(separator: ", ")); delete them with 'keystore remove --backups --force --name \(name.rawValue)'
                """)
        }
    }
}

struct Address: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "address",
        _superCommandName: KeystoreCommand.name,
        abstract: "Print the address (G…) of an identity (no PIN needed).",
        aliases: ["whoami"])

    @OptionGroup var identity: IdentityOptions

    func run() throws {
        let name = try identity.identity()
        let address = try identity.keystore().address(of: name)
        try Console.printAnswer(json: identity.json, IdentityReport(name: name.rawValue, address: address), else: address)
    }
}

struct Upgrade: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        _superCommandName: KeystoreCommand.name,
        abstract: "Re-encrypt an identity under the same PIN at the cost this machine affords (or --kdf).",
        discussion: """
            For a vault made on a slower machine or with a lighter --kdf: after its PIN, the seed is encrypted \
            again with new salt and nonce at the strongest Argon2id level this machine unlocks within a second \
            (measured once per keystore), atomically. Its sessions end.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Option(help: "Argon2id cost: auto, interactive, moderate or sensitive.")
    var kdf: KDFChoice = .auto

    func run() throws {
        let keystore = try identity.keystore()
        let name = try identity.identity()
        let (vault, level, changed) = try keystore.upgrade(name: name, to: kdf) { try pin.read() }
        struct Output: Encodable { let name, address, kdf: String; let changed: Bool }
        try Console.printAnswer(json: identity.json, Output(name: name.rawValue, address: vault.publicKey.accountID, kdf: level.rawValue, changed: changed),
                                else: changed ? "\(name.rawValue) (\(vault.publicKey.accountID)) is now encrypted at --kdf \(level.rawValue)"
                                    : "\(name.rawValue) (\(vault.publicKey.accountID)) is already encrypted at --kdf \(level.rawValue)\(kdf == .auto ? " or stronger" : ""); nothing was changed")
    }
}
