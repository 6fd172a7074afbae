import FoundationEssentials
import Glibc
import StellarKeys
import StellarTransactions
import StellarText

/// Which key of each identity was last put in a backup, and when: `.backup-record` beside the vaults, JSON,
/// no secret in it (docs/FORMAT.md). `list` and `status` use it to say which identities are in no backup made
/// since their key last changed. It only ever makes keystore say less ("backed up"), so a record that cannot be
/// read, or that another user could have written, counts as none.
enum BackupRecord {
    static let fileName = ".backup-record"
    static let maximumSize = 1 << 20

    struct Entry: Codable, Equatable {
        /// The key as `AuthorizationSigner.Key.description` gives it: the address, or a P-256 key's hex.
        let key: String
        /// When the backup was made (ISO 8601).
        let at: String
        /// The backup file's absolute path when it was written (nil for a key restored from a backup): a later
        /// backup written over that path no longer counts the keys it does not hold as backed up.
        var file: String? = nil
    }
    struct File: Codable {
        var version = 1
        var identities: [String: Entry]
    }

    static func read(in store: VaultStore) -> [String: Entry] {
        guard let read = try? AtomicFile.readWithStatus("\(store.directory)/\(fileName)", limit: maximumSize),
              read.status.st_uid == geteuid(), read.status.st_mode & 0o022 == 0,
              // Strictly first (a key given twice is refused, STYLE), then decoded.
              (try? StrictJSON.check(read.bytes, integersOnly: true)) != nil,
              let file = try? JSONDecoder().decode(File.self, from: Data(read.bytes)), file.version == 1
        else { return [:] }
        return file.identities
    }

    /// Records that `items` are in a backup made at `at`, in the file `file` (nil: restored from one), under the
    /// keystore's lock, written atomically. That file replaced whatever was at its path: the names recorded as in
    /// it and not among `items` are recorded in no backup.
    static func noteBackedUp(_ items: [(name: IdentityName, key: AuthorizationSigner.Key)], at: String, file: String?, in store: VaultStore) throws {
        try store.withLock(writing: true) {
            var identities = read(in: store)
            if let file {
                for (name, entry) in identities where entry.file == file { identities[name] = nil }
            }
            for item in items { identities[item.name.rawValue] = Entry(key: item.key.description, at: at, file: file) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try AtomicFile.write(Array(try encoder.encode(File(identities: identities))) + [0x0A],
                                 to: "\(store.directory)/\(fileName)", directory: store.directory)
        }
    }

    /// `path` made absolute, its directory's links resolved: the same file however it was named.
    static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(AtomicFile.directory(of: path), nil) else { return path }
        defer { free(resolved) }
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        return String(cString: resolved) + "/" + name
    }

    /// Whether `key` is the key last backed up for `name`.
    static func isBackedUp(_ name: IdentityName, key: AuthorizationSigner.Key, in record: [String: Entry]) -> Bool {
        record[name.rawValue]?.key == key.description
    }
}
