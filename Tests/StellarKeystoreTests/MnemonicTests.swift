import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

@Suite struct MnemonicVaultTests {
    let pin = try! PIN("270419")

    func sealed(account: UInt32 = 4) throws -> (vault: Vault, bytes: [UInt8], root: AccountRoot) {
        let root = AccountRoot(bip39Seed: try Mnemonic.generate(wordCount: 12).seed())
        let vault = try Vault.seal(root.keyPair(account: account), root: (root, account), name: .default, pin: pin, kdf: cheapKDF)
        return (vault, vault.encoded(), root)
    }

    @Test func aPhraseVaultIsVersionTwoAndKeepsItsRoot() throws {
        let (_, bytes, root) = try sealed()
        let json = try VaultJSON(bytes)
        #expect(json["version"] as? Int == 2 && json["account"] as? Int == 4)
        #expect(Data(base64Encoded: json["cipher.ciphertext"] as! String)?.count == 112)
        let vault = try Vault(file: bytes, path: "v")
        let (keyPair, opened) = try vault.openWithRoot(pin: pin)
        #expect(try keyPair == root.keyPair(account: 4))
        #expect(try opened?.keyPair(account: 9) == root.keyPair(account: 9))
        // The check digest covers the account number too.
        var edited = json
        edited["account"] = 5
        #expect(throws: VaultError.tampered(path: "v", reason: "its check digest does not match its contents")) {
            try Vault(file: edited.bytes, path: "v")
        }
        edited.recomputeCheck()
        #expect(throws: VaultError.tampered(path: "v", reason: "its key is not account 5 of its recovery phrase")) {
            try Vault(file: edited.bytes, path: "v").open(pin: pin, path: "v")
        }
    }

    @Test func changingThePINKeepsTheRoot() throws {
        let directory = TemporaryDirectory()
        let store = try VaultStore(directory: directory.path)
        let (vault, _, root) = try sealed(account: 2)
        try store.create(vault)
        let newPIN = try PIN("918273")
        let changed = try store.changePIN(.default, from: pin, to: newPIN, kdf: cheapKDF)
        #expect(changed.account == 2)
        #expect(try store.unlockWithRoot(.default, pin: newPIN).root?.keyPair(account: 0) == root.keyPair(account: 0))
    }

    @Test func versionOneFieldsAndVersionTwoShapesDoNotMix() throws {
        var json = try VaultJSON(try sealed().bytes)
        json["account"] = nil
        json.recomputeCheck()
        #expect(throws: VaultError.corrupt(path: "v", reason: "the account number is missing")) { try Vault(file: json.bytes, path: "v") }
        json["version"] = 1
        json.recomputeCheck()
        #expect(throws: VaultError.corrupt(path: "v", reason: "the ciphertext is not 48 bytes of base64")) { try Vault(file: json.bytes, path: "v") }
    }

    @Test func thePhraseIsNowhereInTheVault() throws {
        let mnemonic = try Mnemonic.generate(wordCount: 24)
        let root = AccountRoot(bip39Seed: try mnemonic.seed())
        let bytes = try Vault.seal(root.keyPair(account: 0), root: (root, 0), name: .default, pin: pin, kdf: cheapKDF).encoded()
        let file = String(decoding: bytes, as: UTF8.self)
        let phrase = text(mnemonic.phrase)
        #expect(!file.contains(phrase) && !file.contains(phrase.split(separator: " ").prefix(3).joined(separator: " ")))
        let node = root.node.withUnsafeBytes { Array($0) }
        #expect(!file.contains(Data(node).base64EncodedString()) && !file.contains(Hex.string(node)))
    }
}
