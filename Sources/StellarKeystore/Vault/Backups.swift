import FoundationEssentials
import Glibc
import StellarKeys

/// The vaults a replaced identity leaves behind (`NAME.vault.backup-TIMESTAMP-XXXX`): each an old key under its
/// old PIN, kept by a hard link made before the new vault is written, so that the identity is never without one.
public struct Backup: Sendable, Equatable {
    public let name: IdentityName
    package let fileName: String
}

/// The backups in one keystore directory: kept, listed, read. `VaultStore` removes them (under its lock).
package struct Backups: Sendable {
    package static let marker = ".backup-"
    package let directory: String

    /// The backups of `name`, or of every identity, oldest first. Temporary files never count as one.
    package func list(of name: IdentityName? = nil) throws -> [Backup] {
        guard let files = AtomicFile.fileNames(in: directory) else {
            if errno == ENOENT { return [] }
            throw AtomicFile.ioError("list", directory)
        }
        let marker = ".vault" + Self.marker
        return files.compactMap { file -> Backup? in
            guard !AtomicFile.isTemporaryName(file), let range = file.firstRange(of: marker),
                  let owner = try? IdentityName(String(file[..<range.lowerBound])), name == nil || owner == name
            else { return nil }
            return Backup(name: owner, fileName: file)
        }.sorted { $0.fileName < $1.fileName }
    }

    /// The vault inside a backup.
    package func vault(in backup: Backup) throws -> Vault {
        let path = "\(directory)/\(backup.fileName)"
        guard let vault = try VaultStore.readVault(at: path, as: backup.name) else {
            throw VaultError.notFound(name: backup.fileName, directory: directory)
        }
        return vault
    }

    /// Links the vault at `path` to a new backup name stamped with `time`, and returns that name's path. Only
    /// under the store's lock: the caller replaces the vault next.
    func keep(_ path: String, at time: Date) throws -> String {
        let stamp = String(time.formatted(.iso8601)).filter { (c: Character) in c != ":" && c != "-" }
        // The random tail keeps replacements within one second apart; at 4 hex digits two can still draw the
        // same one (a test making 100 in a row did), so a taken name means another draw.
        for _ in 0..<64 {
            let backupPath = "\(path)\(Self.marker)\(stamp)-\(Hex.string(Sodium.randomBytes(count: 2)))"
            if link(path, backupPath) == 0 { return backupPath }
            guard errno == EEXIST else { throw AtomicFile.ioError("back up", path) }
        }
        throw AtomicFile.ioError("back up", path, code: EEXIST)
    }
}
