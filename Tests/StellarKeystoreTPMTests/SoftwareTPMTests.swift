import Foundation
import Testing
import SoftwareTPM
import TestFixtures

/// The test harness's own swtpm leaves nothing behind, however a test lets go of it.
@Suite(.offThePool, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct SoftwareTPMTests {
    /// A TPM a test starts and never stops is stopped, state and all, when the test lets go of it; one stopped
    /// first is stopped once (the release after it does nothing).
    @Test func aTPMLetGoOfStopsAndLeavesNoState() throws {
        var forgotten = "", stopped = ""
        do {
            let tpm = try SoftwareTPM()
            forgotten = tpm.stateDirectory
            #expect(FileManager.default.fileExists(atPath: forgotten))
            let other = try SoftwareTPM()
            stopped = other.stateDirectory
            other.stop()
            other.stop()
        }
        #expect(!FileManager.default.fileExists(atPath: forgotten))
        #expect(!FileManager.default.fileExists(atPath: stopped))
    }
}
