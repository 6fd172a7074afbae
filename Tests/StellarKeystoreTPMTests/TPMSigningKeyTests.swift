import Foundation
import Testing
import TestFixtures
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreTPM
import PythonCryptography
import SoftwareTPM

/// NIST P-256 signing keys that live in the TPM, against the suite's own swtpm, their signatures checked by an
/// independent verifier (pyca/cryptography). Serialized: the tests share the TPM's dictionary-attack counter, and
/// each that adds failures clears them before it ends.
@Suite(.offThePool, .serialized, .softwareTPM, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct TPMSigningKeyTests {
    let authValue = SecureBytes.random(count: 32)
    let wrongAuthValue = SecureBytes.random(count: 32)

    /// swtpm's lockout authorization is empty, so that these tests can end lockouts as an owner would;
    /// `aNewKeyIsRefusedOnAnOpenLockoutAsANewSealIs` covers the refusal of such a TPM.
    var tpm: TPM { TPM(tcti: SoftwareTPM.current!.tcti, allowingOpenLockout: true) }

    func randomDigest() -> [UInt8] { SecureBytes.random(count: 32).withUnsafeBytes { Array($0) } }

    @Test func aNewKeyIsASignOnlyP256KeyThatNeverLeavesTheTPM() throws {
        let key = try tpm.createSigningKey(authValue: authValue)
        #expect(try tpm.attributes(of: key) == TPMKeyAttributes(
            isNISTP256: true, isECDSASHA256: true, signs: true, decrypts: false, restricted: false, userWithAuth: true,
            noDA: false, fixedTPM: true, fixedParent: true, sensitiveDataOrigin: true))
        #expect(try tpm.attributes(of: key).isSignOnly)
        // The same, read from the bytes without tpm2-tss: TPMT_PUBLIC after the 2-byte size is type (ECC 0x0023),
        // nameAlg (SHA-256 0x000B), then the attributes, big-endian (TPM 2.0 Part 2, 12.2.4 and 8.3): sign
        // (bit 18), userWithAuth (6), sensitiveDataOrigin (5), fixedParent (4), fixedTPM (1), and nothing else.
        let area = key.publicArea
        #expect(Array(area[2..<6]) == [0x00, 0x23, 0x00, 0x0B])
        #expect(area[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } == 0x0004_0072)
        // The public key is the point at the end of the public area (TPMS_ECC_POINT: x, then y, each a TPM2B).
        #expect(key.publicKey.count == 65 && key.publicKey[0] == 0x04)
        let point: [UInt8] = [0x00, 0x20] + Array(key.publicKey[1...32]) + [0x00, 0x20] + Array(key.publicKey[33...])
        #expect(Array(area.suffix(68)) == point)
        #expect(key.primaryName.count == 34 && key.primaryName.prefix(2) == [0x00, 0x0B])
        // Under the primary that seals: a sealed object made now records the same Name.
        #expect(try tpm.seal(.random(count: 32), authValue: authValue, primaryName: nil).primaryName == key.primaryName)
        // Two keys are two keys.
        #expect(try tpm.createSigningKey(authValue: authValue).publicKey != key.publicKey)
    }

    @Test func itsSignaturesVerifyUnderItsPublicKeyInPythonCryptography() throws {
        let key = try tpm.createSigningKey(authValue: authValue)
        for _ in 0..<4 {
            let digest = randomDigest()
            let (r, s) = try tpm.signature(for: digest, with: key, authValue: authValue)
            #expect(r.count == 32 && s.count == 32)
            #expect(try PythonCryptography.isValidP256Signature(r: r, s: s, digest: digest, publicKey: key.publicKey))
            // The verifier can say no: another digest, or another key.
            #expect(try !PythonCryptography.isValidP256Signature(r: r, s: s, digest: randomDigest(), publicKey: key.publicKey))
            let other = try tpm.createSigningKey(authValue: authValue)
            #expect(try !PythonCryptography.isValidP256Signature(r: r, s: s, digest: digest, publicKey: other.publicKey))
        }
    }

    @Test func wrongAuthValuesAreCountedUntilLockoutWhichRefusesEvenTheRightOne() throws {
        defer { try? SoftwareTPM.current!.clearLockout() }
        let key = try tpm.createSigningKey(authValue: authValue)
        let before = try tpm.dictionaryAttackState()
        try #require(before.failures == 0 && before.maximumFailures > 0 && !before.inLockout)
        for failures in 1...before.maximumFailures {
            #expect(throws: TPMError.wrongPIN(state: DictionaryAttackStateAfter(before, failures: failures).state)) {
                try tpm.signature(for: randomDigest(), with: key, authValue: wrongAuthValue)
            }
        }
        let locked = try tpm.dictionaryAttackState()
        #expect(locked.inLockout && locked.failures == before.maximumFailures)
        #expect(throws: TPMError.lockedOut(state: locked, tcti: tpm.tcti)) {
            try tpm.signature(for: randomDigest(), with: key, authValue: authValue)
        }
        #expect(throws: TPMError.lockedOut(state: locked, tcti: tpm.tcti)) {
            try tpm.signature(for: randomDigest(), with: key, authValue: wrongAuthValue)
        }
        #expect(try tpm.dictionaryAttackState() == locked, "in lockout nothing is tried, so nothing more is counted")
        try SoftwareTPM.current!.clearLockout()
        let digest = randomDigest()
        let (r, s) = try tpm.signature(for: digest, with: key, authValue: authValue)
        #expect(try PythonCryptography.isValidP256Signature(r: r, s: s, digest: digest, publicKey: key.publicKey))
    }

    @Test func anotherTPMCannotUseTheKey() throws {
        let key = try tpm.createSigningKey(authValue: authValue)
        let other = try SoftwareTPM()
        defer { other.stop() }
        let elsewhere = TPM(tcti: other.tcti, allowingOpenLockout: true)
        let before = try elsewhere.dictionaryAttackState()
        // Its primary key has another Name: refused before the session is salted to it.
        #expect(throws: TPMError.boundElsewhere) { try elsewhere.signature(for: randomDigest(), with: key, authValue: authValue) }
        // Given that TPM's Name, the key still does not load there: another seed wrapped its private area.
        let theirs = try elsewhere.createSigningKey(authValue: authValue)
        let relabelled = try #require(TPMSigningKey(primaryName: theirs.primaryName, publicArea: key.publicArea,
                                                    privateArea: key.privateArea, publicKey: key.publicKey))
        #expect(throws: TPMError.boundElsewhere) { try elsewhere.signature(for: randomDigest(), with: relabelled, authValue: authValue) }
        #expect(try elsewhere.dictionaryAttackState() == before, "nothing was tried there, so nothing was counted")
        // And here it still signs.
        _ = try tpm.signature(for: randomDigest(), with: key, authValue: authValue)
    }

    @Test func aNewKeyIsRefusedOnAnOpenLockoutAsANewSealIs() throws {
        let strict = TPM(tcti: SoftwareTPM.current!.tcti)
        #expect(try !strict.dictionaryAttackState().lockoutAuthSet)
        #expect(throws: TPMError.lockoutOpen) { try strict.createSigningKey(authValue: authValue) }
        #expect(throws: TPMError.lockoutOpen) { try strict.seal(.random(count: 32), authValue: authValue, primaryName: nil) }
        // With consent it is made; and on a TPM whose lockout authorization is set, no consent is needed.
        _ = try tpm.createSigningKey(authValue: authValue)
        let protected = try SoftwareTPM()
        defer { protected.stop() }
        let guarded = TPM(tcti: protected.tcti)
        #expect(try guarded.protectLockout() != nil)
        #expect(try guarded.createSigningKey(authValue: authValue).publicKey.count == 65)
    }

    @Test func aKeyIsCheckedWhenReadBackAndItsPublicKeyMustBeItsOwn() throws {
        let key = try tpm.createSigningKey(authValue: authValue)
        let other = try tpm.createSigningKey(authValue: authValue)
        func reread(primaryName: [UInt8]? = nil, publicArea: [UInt8]? = nil, privateArea: [UInt8]? = nil, publicKey: [UInt8]? = nil) -> TPMSigningKey? {
            TPMSigningKey(primaryName: primaryName ?? key.primaryName, publicArea: publicArea ?? key.publicArea,
                          privateArea: privateArea ?? key.privateArea, publicKey: publicKey ?? key.publicKey)
        }
        #expect(reread() == key)
        #expect(reread(primaryName: Array(key.primaryName.dropLast())) == nil)
        #expect(reread(publicArea: key.publicArea + [0]) == nil)
        #expect(reread(privateArea: Array(key.privateArea.dropLast())) == nil)
        #expect(reread(publicKey: Array(key.publicKey.dropLast())) == nil)
        #expect(reread(publicKey: [0x02] + key.publicKey.dropFirst()) == nil)
        // Well formed, but its public key is another key's: refused before anything is tried.
        let swapped = try #require(reread(publicKey: other.publicKey))
        let before = try tpm.dictionaryAttackState()
        #expect(throws: TPMError.malformedObject) { try tpm.signature(for: randomDigest(), with: swapped, authValue: authValue) }
        #expect(throws: TPMError.malformedObject) { try tpm.attributes(of: swapped) }
        #expect(try tpm.dictionaryAttackState() == before)
        // A digest that is not 32 bytes is refused, not truncated.
        #expect {
            try tpm.signature(for: Array(randomDigest().dropLast()), with: key, authValue: authValue)
        } throws: { error in
            guard case TPMError.failed(operation: "sign", let detail) = error else { return false }
            return detail.contains("31 bytes")
        }
    }

    @Test func twoHundredSignaturesLeakNoHandle() throws {
        // swtpm has no resource manager: a handle left behind by any signature would exhaust its few slots.
        let key = try tpm.createSigningKey(authValue: authValue)
        for _ in 0..<200 {
            #expect(try tpm.signature(for: randomDigest(), with: key, authValue: authValue).r.count == 32)
        }
        // And the failure path flushes too.
        defer { try? SoftwareTPM.current!.clearLockout() }
        for _ in 0..<20 {
            #expect(throws: TPMError.self) { try tpm.signature(for: randomDigest(), with: key, authValue: wrongAuthValue) }
            try SoftwareTPM.current!.clearLockout()
        }
        let digest = randomDigest()
        let (r, s) = try tpm.signature(for: digest, with: key, authValue: authValue)
        #expect(try PythonCryptography.isValidP256Signature(r: r, s: s, digest: digest, publicKey: key.publicKey))
    }
}
