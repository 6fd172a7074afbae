import StellarKeystore
import StellarKeys

/// How the CLI says the library's GPU estimate (`KDFParameters.allPINsOnOneGPU`): in `bench-kdf`, and in the one
/// line `signup` and `recover` add for a vault that the PIN alone opens.
enum GPUEstimate {
    /// Where the figure comes from, for a person who wonders.
    static var source: String {
        let reference = KDFParameters.referenceGPU
        return "hashcat's published \(Int(reference.guessesPerSecond)) guesses/s on one RTX 4090 at \(reference.parameters.memLimit >> 20) MiB"
            + " and \(reference.parameters.opsLimit) passes, scaled by passes × memory"
    }

    /// After a vault is made: how long a copy of its file holds against one GPU, and how this machine's TPM, if
    /// it has one, would make a copy worthless. Nothing for a TPM-bound vault, or one that cannot be read back.
    static func sayWhatACopyIsWorth(_ name: IdentityName, in keystore: Keystore) {
        guard let exposure = try? keystore.copiedVaultExposure(of: name) else { return }
        var line = "a copy of this vault file holds about \(approximate(exposure.allPINsOnOneGPU)) against one GPU trying every PIN (an estimate; see SECURITY.md)"
        if let tpm = exposure.tpm {
            let steps = tpm.lockoutAuthSet ? "" : "after 'keystore tpm-protect': "
            line += "; bound to this machine's TPM (\(steps)--tpm, or 'keystore bind --tpm' now) a copy is worthless"
        }
        Console.note(line)
    }

    /// A duration as a person reads it: seconds, minutes, hours (one decimal) or days, rounded.
    static func approximate(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        if seconds < 90 { return "\(Int(seconds.rounded())) seconds" }
        if seconds < 90 * 60 { return "\(Int((seconds / 60).rounded())) minutes" }
        if seconds < 48 * 3600 { return "\((seconds / 360).rounded() / 10) hours" }
        return "\(Int((seconds / 86400).rounded())) days"
    }
}

extension Duration {
    /// The duration in seconds, for a figure a person reads.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
