import FoundationEssentials
import Glibc
import StellarKeys
import StellarTransactions

/// What a backup is encrypted to: never a PIN alone, which one GPU tries through in hours (SECURITY.md).
package enum BackupProtection: Sendable {
    /// A new age X25519 identity made for this backup, returned once (`BackupMade.recoveryKey`) and written nowhere.
    case newRecoveryKey
    /// Age recipients whose identities the person already keeps: X25519 (`age1…`), or a plugin's (`age1NAME1…`,
    /// a YubiKey's through age-plugin-yubikey), which the plugin wraps to (`AgePluginHost`).
    /// `file`: a recipients file's contents, read as age reads one (one a line, `#` comments, LF or CRLF); kept as
    /// secret bytes, since the file given by mistake may be an identity file.
    case recipients([String], file: SecureBytes? = nil)
    /// A new passphrase of ten words from the BIP-39 English list (110 bits), returned once. Only a made one: a
    /// passphrase a person picks cannot be judged strong enough against a GPU, so none is taken.
    case newPassphrase
}

/// What opens a backup.
package enum BackupSecret: Sendable {
    /// The recovery key as shown (`AGE-SECRET-KEY-1…`), spaces and case as typed.
    case recoveryKey(SecureBytes)
    /// An age identity file's text: one or more `AGE-SECRET-KEY-1…` or plugin (`AGE-PLUGIN-NAME-1…`) lines, `#` comments.
    case identityFile(SecureBytes)
    case passphrase(SecureBytes)
}

/// A backup written (`Keystore.backUp`).
package struct BackupMade: Sendable {
    package struct Item: Sendable {
        package let name: IdentityName
        package let key: AuthorizationSigner.Key
        /// Nil when its key is in the backup; else why not and what to do instead.
        package let notInBackup: String?
    }
    package let path: String
    package let items: [Item]
    /// The new recovery key (`BackupProtection.newRecoveryKey`), `AGE-SECRET-KEY-1…` in groups of four, to show once.
    package let recoveryKey: SecureBytes?
    /// The same key as a QR code (version 4, level M) for a terminal: lines of half blocks, light modules lit, so
    /// that a light-on-dark terminal shows it dark on light as scanners expect. It reads as the key without its
    /// spaces, an age identity file's line. Drawn only when read, and as text: read it only to show it, as it is
    /// then in ordinary memory for as long as it is shown.
    package var recoveryKeyQRCode: [String]? {
        guard let recoveryKey else { return nil }
        let spaces = recoveryKey.withUnsafeBytes { $0.reduce(0) { $0 + ($1 == 0x20 ? 1 : 0) } }
        let unspaced = SecureBytes(count: recoveryKey.count - spaces) { output in
            recoveryKey.withUnsafeBytes { bytes in
                var offset = 0
                for byte in bytes where byte != 0x20 { output[offset] = byte; offset += 1 }
            }
        }
        return try? unspaced.withUnsafeBytes { try QRCode(text: String(decoding: $0, as: UTF8.self)) }.terminalLines()
    }
    /// The new passphrase (`BackupProtection.newPassphrase`), to show once.
    package let passphrase: SecureBytes?
}

/// What a restore would do, checked in full before anything is written (`Keystore.planRestore`).
package struct RestorePlan: Sendable {
    package enum Action: Sendable, Equatable {
        /// No identity of that name here: a new vault.
        case add
        /// The same key is here already: nothing to do.
        case alreadyHere
        /// A different key is here, and the restore was asked to replace it (the one here is kept as a vault backup).
        case replace(AuthorizationSigner.Key)
        /// A different key is here: refused unless asked to replace it.
        case differentKeyHere(AuthorizationSigner.Key)
        /// The backup holds only the key's public part (a token's or a TPM's key): the note says what to do.
        case notInBackup(String)
    }
    package struct Item: Sendable {
        package let name: IdentityName
        package let key: AuthorizationSigner.Key
        package let action: Action
        /// Whether the identity was made from a recovery phrase (SEP-5), whose root and account the backup holds.
        package let isFromPhrase: Bool
        package let wasTPMBound: Bool
    }
    /// When the backup was made (ISO 8601, as it says).
    package let created: String
    package let items: [Item]
    let bundle: BackupBundle
}

