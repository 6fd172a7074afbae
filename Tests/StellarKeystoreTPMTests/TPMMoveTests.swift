import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreTPM
import SoftwareTPM

/// Moving a secret from one TPM to another (TPM2_Duplicate to the target's storage key, TPM2_Import there)
/// between swtpm instances of the test's own, each with its own owner seed, each stopped when the test ends.
@Suite(.offThePool, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct TPMMoveTests {
    /// Runs `body` with `count` fresh TPMs, stopping every one of them whatever happens.
    func withTPMs(_ count: Int, _ body: ([TPM]) throws -> Void) throws {
        var started: [SoftwareTPM] = []
        defer { started.forEach { $0.stop() } }
        for _ in 0..<count { started.append(try SoftwareTPM()) }
        try body(started.map { TPM(tcti: $0.tcti, allowingOpenLockout: true) })
    }

    let secret = SecureBytes.random(count: 32)
    let code = SecureBytes.random(count: 8)

    @Test func aSecretWrappedOnOneTPMIsUnwrappedByTheTarget() throws {
        try withTPMs(2) { tpms in
            let (source, target) = (tpms[0], tpms[1])
            let wrapped = try source.wrap(secret, toStorageKey: target.storageKeyPublicArea(), authValue: code)
            // Without the transfer code the target's TPM does not unseal it: the file alone is no bearer token.
            #expect { try target.unwrap(wrapped, authValue: SecureBytes.random(count: 8)) } throws: { error in
                if case TPMError.wrongPIN = error { return true }
                return false
            }
            #expect(try bytes(target.unwrap(wrapped, authValue: code)) == bytes(secret))
            // Nothing of the secret in what travels.
            let travelling = wrapped.publicArea + wrapped.duplicate + wrapped.encryptedSeed
            secret.withUnsafeBytes { #expect(!travelling.contains(subsequence: Array($0))) }
        }
    }

    @Test func anotherTPMRefusesTheWrappedSecret() throws {
        try withTPMs(3) { tpms in
            let (source, target, third) = (tpms[0], tpms[1], tpms[2])
            let wrapped = try source.wrap(secret, toStorageKey: target.storageKeyPublicArea(), authValue: code)
            for other in [source, third] {
                #expect { try other.unwrap(wrapped, authValue: code) } throws: { error in
                    if case TPMError.wrappedElsewhere = error { return true }
                    return false
                }
            }
            #expect(try bytes(target.unwrap(wrapped, authValue: code)) == bytes(secret))
        }
    }

    @Test func aChangedByteIsRefused() throws {
        try withTPMs(2) { tpms in
            let (source, target) = (tpms[0], tpms[1])
            let wrapped = try source.wrap(secret, toStorageKey: target.storageKeyPublicArea(), authValue: code)
            var duplicate = wrapped.duplicate
            duplicate[duplicate.count - 1] ^= 1
            var publicArea = wrapped.publicArea
            publicArea[publicArea.count - 1] ^= 1
            var seed = wrapped.encryptedSeed
            seed[seed.count - 1] ^= 1
            let tampered = [
                TPMWrappedObject(publicArea: wrapped.publicArea, duplicate: duplicate, encryptedSeed: wrapped.encryptedSeed),
                TPMWrappedObject(publicArea: publicArea, duplicate: wrapped.duplicate, encryptedSeed: wrapped.encryptedSeed),
                TPMWrappedObject(publicArea: wrapped.publicArea, duplicate: wrapped.duplicate, encryptedSeed: seed),
            ]
            for object in tampered {
                #expect { try target.unwrap(object, authValue: code) } throws: { error in
                    if case TPMError.wrappedElsewhere = error { return true }
                    return false
                }
            }
        }
    }

    @Test func onlyAStorageKeyIsAcceptedAsTheTarget() throws {
        try withTPMs(1) { tpms in
            let signingKey = try tpms[0].createSigningKey(authValue: SecureBytes.random(count: 32))
            #expect(throws: TPMError.self) { try tpms[0].wrap(secret, toStorageKey: signingKey.publicArea, authValue: code) }
        }
    }
}

func bytes(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
