import Glibc
import StellarKeys

/// A hold on an identity's name while its key is made somewhere a failure cannot simply forget it (a token): a
/// second sign-up of the same name sees the hold and stops before it makes a key of its own.
///
/// The hold is an exclusive `flock` on `.NAME.signup` in the vaults' directory, taken and given up under the
/// directory's lock (so that a file being removed is never locked anew by someone else). A process that dies
/// loses its `flock` with it, so a hold never outlives its holder; the file it leaves is taken by the next one.
package final class NameReservation {
    private let store: VaultStore
    private let path: String
    private let descriptor: Int32

    fileprivate init(store: VaultStore, path: String, descriptor: Int32) {
        self.store = store
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        let path = path
        _ = try? store.withLock(writing: true) { unlink(path) }
        close(descriptor)
    }
}

extension VaultStore {
    /// Holds `name` for a sign-up (`NameReservation`): refused when the identity exists (unless `replacing`) or
    /// another sign-up holds it. Creates the directory if needed, so a directory where no vault can be written
    /// is found here too.
    package func reserve(_ name: IdentityName, replacing: Bool) throws -> NameReservation {
        try createDirectory()
        return try withLock(writing: true) {
            if !replacing && exists(name) { throw VaultError.alreadyExists(name: name.rawValue) }
            let path = "\(directory)/.\(name.rawValue).signup"
            let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw AtomicFile.ioError("create", path) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                close(descriptor)
                throw VaultError.io(operation: "create", path: path, reason: "it is not a regular file; remove it")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                throw VaultError.beingCreated(name: name.rawValue)
            }
            return NameReservation(store: self, path: path, descriptor: descriptor)
        }
    }
}
