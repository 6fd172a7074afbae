import StellarKeys

extension KDFParameters {
    /// The published figure the GPU estimate is scaled from: hashcat's Argon2id mode (34000, merged in 2025) tries
    /// 1,667 guesses a second on one NVIDIA RTX 4090 at 64 MiB, 3 passes, 1 lane.
    package static let referenceGPU = (guessesPerSecond: 1667.0, parameters: KDFParameters(opsLimit: 3, memLimit: 64 << 20))

    /// An estimate of how long one reference GPU (`referenceGPU`) takes to try every PIN against a copy of a vault
    /// at these costs, with no TPM in the way; the expected time to find the PIN is half of it.
    ///
    /// The published rate, scaled by passes × memory: an Argon2id guess fills its memory and then reads and
    /// rewrites all of it once per pass (libsodium uses one lane), so its cost on a GPU, bound by memory
    /// bandwidth, grows with both. It is one figure scaled, not a measurement; at 1 GiB a 24 GiB card holds
    /// fewer guesses at once than it needs to keep its memory busy, so the true time there is if anything longer.
    public var allPINsOnOneGPU: Duration {
        let reference = Self.referenceGPU.parameters
        let scale = (Double(opsLimit) * Double(memLimit)) / (Double(reference.opsLimit) * Double(reference.memLimit))
        return .seconds(Double(PIN.possibleValues) / Self.referenceGPU.guessesPerSecond * scale)
    }
}
