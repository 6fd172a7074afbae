import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreTPM
import SoftwareTPM

/// `Keystore`'s TPM move between two machines (two keystore directories, each with its own swtpm), and a third
/// TPM that the move file was not made for.
@Suite(.offThePool, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
struct KeystoreTPMMoveTests {
    let pin = try! PIN("270419")
    let newPIN = try! PIN("518203")

    @Test func aTPMBoundKeyMovesAndOnlyTheTargetOpensIt() throws {
        var started: [SoftwareTPM] = []
        defer { started.forEach { $0.stop() } }
        for _ in 0..<3 { started.append(try SoftwareTPM()) }
        let root = NSTemporaryDirectory() + "keystore-tpmmove-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        func keystore(_ index: Int) throws -> Keystore {
            let directory = root + "/machine\(index)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return try Keystore(directory: directory, sessionDirectory: directory + "/sessions",
                                tpm: TPM(tcti: started[index].tcti, allowingOpenLockout: true))
        }
        let (source, target, third) = (try keystore(0), try keystore(1), try keystore(2))
        let keyPair = KeyPair.random()
        let cheap = KDFParameters(opsLimit: Sodium.pwhashOpsLimitMin, memLimit: Sodium.pwhashMemLimitMin)
        _ = try source.create(keyPair, root: nil, name: IdentityName("alice"), pin: pin, kdf: (cheap, true), replacing: false, boundToTPM: true)

        let fingerprint = try target.writeTPMMoveTarget(to: root + "/target.json")
        let targetFile = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/target.json")))
        #expect(try Keystore.tpmMoveFingerprint(ofTarget: targetFile) == fingerprint)
        #expect(fingerprint.split(separator: "-").map(\.count) == [4, 4, 4, 4, 4] && fingerprint.allSatisfy { $0 == "-" || $0.isHexDigit })

        // A target file swapped on the way (a P-256 key made here, whose private half is in no TPM) is refused
        // against the fingerprint the target showed, before the PIN is asked; nothing is written.
        var forged = try TPMMoveTargetFile(decoding: targetFile)
        forged = TPMMoveTargetFile(storageKey: try SoftwareTPM.forgedStorageKey(like: forged.storageKey))
        #expect(forged.fingerprint != fingerprint)
        #expect(throws: TPMMoveError.fingerprintMismatch(inFile: forged.fingerprint, confirmed: fingerprint)) {
            try source.wrapForTPMMove(IdentityName("alice"), target: try forged.encoded(), fingerprint: fingerprint, to: root + "/forged.move") {
                Issue.record("PIN asked"); return pin
            }
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/forged.move"))

        // The fingerprint as a person types it: upper case, spaces for hyphens.
        let typed = fingerprint.uppercased().replacingOccurrences(of: "-", with: " ")
        let wrapped = try source.wrapForTPMMove(IdentityName("alice"), target: targetFile, fingerprint: typed, to: root + "/alice.move") { pin }
        #expect(wrapped.address == keyPair.publicKey.accountID)
        let code = wrapped.transferCode.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(code.split(separator: "-").map(\.count) == [4, 4, 4, 4] && code.allSatisfy { $0 == "-" || $0.isHexDigit })
        func entered(_ text: String) -> () -> SecureBytes { { var bytes = Array(text.utf8); return SecureBytes(consuming: &bytes) } }
        let moveFile = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/alice.move")))

        // The third TPM, and the source's own, refuse it before any PIN is asked.
        for other in [third, source] {
            #expect { try other.importTPMMove(moveFile, as: IdentityName("bob"), transferCode: entered(code)) { Issue.record("PIN asked"); return newPIN } } throws: { error in
                if case TPMError.wrappedElsewhere = error { return true }
                return false
            }
        }
        // A changed byte of the duplicate is refused too.
        var tampered = try TPMMoveFile(decoding: moveFile)
        var duplicate = tampered.wrapped.duplicate
        duplicate[duplicate.count / 2] ^= 1
        tampered = TPMMoveFile(address: tampered.address, wrapped: TPMWrappedObject(publicArea: tampered.wrapped.publicArea, duplicate: duplicate,
                                                                                     encryptedSeed: tampered.wrapped.encryptedSeed))
        #expect(throws: TPMError.self) { try target.importTPMMove(try tampered.encoded(), as: IdentityName("alice"), transferCode: entered(code)) { newPIN } }

        // On the target, the file without its transfer code opens nothing: a wrong code is refused before any PIN.
        let wrong = String(code.reversed())
        #expect {
            try target.importTPMMove(moveFile, as: IdentityName("alice"), transferCode: entered(wrong)) { Issue.record("PIN asked"); return newPIN }
        } throws: { error in
            if case TPMMoveError.wrongTransferCode = error { return true }
            return false
        }
        #expect(throws: TPMMoveError.malformedTransferCode) {
            try target.importTPMMove(moveFile, as: IdentityName("alice"), transferCode: entered("1234")) { newPIN }
        }
        #expect(!target.vaults.exists(IdentityName("alice")))
        let made = try target.importTPMMove(moveFile, as: IdentityName("alice"), kdf: .interactive,
                                            transferCode: entered(code.uppercased().replacingOccurrences(of: "-", with: " "))) { newPIN }
        #expect(made.address == keyPair.publicKey.accountID)
        let opened = try target.vaults.unlock(IdentityName("alice"), pin: newPIN)
        let message = Array("moved".utf8)
        #expect(keyPair.publicKey.isValidSignature(opened.signature(for: message), for: message))
        #expect(try target.vaults.key(named: IdentityName("alice")).isTPMBound)

        // No file written anywhere holds the seed or its StrKey in the clear.
        let seed = keyPair.seed.withUnsafeBytes { Array($0) }
        let strKey = keyPair.secretSeedStrKey().withUnsafeBytes { Array($0) }
        let files = FileManager.default.enumerator(atPath: root)!.compactMap { $0 as? String }
        #expect(files.count >= 4)
        for file in files {
            guard let contents = FileManager.default.contents(atPath: root + "/" + file) else { continue }
            #expect(!Array(contents).contains(subsequence: seed) && !Array(contents).contains(subsequence: strKey), "\(file)")
        }
    }
}