extension Keystore {
    /// The largest backup file read: the age file's own bound, armored (a third more, and its line breaks).
    package static let largestBackupFile = AgeFile.maximumFileSize / 3 * 4 + AgeFile.maximumFileSize / 48 + (1 << 16)

    /// Backs up `names` (nil: every identity) to a new age file at `path` (mode 0600, written atomically; an
    /// existing file only with `replacing`), encrypted as `protection` says, after each sealed seed's PIN (asked
    /// with the identity's name, checked and counted as for `export`). A key that never leaves its hardware is
    /// named in the backup with what to do instead. A name given twice is backed up once. A plugin's recipient is
    /// checked (its plugin installed) before any PIN is asked; the plugin runs, as `plugins` says, once the bundle is
    /// made, and if it fails nothing is written. The file is read back before it is in place (decrypted with the new
    /// key or passphrase; with recipients, whose identities are not here, its bundle is read as restore reads it).
    /// `deliver` is given the backup once its file is written beside its path, flushed, and before it is renamed
    /// into place: if it throws (the new key could not be shown or saved), the file is removed, any file it would
    /// have replaced stays, and the record is as it was. Once in place, the backup record says these keys are backed
    /// up, in this file; keys it does not hold that the record said were in the file it replaced are no longer said
    /// to be in a backup.
    package func backUp(_ names: [IdentityName]? = nil, protection: BackupProtection, armored: Bool = false, to path: String,
                       replacing: Bool = false, plugins: AgePluginHost = AgePluginHost(), pin: (IdentityName) throws -> PIN,
                       deliver: (BackupMade) throws -> Void = { _ in }) throws -> BackupMade {
        let recipients: [any AgeRecipient]
        var recoveryKey: SecureBytes?, passphrase: SecureBytes?
        var opener: [any AgeIdentity] = []
        switch protection {
        case .newRecoveryKey:
            let identity = AgeX25519Identity.generate()
            recipients = [identity.recipient]
            opener = [identity]
            recoveryKey = identity.grouped
        case .recipients(let given, let file):
            // A recipient that is not one is named by where it was given, never quoted: it may be a secret key.
            func recipient(_ text: String, _ place: BackupError.RecipientPlace) throws -> any AgeRecipient {
                do throws(AgeError) {
                    return try AgeFile.recipient(text, plugins: plugins)
                } catch .pluginNotFound(let name) {
                    throw AgeError.pluginNotFound(name)
                } catch {
                    let upper = text.uppercased()
                    throw BackupError.badRecipient(place, isIdentity: upper.hasPrefix("AGE-SECRET-KEY-1") || upper.hasPrefix("AGE-PLUGIN-"))
                }
            }
            var found = try given.enumerated().map { try recipient($1, .given($0 + 1)) }
            if let file {
                try file.withUnsafeBytes { bytes in
                    for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
                        let line = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
                        if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
                        found.append(try recipient(String(decoding: line, as: UTF8.self), .fileLine(number + 1)))
                    }
                }
            }
            guard !found.isEmpty else { throw BackupError.noRecipient }
            recipients = found
        case .newPassphrase:
            let made = Self.newPassphrase()
            recipients = [AgePassphrase(made)]
            opener = [AgePassphrase(made)]
            passphrase = made
        }
        // The file is written beside itself and renamed over: only ever over a regular file, never a device, a
        // FIFO or a link (as root, a rename over /dev/full would replace the device).
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFREG else {
                throw BackupError.unusableOutput(path: Self.printable(path), reason: "it is \(AtomicFile.kindName(status.st_mode)), not a regular file")
            }
            guard replacing else { throw BackupError.outputExists(path: Self.printable(path)) }
        }
        var seen: Set<IdentityName> = []
        let chosen = try (names ?? vaults.names()).filter { seen.insert($0).inserted }
        guard !chosen.isEmpty else { throw BackupError.empty }
        // Every key is found before any PIN is asked; then each PIN, one identity at a time.
        let keys = try chosen.map { name in
            guard vaults.exists(name) else { throw BackupError.noSuchIdentity(name.rawValue) }
            return try vaults.key(named: name)
        }
        let entries = try keys.map { key in try key.backupEntry(pin: { try pin(key.name) }, in: self) }
        let bundle = BackupBundle(created: Date().formatted(.iso8601), entries: entries)
        let plaintext = bundle.encoded()
        let file = try AgeFile.encrypt(plaintext, to: recipients, armored: armored)
        // Read back as restore would read it: a backup that restore refuses is never put in place.
        _ = try BackupBundle(plaintext: opener.isEmpty ? plaintext : AgeFile.decrypt(file, with: opener))
        let items = entries.map { entry in
            if case .keptElsewhere(_, _, let note) = entry.content {
                BackupMade.Item(name: entry.name, key: entry.key, notInBackup: note)
            } else {
                BackupMade.Item(name: entry.name, key: entry.key, notInBackup: nil)
            }
        }
        let made = BackupMade(path: path, items: items, recoveryKey: recoveryKey, passphrase: passphrase)
        try AtomicFile.write(file, to: path, directory: AtomicFile.directory(of: path), beforeRename: { try deliver(made) })
        // A key that never leaves its hardware is named in the backup but not in it: it stays "in no backup".
        let held = entries.filter { if case .seed = $0.content { true } else { false } }
        try BackupRecord.noteBackedUp(held.map { ($0.name, $0.key) }, at: bundle.created, file: BackupRecord.canonicalPath(path), in: vaults)
        return made
    }

    /// Whether a backup (`backUp`) made since the key of `name` last changed holds it, as the backup record beside the
    /// vaults says: `Entry.isInBackup` for one identity. Nil when there is no such identity or its vault cannot be read.
    package func isInBackup(_ name: IdentityName) -> Bool? {
        guard let key = try? vaults.key(named: name) else { return nil }
        return BackupRecord.isBackedUp(name, key: key.key, in: BackupRecord.read(in: vaults))
    }

    /// What the backup in `file` asks to be opened with: a passphrase, or a key (a recovery key or an identity file).
    package static func asksForPassphrase(_ file: [UInt8]) throws -> Bool {
        try AgeFile.isPassphraseEncrypted(file)
    }

    /// Decrypts the backup in `file` with `secret`, reads it strictly (every address derived again from its seed,
    /// every phrase's account from its root), signs and verifies a probe with every key in memory, and says what
    /// restoring `names` (nil: all) would do beside this keystore. A plugin's identity runs its plugin as `plugins`
    /// says. Writes nothing.
    package func planRestore(_ file: [UInt8], with secret: BackupSecret, names: [IdentityName]? = nil,
                            replacing: Set<IdentityName> = [], plugins: AgePluginHost = AgePluginHost()) throws -> RestorePlan {
        let identities: [any AgeIdentity]
        switch secret {
        case .recoveryKey(let typed): identities = [try AgeX25519Identity(typed: typed)]
        case .identityFile(let text): identities = try AgeFile.identities(inFile: text, plugins: plugins)
        case .passphrase(let passphrase): identities = [AgePassphrase(passphrase)]
        }
        let bundle = try BackupBundle(plaintext: AgeFile.decrypt(file, with: identities))
        var chosen = bundle.entries
        if let names {
            for name in names where !bundle.entries.contains(where: { $0.name == name }) { throw BackupError.noSuchIdentity(name.rawValue) }
            chosen = bundle.entries.filter { names.contains($0.name) }
        }
        let items = try chosen.map { entry in
            guard case .seed(let seed) = entry.content else {
                guard case .keptElsewhere(_, _, let note) = entry.content else { preconditionFailure() }
                return RestorePlan.Item(name: entry.name, key: entry.key, action: .notInBackup(note), isFromPhrase: false, wasTPMBound: false)
            }
            try Self.probe(seed.keyPair, name: entry.name)
            let action: RestorePlan.Action
            if vaults.exists(entry.name) {
                let here = try vaults.key(named: entry.name).key
                action = here == entry.key ? .alreadyHere : replacing.contains(entry.name) ? .replace(here) : .differentKeyHere(here)
            } else {
                action = .add
            }
            return RestorePlan.Item(name: entry.name, key: entry.key, action: action, isFromPhrase: seed.phrase != nil,
                                    wasTPMBound: seed.wasTPMBound)
        }
        return RestorePlan(created: bundle.created, items: items,
                           bundle: BackupBundle(created: bundle.created, entries: chosen))
    }

    /// Restores what `plan` adds or replaces, each under the new PIN `pin` gives (asked once, after every check), at
    /// the cost the identity had if it was chosen and else at `kdf`, bound to this machine's TPM with `boundToTPM`;
    /// each vault written atomically, then opened with the PIN to sign and verify a probe. A different key under
    /// a name here is refused before anything is written, unless the plan was made to replace it, and only the key
    /// the plan showed is replaced (checked again as each vault is written). An identity that was TPM-bound is
    /// restored unbound only with `unbinding`, and then at `kdf`, not at a cost chosen for a TPM-bound vault (the
    /// TPM was its wall). A vault whose probe fails is removed again (a replaced one put back); a failure after
    /// the first vault is written is `BackupError.restoreStopped`, which names the vaults kept. The backup record
    /// then counts the restored keys as in the backup they came from.
    package func restore(_ plan: RestorePlan, kdf: KDFChoice = .auto, boundToTPM: Bool = false, unbinding: Bool = false,
                        pin: () throws -> PIN) throws -> [Created] {
        let toWrite = try check(plan, boundToTPM: boundToTPM, unbinding: unbinding)
        guard !toWrite.isEmpty else { return [] }
        let pin = try pin()
        try pin.checkStrength()
        let cost = try cost(of: kdf)
        var created: [Created] = []
        for item in toWrite {
            guard let entry = plan.bundle.entries.first(where: { $0.name == item.name }), case .seed(let seed) = entry.content else { continue }
            do {
                created.append(try restore(item, seed: seed, pin: pin, cost: seed.isKDFChosen && (boundToTPM || !seed.wasTPMBound) ? (seed.kdf, true) : cost,
                                           boundToTPM: boundToTPM))
            } catch {
                guard !created.isEmpty else { throw error }
                // What was restored stays, and is said: the person knows what to run again.
                try? BackupRecord.noteBackedUp(created.map { ($0.name, $0.key) }, at: plan.created, file: nil, in: vaults)
                throw BackupError.restoreStopped(restored: created.map(\.name.rawValue), at: item.name.rawValue, reason: Self.message(of: error))
            }
        }
        // What came from a backup is in that backup.
        try BackupRecord.noteBackedUp(created.map { ($0.name, $0.key) }, at: plan.created, file: nil, in: vaults)
        return created
    }

    /// What `restore` refuses before it asks for a PIN, and the items it would write: a different key under a
    /// name here, identities that were TPM-bound when neither binding nor unbinding is asked, a TPM not ready to
    /// bind. A dry run checks the same, so that a backup it passes restores.
    package func check(_ plan: RestorePlan, boundToTPM: Bool = false, unbinding: Bool = false) throws -> [RestorePlan.Item] {
        for item in plan.items {
            if case .differentKeyHere(let here) = item.action {
                throw BackupError.differentKeyHere(name: item.name.rawValue, here: here.description, inBackup: item.key.description)
            }
        }
        let toWrite = plan.items.filter { item in
            switch item.action {
            case .add, .replace: true
            case .alreadyHere, .differentKeyHere, .notInBackup: false
            }
        }
        guard !toWrite.isEmpty else { return [] }
        let wereBound = toWrite.filter(\.wasTPMBound).map(\.name.rawValue)
        if !boundToTPM && !unbinding && !wereBound.isEmpty { throw BackupError.wasTPMBound(names: wereBound) }
        if boundToTPM { try checkTPMReadyToBind() }
        return toWrite
    }

    /// Writes one item's vault, if the identity here is still what the plan saw, then opens it with the PIN to sign
    /// a probe; a vault that fails is removed again, and a vault it replaced put back.
    private func restore(_ item: RestorePlan.Item, seed: BackupBundle.Seed, pin: PIN, cost: (parameters: KDFParameters, chosen: Bool),
                         boundToTPM: Bool) throws -> Created {
        // The plan was shown before the PIN was asked: only what it showed is added or replaced.
        let here = vaults.exists(item.name) ? try vaults.key(named: item.name).key : nil
        let replacing: Bool
        switch item.action {
        case .replace(let shown): guard here == shown else { throw BackupError.changedSincePlan(name: item.name.rawValue) }; replacing = true
        default: guard here == nil else { throw BackupError.changedSincePlan(name: item.name.rawValue) }; replacing = false
        }
        let made = try create(seed.keyPair, root: seed.phrase, name: item.name, pin: pin, kdf: cost, replacing: replacing, boundToTPM: boundToTPM)
        do {
            // The probe goes through the vault as written: what was restored opens with the PIN and signs.
            let (keyPair, _) = try vaults.unlockWithRoot(item.name, pin: pin)
            try Self.probe(keyPair, name: item.name)
            guard keyPair.publicKey == seed.keyPair.publicKey else { throw BackupError.probeFailed(name: item.name.rawValue) }
        } catch {
            // The old vault's backup is a link to it: renamed back, it is the identity's vault again.
            if let backup = made.backup { rename(backup, made.path) } else { unlink(made.path) }
            throw error
        }
        return made
    }

    /// Signs a throwaway message with `keyPair` and verifies it with its public key.
    static func probe(_ keyPair: KeyPair, name: IdentityName) throws {
        let message = Array("restore probe".utf8) + SecureBytes.random(count: 16).withUnsafeBytes { Array($0) }
        guard keyPair.publicKey.isValidSignature(keyPair.signature(for: message), for: message) else {
            throw BackupError.probeFailed(name: name.rawValue)
        }
    }

    /// Ten words from the BIP-39 English list, hyphen-joined, each from 11 uniform random bits (110 bits in all).
    /// The words' indexes are read from the guarded random bytes each time they are needed, never kept in an
    /// ordinary array: they are the passphrase.
    static func newPassphrase() -> SecureBytes {
        let words = BIP39Wordlist.english.map { Array($0.utf8) }
        let random = SecureBytes.random(count: 14)  // 112 bits, of which 110 are used
        func index(_ word: Int, in bytes: UnsafeRawBufferPointer) -> Int {
            var value = 0
            for bit in (word * 11)..<(word * 11 + 11) { value = value << 1 | Int(bytes[bit / 8] >> (7 - bit % 8) & 1) }
            return value
        }
        let count = random.withUnsafeBytes { bytes in (0..<10).reduce(9) { $0 + words[index($1, in: bytes)].count } }
        return SecureBytes(count: count) { output in
            random.withUnsafeBytes { bytes in
                var offset = 0
                for position in 0..<10 {
                    if position > 0 { output[offset] = 0x2D; offset += 1 }
                    for byte in words[index(position, in: bytes)] { output[offset] = byte; offset += 1 }
                }
            }
        }
    }

    /// `text` with anything but printable ASCII replaced, for a message.
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(100).map { (0x20..<0x7F).contains($0.value) ? Character($0) : "?" })
    }
}
