import StellarKeys
import StellarTransactions
/// The cost of one Argon2id guess: libsodium's `opslimit` (passes) and `memlimit` (bytes).
public struct KDFParameters: Hashable, Sendable, Codable {
    package let opsLimit: UInt64
    package let memLimit: UInt64

    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// libsodium's named levels, one of which is chosen when a PIN is set.
    public enum Level: String, CaseIterable, Sendable {
        case interactive, moderate, sensitive

        public var parameters: KDFParameters {
            switch self {
            case .interactive: KDFParameters(opsLimit: Sodium.pwhashOpsLimitInteractive, memLimit: Sodium.pwhashMemLimitInteractive)
            case .moderate: KDFParameters(opsLimit: Sodium.pwhashOpsLimitModerate, memLimit: Sodium.pwhashMemLimitModerate)
            case .sensitive: KDFParameters(opsLimit: Sodium.pwhashOpsLimitSensitive, memLimit: Sodium.pwhashMemLimitSensitive)
            }
        }
    }

    public static let `default` = Level.moderate.parameters

    /// What a vault may ask of us when it is opened. A planted vault must not make us allocate many GiB or
    /// spin for minutes, so anything above libsodium's SENSITIVE memory (1 GiB) or above 10 passes is refused.
    package static let acceptedOpsLimit: ClosedRange<UInt64> = Sodium.pwhashOpsLimitMin...10
    package static let acceptedMemLimit: ClosedRange<UInt64> = Sodium.pwhashMemLimitMin...(1 << 30)

    package var isWithinAcceptedBounds: Bool {
        Self.acceptedOpsLimit.contains(opsLimit) && Self.acceptedMemLimit.contains(memLimit)
    }

    /// Derives a 32-byte secretbox key from `pin` and `salt` with Argon2id v1.3.
    func deriveKey(pin: PIN, salt: [UInt8]) throws -> SecureBytes {
        try SecureBytes(count: Sodium.secretBoxKeyBytes) { key in
            let derived = pin.bytes.withUnsafeBytes { password in
                Sodium.argon2id(output: key, password: password, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
            }
            guard derived else { throw VaultError.keyDerivationFailed(memLimit: memLimit) }
        }
    }

    /// The median time of one key derivation at these costs on this machine: what one PIN guess costs whoever
    /// holds a copy of the vault.
    package func medianGuessTime(runs: Int) throws -> Duration {
        let pin = try PIN("503816")
        let salt = Sodium.randomBytes(count: Sodium.pwhashSaltBytes)
        let clock = ContinuousClock()
        var times: [Duration] = []
        for _ in 0..<max(runs, 1) {
            var failure: Error?
            times.append(clock.measure {
                do { _ = try deriveKey(pin: pin, salt: salt) } catch { failure = error }
            })
            if let failure { throw failure }
        }
        return times.sorted()[times.count / 2]
    }
}
