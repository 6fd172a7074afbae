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

    /// Refused, every one: there is no seed, and its PIN is the TPM's to check.
    package func vault(for use: KeyInTokenRefusal) throws -> Vault { throw VaultError.p256Key(path: path) }
    package func accountKey() throws -> PublicKey { throw VaultError.p256Key(path: path) }

    package func checkReadyForPIN(in keystore: Keystore) throws {
        try keystore.checkReadyForPIN(keyVault)
    }

    package func open(pin: PIN, in keystore: Keystore) throws -> any AuthorizationSigning {
        try keystore.openTPMKey(keyVault, pin: pin)
    }

    /// The key goes with its vault, so its PIN is proved by the TPM first.
    package func remove(pin: () throws -> PIN, includingBackups: Bool, in keystore: Keystore) throws -> VaultStore.Removal {
        try checkReadyForPIN(in: keystore)
        _ = try open(pin: pin(), in: keystore)
        return try keystore.vaults.remove(name, pin: nil, includingBackups: includingBackups)
    }
}
