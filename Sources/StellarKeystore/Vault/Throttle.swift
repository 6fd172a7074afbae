import FoundationEssentials
import StellarKeys
import StellarTransactions
import StellarText

/// Consecutive wrong PINs for one identity, kept in a small file beside the vault (never inside it, so that
/// recording a failure can never put the vault's own bytes at risk).
///
/// Five wrong PINs are free; after that each wrong PIN starts a wait that doubles from 30 s up to an hour.
/// This slows guessing through keystore itself. Someone holding a copy of the vault file guesses offline at the
/// speed Argon2id allows: SECURITY.md gives those figures.
package struct Throttle: Encodable, Equatable {
    static let freeFailures = 5
    static let firstWait = 30
    package static let longestWait = 3600
    /// Far beyond any real count; a larger one in the file was planted, and is read as this.
    package static let mostFailures = 1_000_000

    package var failures = 0
    /// Seconds since 1970 before which no attempt is accepted.
    var lockedUntil: Double = 0
    /// Whether `load` had to bring a value from the file into range (not stored).
    var wasClamped = false

    private enum CodingKeys: String, CodingKey { case failures, lockedUntil }

    init(failures: Int = 0, lockedUntil: Double = 0) {
        self.failures = failures
        self.lockedUntil = lockedUntil
    }

    package static func == (a: Throttle, b: Throttle) -> Bool { a.failures == b.failures && a.lockedUntil == b.lockedUntil }

    static func wait(afterFailures failures: Int) -> Int {
        guard failures >= freeFailures else { return 0 }
        let doublings = min(failures - freeFailures, 7)  // 30 s × 2^7 is already past the cap
        return min(firstWait << doublings, longestWait)
    }

    /// The whole seconds left to wait, or nil when an attempt may be made now.
    package func secondsLeft(now: Date) -> Int? {
        let left = lockedUntil - now.timeIntervalSince1970
        guard left > 0 else { return nil }
        // A clock set back must not stretch a wait beyond the longest one; capped before it becomes an Int,
        // which a huge planted value would not fit.
        return Int(min(left, Double(Self.longestWait)).rounded(.up))
    }

    package var triesBeforeWait: Int { max(Self.freeFailures - failures, 0) }

    package mutating func recordFailure(now: Date) {
        failures = min(failures, Self.mostFailures - 1) + 1
        let wait = Self.wait(afterFailures: failures)
        if wait > 0 { lockedUntil = now.timeIntervalSince1970 + Double(wait) }
    }

    /// The record at `path`, every value brought into range: at most `mostFailures`, and a wait of at most
    /// `longestWait` from `now`. A damaged record, or anything that is not a regular file, fails closed: as if
    /// the free attempts were used up, so that the next wrong PIN starts a wait.
    static func load(_ path: String, now: Date) throws -> Throttle {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: 4096)
        } catch is FileError {
            return damaged
        }
        guard let bytes else { return Throttle() }
        return parse(bytes, now: now)
    }

    static let damaged = Throttle(failures: freeFailures - 1)

    /// The record in `bytes`, clamped as `load` says (package-visible for the fuzzer).
    package static func parse(_ bytes: [UInt8], now: Date) -> Throttle {
        guard let members = try? StrictJSON.parse(bytes, integersOnly: false),
              let failures = members["failures"]?.integer(as: Int.self),
              let lockedUntil = members["lockedUntil"]?.double
        else { return damaged }
        let stored = Throttle(failures: failures, lockedUntil: lockedUntil)
        let latest = now.timeIntervalSince1970 + Double(longestWait)
        var throttle = Throttle(failures: min(max(stored.failures, 0), mostFailures),
                                lockedUntil: min(max(stored.lockedUntil, 0), latest))
        throttle.wasClamped = throttle != stored
        return throttle
    }

    func save(_ path: String, directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try AtomicFile.write(Array(try encoder.encode(self)) + [UInt8(ascii: "\n")], to: path, directory: directory)
    }
}
