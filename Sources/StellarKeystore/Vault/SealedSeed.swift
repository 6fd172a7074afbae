import StellarKeys
import StellarTransactions

/// An Ed25519 seed sealed in its vault (formats 1 to 3): encrypted under a key derived from the identity's PIN,
/// and for format 3 under this machine's TPM as well. Opening it decrypts the seed here.
package struct SealedSeed: StoredKey {
    package static let formatVersions: Set<Int> = [1, 2, 3]
    let reading: VaultStore.Reading

    package init(file bytes: [UInt8], path: String, stamp: AtomicFile.Stamp) throws {
        reading = VaultStore.Reading(vault: try Vault(file: bytes, path: path), stamp: stamp)
    }

    package var name: IdentityName { reading.vault.name }
    package var key: AuthorizationSigner.Key { .ed25519(reading.vault.publicKey) }
    package var pin: KeyPIN { .vault }
    package var source: KeySource { .vault(needsPIN: true) }
    package var token: PKCS11KeyReference? { nil }
    package var isTPMBound: Bool { reading.vault.isTPMBound }

    /// A sealed seed does all of them.
    package func vault(for use: KeyUse) throws -> Vault { reading.vault }
    package func accountKey() throws -> PublicKey { reading.vault.publicKey }

    package func checkReadyForPIN(in keystore: Keystore) throws {
        try keystore.checkReadyForPIN(name, needsTPM: reading.vault.isTPMBound)
    }

    package func open(pin: PIN, in keystore: Keystore) throws -> any AuthorizationSigning {
        let (keyPair, root) = try keystore.vaults.unlock(reading, pin: pin)
        return CheckedKey(Signer(name: name, keyPair: keyPair, isFromPhrase: root != nil))
    }

    package func hand(to client: AgentClient, ttl: Int?, pin: PIN, in keystore: Keystore) throws {
        let (keyPair, root) = try keystore.vaults.unlock(reading, pin: pin)
        try client.add(Signer(name: name, keyPair: keyPair, isFromPhrase: root != nil), keystore: keystore.directory, ttl: ttl)
    }

    package func backupEntry(pin: () throws -> PIN, in keystore: Keystore) throws -> BackupBundle.Entry {
        try checkReadyForPIN(in: keystore)
        let vault = reading.vault
        let (keyPair, root) = try keystore.vaults.unlock(reading, pin: pin())
        let phrase = root.map { (root: $0, account: vault.account ?? 0) }
        return BackupBundle.Entry(name: name, content: .seed(BackupBundle.Seed(
            secretSeed: keyPair.secretSeedStrKey(), keyPair: keyPair, phrase: phrase,
            kdf: vault.kdf ?? KDFParameters.Level.moderate.parameters, isKDFChosen: vault.isKDFChosen, wasTPMBound: vault.isTPMBound)))
    }

    /// The PIN is tried under the lock that the removal holds, on the vault it removes.
    package func remove(pin: () throws -> PIN, includingBackups: Bool, in keystore: Keystore) throws -> VaultStore.Removal {
        try checkReadyForPIN(in: keystore)
        return try keystore.vaults.remove(name, pin: pin(), includingBackups: includingBackups)
    }
}
