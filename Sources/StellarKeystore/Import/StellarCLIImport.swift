import Glibc
import StellarKeys
import StellarTransactions

/// What `importStellarCLI` did with one stellar-cli identity.
package struct StellarCLIImportResult: Sendable {
    package enum Outcome: Sendable, Equatable {
        /// Now a keystore identity (under `name`, which may be the original lower-cased), with what became of
        /// the plaintext TOML file.
        case imported(name: String, address: String, plaintext: Plaintext)
        /// Left alone, for the reason given (nothing secret in the file, a name taken or not allowed).
        case skipped(String)
        /// The file could not be read or did not hold a valid key.
        case failed(String)
    }
    /// What became of an imported identity's plaintext file.
    package enum Plaintext: Sendable, Equatable {
        case kept
        /// Overwritten with zeros, flushed and removed, after the vault opened with the PIN.
        case overwrittenAndRemoved
        /// Removed from stellar-cli's directory but not overwritten: the file has `otherLinks` other names (hard
        /// links), perhaps outside that directory, and zeroing it would destroy what they hold too. The seed is
        /// still in the file those names reach.
        case removedNotOverwritten(otherLinks: Int)
    }

    package let source: String
    package let outcome: Outcome
}

extension Keystore {
    /// stellar-cli's configuration directory: `$STELLAR_CONFIG_HOME`, else `$XDG_CONFIG_HOME/stellar`, else
    /// `~/.config/stellar` (as stellar-cli finds it).
    package static func stellarCLIDirectory(environment: [String: String]) -> String? {
        if let home = environment["STELLAR_CONFIG_HOME"], !home.isEmpty { return home }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/stellar" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/stellar"
    }

