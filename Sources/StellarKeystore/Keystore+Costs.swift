import FoundationEssentials
import Glibc
import StellarKeys
import StellarTransactions
import StellarText

extension Keystore {
    // MARK: Costs that fit the machine

    /// The level `choice` stands for: itself, or for `auto` the calibrated level of this keystore's machine,
    /// measured now (and kept) if it never was. `measured` is true when this call measured it.
    public func level(for choice: KDFChoice) throws -> (level: KDFParameters.Level, measured: Bool) {
        if let level = choice.level { return (level, false) }
        if let cached = calibration() { return (cached.level, false) }
        let calibration = try KDFCalibration.measure()
        try vaults.createDirectory()
        try? AtomicFile.write(Array(try JSONEncoder().encode(calibration)) + [0x0A],
                              to: calibrationPath, directory: vaults.directory)
        return (calibration.level, true)
    }

    /// What a new encryption at `choice` costs, and whether that cost was named (`Vault.isKDFChosen`). For `auto`
    /// this may measure the machine (`level(for:)`): it is called only once the PINs are accepted, so that a
    /// command refused for its PIN measures nothing and keeps nothing.
    func cost(of choice: KDFChoice) throws -> (parameters: KDFParameters, chosen: Bool) {
        (try level(for: choice).level.parameters, choice != .auto)
    }

    /// The calibration kept for this keystore, if any, with the time it was measured (the file's). A file that
    /// another user owns, or that group or others may write, is ignored with a warning: whoever planted it could
    /// make every new vault's Argon2id as light as they like while `auto` claims the machine's strongest.
    public func calibration() -> KDFCalibration? {
        guard let read = try? AtomicFile.readWithStatus(calibrationPath, limit: 4096),
              var calibration = KDFCalibration(json: read.bytes)
        else { return nil }
        guard read.status.st_uid == geteuid(), read.status.st_mode & 0o022 == 0 else {
            warn("ignoring \(calibrationPath): \(read.status.st_uid == geteuid() ? "others may write it" : "another user owns it"), so it cannot be trusted to say how strong a vault this machine affords")
            return nil
        }
        calibration.measuredAt = Date(timeIntervalSince1970: TimeInterval(read.status.st_mtim.tv_sec))
        return calibration
    }

    /// Whether an identity's vault costs less to attack than this machine's calibrated level: one that `auto` made
    /// on a slower machine, or one from before vaults recorded a level chosen on purpose. Nil when it cannot tell
    /// (no calibration yet, or an unreadable vault): a login must not start measuring. Never true of a vault whose
    /// level was named (`Vault.isKDFChosen`): whoever chose it knew; nor of a TPM-bound vault: a copy of it cannot
    /// be attacked offline at any cost, and its Argon2id is only defence in depth.
    public func isWeakerThanThisMachineAffords(_ name: IdentityName) -> Bool? {
        guard let calibration = calibration(), let vault = try? vaults.vault(named: name) else { return nil }
        guard let kdf = vault.kdf, !vault.isTPMBound, !vault.isKDFChosen else { return false }
        let affordable = calibration.level.parameters
        return kdf.opsLimit * kdf.memLimit < affordable.opsLimit * affordable.memLimit
    }

    /// Re-encrypts an identity under the same PIN at `choice`'s cost (default: what this machine affords), with
    /// new salt and nonce, atomically, ending its sessions; a named level is recorded as chosen. A vault already
    /// there (for `auto`: at that cost or above it) is left as it is, its sessions too, without asking for the
    /// PIN: `changed` is then false.
    @discardableResult
    public func upgrade(name: IdentityName, to choice: KDFChoice = .auto, pin: () throws -> PIN)
        throws -> (vault: Vault, level: KDFParameters.Level, changed: Bool)
    {
        let level = try level(for: choice).level
        let key = try vaults.key(named: name)
        let vault = try key.vault(for: .reencrypt)
        guard let kdf = vault.kdf else { throw KeystoreUseError.keyInToken(name.rawValue, .reencrypt) }
        let target = level.parameters
        let isThere = choice == .auto ? kdf.opsLimit * kdf.memLimit >= target.opsLimit * target.memLimit : kdf == target
        if isThere { return (vault, level, false) }
        try key.checkReadyForPIN(in: self)
        let pin = try pin()
        return (try vaults.changePIN(name, from: pin, to: pin, kdf: target, kdfChosen: choice != .auto, expecting: vault), level, true)
    }

    private var calibrationPath: String { "\(vaults.directory)/\(KDFCalibration.fileName)" }
}
