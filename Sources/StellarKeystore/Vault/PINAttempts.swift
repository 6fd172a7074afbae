import FoundationEssentials
import Glibc

/// The wrong-PIN counts of the identities in one keystore directory, each in `.NAME.throttle` (`Throttle`).
///
/// An attempt is counted as a failure before the PIN is tried (`record`), and cleared once the PIN proves right
/// (`clear`) or restored when the attempt came to nothing else (`restore`): writing it first means an attempt
/// that cannot be recorded is never made (a full disk or a read-only directory must not give unlimited
/// guesses), and killing the process during the key derivation saves no guess either. `VaultStore` calls these
/// under its lock.
package struct PINAttempts: Sendable {
    package let directory: String
    let now: @Sendable () -> Date

    func path(of name: IdentityName) -> String { "\(directory)/.\(name.rawValue).throttle" }

    /// Seconds before the next PIN attempt is accepted, so that a person is told before typing one.
    package func secondsUntilNextAttempt(_ name: IdentityName) -> Int? {
        (try? Throttle.load(path(of: name), now: now()))?.secondsLeft(now: now())
    }

    /// Counts the attempt about to be made; refused while a wait runs. Returns the count before and after.
    @discardableResult
    func record(_ name: IdentityName) throws -> (before: Throttle, after: Throttle) {
        let path = path(of: name)
        let before = try Throttle.load(path, now: now())
        if let wait = before.secondsLeft(now: now()) {
            // A counter planted with a wait beyond the longest is stored back capped, so that it ends.
            if before.wasClamped { try? before.save(path, directory: directory) }
            throw VaultError.throttled(secondsLeft: wait)
        }
        var after = before
        after.recordFailure(now: now())
        do {
            try after.save(path, directory: directory)
        } catch let VaultError.io(_, _, reason) {
            throw VaultError.cannotRecordAttempts(directory: directory, reason: reason)
        }
        return (before, after)
    }

    /// The PIN was right (or the identity is gone): no failure is left.
    func clear(_ name: IdentityName) throws {
        if unlink(path(of: name)) != 0 && errno != ENOENT { throw AtomicFile.ioError("reset", path(of: name)) }
    }

    /// The attempt was not a wrong PIN (no memory for the key derivation, a damaged vault): as it was before.
    func restore(_ name: IdentityName, to before: Throttle) throws {
        if before == Throttle() { try clear(name) } else { try before.save(path(of: name), directory: directory) }
    }
}
