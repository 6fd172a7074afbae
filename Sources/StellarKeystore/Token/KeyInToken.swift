import StellarKeys
import StellarTransactions

/// An Ed25519 key in a PKCS#11 token (format 4): the vault only names the token and the key, and holds no secret.
/// The token's own PIN logs in to it, and the token signs.
package struct KeyInToken: StoredKey {
    package static let formatVersions: Set<Int> = [4]
    let reading: VaultStore.Reading
    let reference: PKCS11KeyReference

    package init(file bytes: [UInt8], path: String, stamp: AtomicFile.Stamp) throws {
        let vault = try Vault(file: bytes, path: path)
        guard let reference = vault.token else { throw VaultError.corrupt(path: path, reason: "it names no token") }
        reading = VaultStore.Reading(vault: vault, stamp: stamp)
        self.reference = reference
    }

    package var name: IdentityName { reading.vault.name }
    package var key: AuthorizationSigner.Key { .ed25519(reading.vault.publicKey) }
    package var pin: KeyPIN { .token }
    package var source: KeySource { .token }
    package var isTPMBound: Bool { false }
    package var token: PKCS11KeyReference? { reference }

    /// Refused, every one: the token never lets its secret out and keeps its own PIN.
    package func vault(for use: KeyUse) throws -> Vault {
        throw KeystoreUseError.keyInToken(name.rawValue, use)
    }
    package func accountKey() throws -> PublicKey { reading.vault.publicKey }

    package func checkReadyForPIN(in keystore: Keystore) throws {
        try keystore.checkReadyForPIN(name, needsTPM: false)
        try keystore.checkTokenReady(reference)
    }

    package func open(pin: PIN, in keystore: Keystore) throws -> any AuthorizationSigning {
        try keystore.vaults.openToken(reading, pin: pin)
    }

    /// The agent logs in to the token itself, reading the vault and trying the PIN there.
    package func hand(to client: AgentClient, ttl: Int?, pin: PIN, in keystore: Keystore) throws {
        try client.addToken(name: name, address: reading.vault.publicKey.accountID, keystore: keystore.directory, pin: pin, ttl: ttl)
    }

    package func backupEntry(pin: () throws -> PIN, in keystore: Keystore) throws -> BackupBundle.Entry {
        BackupBundle.Entry(name: name, content: .keptElsewhere(key: key, place: "pkcs11", note: """
            The key is in a PKCS#11 token and never leaves it, so this backup cannot restore it: keep the token's own \
            backup, or add a second signer to its account now.
            """))
    }

    /// Without its PIN: the key is not in its vault, which only names it, so removing the vault loses nothing the
    /// token does not keep, and the token's PIN proves nothing about the file.
    package func remove(pin: () throws -> PIN, includingBackups: Bool, in keystore: Keystore) throws -> VaultStore.Removal {
        try keystore.vaults.remove(name, pin: nil, includingBackups: includingBackups)
    }
}
