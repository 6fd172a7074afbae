import StellarKeys
import StellarTransactions

/// A NIST P-256 key resident in this machine's TPM (format 5, `TPMKeyVault`): the identity's PIN gives its
/// authorisation value, and the TPM signs, counting every wrong one. It has no Stellar account: it signs only as a
/// smart account's External signer, and nothing that needs a seed or an account can be done with it.
package struct KeyInTPM: StoredKey {
    package static let formatVersions: Set<Int> = [TPMKeyVault.version]
    let keyVault: TPMKeyVault
    let path: String

    package init(file bytes: [UInt8], path: String, stamp: AtomicFile.Stamp) throws {
        keyVault = try TPMKeyVault(file: bytes, path: path)
        self.path = path
    }

    package var name: IdentityName { keyVault.name }
    package var key: AuthorizationSigner.Key { .p256(keyVault.publicKey) }
    package var pin: KeyPIN { .vault }
    package var source: KeySource { .vault(needsPIN: true) }
    package var token: PKCS11KeyReference? { nil }
    package var isTPMBound: Bool { true }

    /// Refused, every one: there is no seed, and its PIN is the TPM's to check. A session is refused as what it
    /// would be for: a key that signs only smart accounts' authorizations.
    package func vault(for use: KeyUse) throws -> Vault {
        if use == .session { throw ReviewError.onlySmartAccounts }
        throw VaultError.p256Key(path: path)
    }
    package func accountKey() throws -> PublicKey { throw VaultError.p256Key(path: path) }

    package func checkReadyForPIN(in keystore: Keystore) throws {
        try keystore.checkReadyForPIN(name, needsTPM: true)
    }

    package func open(pin: PIN, in keystore: Keystore) throws -> any AuthorizationSigning {
        try keystore.openTPMKey(keyVault, pin: pin)
    }

    /// The agent opens the key in its own TPM with the PIN (it must have been given the TPM).
    package func hand(to client: AgentClient, ttl: Int?, pin: PIN, in keystore: Keystore) throws {
        try client.addTPMKey(name: name, address: key.agentAddress, keystore: keystore.directory, pin: pin, ttl: ttl)
    }

    package func backupEntry(pin: () throws -> PIN, in keystore: Keystore) throws -> BackupBundle.Entry {
        BackupBundle.Entry(name: name, content: .keptElsewhere(key: key, place: "tpm", note: """
            The P-256 key is inside this machine's TPM and never leaves it, so this backup cannot restore it: add \
            a second signer to the smart accounts it signs for now.
            """))
    }

    /// The key goes with its vault, so its PIN is proved by the TPM first.
    package func remove(pin: () throws -> PIN, includingBackups: Bool, in keystore: Keystore) throws -> VaultStore.Removal {
        try checkReadyForPIN(in: keystore)
        _ = try open(pin: pin(), in: keystore)
        return try keystore.vaults.remove(name, pin: nil, includingBackups: includingBackups)
    }
}
