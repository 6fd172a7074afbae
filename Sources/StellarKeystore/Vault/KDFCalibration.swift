import FoundationEssentials
import StellarKeys
import StellarTransactions
import StellarText

/// Which Argon2id level this machine can afford, as LUKS2 calibrates its PBKDF: the strongest of libsodium's
/// levels whose unlock takes at most `target` here. Measured once per keystore directory and kept in
/// `.kdf-calibration` beside the vaults (docs/FORMAT.md), so that only the first `KDFChoice.auto` pays for it.
public struct KDFCalibration: Codable, Sendable, Equatable {
    /// The longest unlock `auto` accepts.
    public static let target = 1.0
    static let fileName = ".kdf-calibration"

    public let level: KDFParameters.Level
    /// The median seconds of one derivation at each level measured (the strongest are skipped once the cost is
    /// clearly beyond the target).
    package let secondsPerUnlock: [String: Double]
    /// When it was measured, as `Keystore.calibration()` reads it back (the file's time); not in the file.
    package internal(set) var measuredAt: Date?

    private enum CodingKeys: String, CodingKey { case level, secondsPerUnlock }

    init(level: KDFParameters.Level, secondsPerUnlock: [String: Double], measuredAt: Date? = nil) {
        self.level = level
        self.secondsPerUnlock = secondsPerUnlock
        self.measuredAt = measuredAt
    }

    /// Measures the levels from the lightest up. A level predicted (from the last one measured, scaled by
    /// passes × memory) to take more than twice the target is not measured: at 1 GiB and several seconds, that
    /// would make the first sign-up slow for nothing.
    /// The calibration in `bytes` (as `JSONEncoder` wrote it), read strictly by `StrictJSON` and by nothing else;
    /// nil unless it is one: a key given twice, an unknown level or a time that is not a number.
    package init?(json bytes: [UInt8]) {
        guard let members = try? StrictJSON.parse(bytes, integersOnly: false),
              let level = members["level"]?.string.flatMap(KDFParameters.Level.init(rawValue:)),
              let times = members["secondsPerUnlock"]?.object
        else { return nil }
        var secondsPerUnlock: [String: Double] = [:]
        for (name, value) in times {
            guard let seconds = value.double else { return nil }
            secondsPerUnlock[name] = seconds
        }
        self.init(level: level, secondsPerUnlock: secondsPerUnlock)
    }

    public static func measure() throws -> KDFCalibration {
        var chosen = KDFParameters.Level.interactive
        var seconds: [String: Double] = [:]
        var last: (parameters: KDFParameters, seconds: Double)?
        for level in KDFParameters.Level.allCases {
            let parameters = level.parameters
            if let last {
                let scale = Double(parameters.opsLimit * parameters.memLimit) / Double(last.parameters.opsLimit * last.parameters.memLimit)
                if last.seconds * scale > 2 * target { break }
            }
            let time: Duration
            do {
                time = try parameters.medianGuessTime(runs: level == .interactive ? 3 : 1)
            } catch VaultError.keyDerivationFailed {
                break  // not enough memory for this level here: it is not affordable
            }
            let measured = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
            seconds[level.rawValue] = measured
            last = (parameters, measured)
            if measured <= target { chosen = level }
        }
        return KDFCalibration(level: chosen, secondsPerUnlock: seconds)
    }
}

extension KDFParameters.Level: Codable {}

/// How the cost of a new vault is chosen: a named level, or `auto` for the strongest this machine unlocks in at
/// most a second (`KDFCalibration`).
public enum KDFChoice: String, CaseIterable, Sendable {
    case auto, interactive, moderate, sensitive

    public var level: KDFParameters.Level? { KDFParameters.Level(rawValue: rawValue) }
}
