import Foundation
import Testing
import TestFixtures
import SoftwareTPM
import StellarKeystore  // not @testable: the TPM calls of docs/LIBRARY.md, as an app writes them
import StellarKeystoreTPM

@Suite(.offThePool, .serialized, .softwareTPM, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct TPMAppFlowTests {
    @Test func signUpBoundSignInAndUnbind() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-app-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let swtpm = try #require(SoftwareTPM.current)
        defer { try? swtpm.clearLockout() }
        // An app binds only to a TPM whose guess limit holds: swtpm's lockout authorization is empty.
        let refusing = try Keystore(directory: directory, sessionDirectory: directory + "/run",
                                    tpm: TPM(environment: ["KEYSTORE_TPM_TCTI": swtpm.tcti]))
        #expect(throws: TPMError.lockoutOpen) { try refusing.checkTPMReadyToBind() }
        #expect(throws: TPMError.lockoutOpen) {
            try refusing.signUp(name: "alice", kdf: .interactive, boundToTPM: true) { _ in try PIN("493817") }
        }
        #expect(try refusing.identities().isEmpty)
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "/run",
                                    tpm: TPM(environment: ["KEYSTORE_TPM_TCTI": swtpm.tcti], allowingOpenLockout: true))
        #expect(Keystore.tpmBindingNotice.contains("this machine"))
        let created = try keystore.signUp(name: "alice", kdf: .interactive, boundToTPM: true) { _ in try PIN("493817") }
        #expect(try keystore.identities().map(\.isTPMBound) == [true])
        #expect(try keystore.signIn(name: "alice") { try PIN("493817") }.address == created.address)
        let before = try keystore.tpmStatus()
        #expect {
            try keystore.signIn(name: "alice") { try PIN("493818") }
        } throws: { error in
            guard case TPMError.wrongPIN(let state?) = error else { return false }
            return state.triesLeft == before.triesLeft - 1
        }
        // Without the TPM product, a bound vault is named as such, and nothing else is tried.
        let withoutTPM = try Keystore(directory: directory, sessionDirectory: directory + "/run")
        #expect(throws: TPMError.notSupported) { try withoutTPM.signIn(name: "alice") { try PIN("493817") } }
        #expect(try withoutTPM.address(of: IdentityName("alice")) == created.address)
        let unbound = try keystore.unbindFromTPM(name: IdentityName("alice")) { try PIN("493817") }
        #expect(!unbound.isTPMBound && unbound.publicKey.accountID == created.address)
    }

    /// A P-256 key made in the TPM through the one sign-up: the PIN asked is a new one for the identity, the key is
    /// a P-256 key with no address, and a session, which has no seed to hold, is refused before any PIN.
    @Test func signUpAP256KeyInTheTPM() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-app-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let swtpm = try #require(SoftwareTPM.current)
        defer { try? swtpm.clearLockout() }
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "/run",
                                    tpm: TPM(environment: ["KEYSTORE_TPM_TCTI": swtpm.tcti], allowingOpenLockout: true))
        var asked: [KeyPIN] = []
        let made = try keystore.signUp(name: "card", key: .p256InTPM) { whose in
            asked.append(whose)
            return try PIN("493817")
        }
        #expect(asked == [.vault] && made.address == nil && made.token == nil && !made.foundInToken)
        guard case .p256(let publicKey) = made.key else { Issue.record("not a P-256 key: \(made.key)"); return }
        #expect(try keystore.identities().map(\.p256PublicKey) == [publicKey])
        #expect(throws: ReviewError.onlySmartAccounts) {
            try keystore.startSession(name: "card", ttl: .seconds(60)) {
                Issue.record("the PIN was asked")
                return try PIN("493817")
            }
        }
        #expect(try keystore.logIn(name: "card") { _ in try PIN("493817") }.key == made.key)
    }
}
