#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Consecutive wrong PINs for one identity, kept in a small file beside the vault (never inside it, so that
/// recording a failure can never put the vault's own bytes at risk).
///
/// Five wrong PINs are free; after that each wrong PIN starts a wait that doubles from 30 s up to an hour.
/// This slows guessing through keystore itself. Someone holding a copy of the vault file guesses offline at the
/// speed Argon2id allows: SECURITY.md gives those figures.
struct Throttle: Codable, Equatable {
    static let freeFailures = 5
    static let firstWait = 30
    static let longestWait = 3600

    var failures = 0
    /// Seconds since 1970 before which no attempt is accepted.
    var lockedUntil: Double = 0

    static func wait(afterFailures failures: Int) -> Int {
        guard failures >= freeFailures else { return 0 }
        let doublings = min(failures - freeFailures, 7)  // 30 s × 2^7 is already past the cap
        return min(firstWait << doublings, longestWait)
    }

    /// The whole seconds left to wait, or nil when an attempt may be made now.
    func secondsLeft(now: Date) -> Int? {
        let left = lockedUntil - now.timeIntervalSince1970
        guard left > 0 else { return nil }
        // A clock set back must not stretch a wait beyond the longest one.
        return min(Int(left.rounded(.up)), Self.longestWait)
    }

    var triesBeforeWait: Int { max(Self.freeFailures - failures, 0) }

    mutating func recordFailure(now: Date) {
        failures += 1
        let wait = Self.wait(afterFailures: failures)
        if wait > 0 { lockedUntil = now.timeIntervalSince1970 + Double(wait) }
    }

    static func load(_ path: String) throws -> Throttle {
        guard let bytes = try AtomicFile.read(path, limit: 4096) else { return Throttle() }
        // A damaged record fails closed: as if the free attempts were used up, so the next wrong PIN starts a wait.
        return (try? JSONDecoder().decode(Throttle.self, from: Data(bytes))) ?? Throttle(failures: freeFailures - 1)
    }

    func save(_ path: String, directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try AtomicFile.write(Array(try encoder.encode(self)) + [UInt8(ascii: "\n")], to: path, directory: directory)
    }
}