    /// Imports stellar-cli identities (`names`, or all of them) from `configDirectory`, each encrypted under one
    /// PIN (asked once, and only if there is something to import) at `kdf` (resolved as for `signUp`). stellar-cli keeps seeds in plaintext;
    /// with `deletePlaintext`, each TOML file is overwritten and unlinked, but only after its vault is written
    /// and opened again with the PIN, so that a crash at any moment leaves the seed in the file or in the vault.
    ///
    /// `pin` is given the stellar-cli names about to be imported, so that a person hears what was found before
    /// choosing a PIN for it.
    package func importStellarCLI(from configDirectory: String, names: [String], pin: (_ importing: [String]) throws -> PIN,
                                 kdf: KDFChoice, deletePlaintext: Bool) throws -> [StellarCLIImportResult] {
        let folder = configDirectory + "/identity"
        guard let files = AtomicFile.fileNames(in: folder) else { throw StellarCLIImportError.noConfigDirectory(configDirectory) }
        let available = files.filter { $0.hasSuffix(".toml") }.map { String($0.dropLast(".toml".count)) }.sorted()
        let wanted = names.isEmpty ? available : names
        var results: [StellarCLIImportResult] = []
        // What will be imported once the PIN is known, with the place of its line in `results`.
        var planned: [(result: Int, source: String, name: IdentityName, identity: StellarCLIKeyFile, path: String,
                       file: AtomicFile.FileIdentity)] = []
        for source in wanted {
            func record(_ outcome: StellarCLIImportResult.Outcome) { results.append(.init(source: source, outcome: outcome)) }
            guard available.contains(source) else { record(.failed("no stellar-cli identity of that name in \(folder)")); continue }
            let path = "\(folder)/\(source).toml"
            let identity: StellarCLIKeyFile
            let file: AtomicFile.FileIdentity
            do {
                guard let read = try StellarCLIKeyFile.read(path) else { record(.failed("it disappeared")); continue }
                (identity, file) = read
            } catch {
                record(.failed("\(path): \(Self.message(of: error))"))
                continue
            }
            switch identity {
            case .elsewhere(let reason): record(.skipped(reason)); continue
            case .publicOnly: record(.skipped("a public key only: there is no secret to protect")); continue
            case .secretKey, .seedPhrase: break
            }
            // stellar-cli allows names keystore does not (capitals, other characters): lower case is tried once.
            guard let name = (try? IdentityName(source)) ?? (try? IdentityName(source.lowercased())) else {
                record(.skipped("the name is not one an identity may have (1 to 64 of a-z 0-9 . _ -); nothing was changed"))
                continue
            }
            guard !vaults.exists(name), !planned.contains(where: { $0.name == name }) else {
                record(.skipped("an identity named '\(name)' already exists here; nothing was changed"))
                continue
            }
            planned.append((results.count, source, name, identity, path, file))
            record(.skipped("not imported: no PIN was given"))
        }
        guard !planned.isEmpty else { return results }
        let pin = try pin(planned.map(\.source))
        try pin.checkStrength()
        let cost = try cost(of: kdf)
        for item in planned {
            let index = item.result
            do {
                let keyPair: KeyPair, created: Created
                switch item.identity {
                case .secretKey(let seed):
                    keyPair = try KeyPair(secretSeed: seed)
                    created = try create(keyPair, root: nil, name: item.name, pin: pin, kdf: cost, replacing: false)
                case .seedPhrase(let phrase, let account):
                    let root = AccountRoot(bip39Seed: try Mnemonic(phrase).seed())
                    keyPair = try root.keyPair(account: account)
                    created = try create(keyPair, root: (root, account), name: item.name, pin: pin, kdf: cost, replacing: false)
                default:
                    continue
                }
                let address = keyPair.publicKey.accountID
                var plaintext = StellarCLIImportResult.Plaintext.kept
                if deletePlaintext {
                    CrashPoint.reached("vault written, plaintext kept")
                    guard try vaults.unlock(item.name, pin: pin).publicKey.accountID == address else {
                        throw VaultError.tampered(path: created.path, reason: "it does not open to the imported key")
                    }
                    plaintext = try Self.shred(item.path, in: folder, reading: item.file)
                }
                results[index] = .init(source: item.source, outcome: .imported(name: item.name.rawValue, address: address,
                                                                                plaintext: plaintext))
            } catch {
                results[index] = .init(source: item.source, outcome: .failed(Self.message(of: error)))
            }
        }
        return results
    }

    /// Overwrites a plaintext key file with zeros, flushes it, unlinks it and flushes its directory. (On a
    /// journalling or copy-on-write file system the old blocks may survive; SECURITY.md says so.)
    ///
    /// Only the file that was read is touched: the one opened for writing must have its device and inode, or
    /// nothing is done (a file swapped in since, or a symbolic link, is never zeroed). A file with other hard
    /// links is only unlinked here: zeroing it would zero them too, and they may be anyone's files.
    static func shred(_ path: String, in directory: String, reading expected: AtomicFile.FileIdentity) throws -> StellarCLIImportResult.Plaintext {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw AtomicFile.ioError("overwrite", path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw AtomicFile.ioError("overwrite", path)
        }
        guard info.st_mode & S_IFMT == S_IFREG, AtomicFile.FileIdentity(info) == expected else {
            close(fd)
            throw StellarCLIImportError.changedSinceRead(path)
        }
        let otherLinks = Int(info.st_nlink) - 1
        if otherLinks == 0, info.st_size > 0 {
            let zeros = [UInt8](repeating: 0, count: Int(info.st_size))
            _ = zeros.withUnsafeBytes { AtomicFile.writeAll(fd, $0) }
            _ = fsync(fd)
        }
        close(fd)
        CrashPoint.reached("plaintext overwritten")
        guard unlink(path) == 0 else { throw AtomicFile.ioError("remove", path) }
        try AtomicFile.syncDirectory(directory)
        return otherLinks == 0 ? .overwrittenAndRemoved : .removedNotOverwritten(otherLinks: otherLinks)
    }
}
