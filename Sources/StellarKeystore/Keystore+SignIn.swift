import FoundationEssentials
import StellarKeys
import StellarTransactions

extension Keystore {
    // MARK: Signing in and changing the PIN

    /// Opens an identity with its PIN. `pin` is asked only once the vault is known to be readable and no wait
    /// after wrong PINs (nor a TPM lockout) is running, so that nobody types a PIN that could not be used. A key
    /// in a token is never opened here: `purpose` says, before any PIN, why it cannot be (`.export` for a backup).
    public func signIn(name: IdentityName, for purpose: KeyUse = .open, pin: () throws -> PIN) throws -> Signer {
        _ = try vaultReadyForPIN(name, for: purpose)
        let (keyPair, root) = try vaults.unlockWithRoot(name, pin: pin())
        return Signer(name: name, keyPair: keyPair, isFromPhrase: root != nil)
    }

    /// An identity's key as `logIn(name:pin:)` or `addToAgent(name:client:ttl:pin:)` left it: its PIN was right
    /// and the key is there (in its vault, its token or this machine's TPM).
    public struct OpenedKey: Sendable {
        public let name: IdentityName
        /// An Ed25519 key (its account's), or a P-256 key in the TPM (a smart account's External signer).
        public let key: AuthorizationSigner.Key
        /// The token that holds it, for a key in a token.
        public let token: PKCS11KeyReference?
    }

    /// Opens identity `name`'s key, whatever keeps it, with its PIN (counted, as every PIN tried here is), and
    /// lets it go: the PIN is right and the key there. `pin` is asked, once the key is ready for it (no wait after
    /// wrong PINs running, the TPM not in lockout, the token there), for the PIN that `KeyPIN` names.
    @discardableResult
    public func logIn(name: IdentityName, pin: (KeyPIN) throws -> PIN) throws -> OpenedKey {
        let key = try vaults.key(named: name)
        try key.checkReadyForPIN(in: self)
        _ = try key.open(pin: pin(key.pin), in: self)
        return OpenedKey(name: name, key: key.key, token: key.token)
    }

    /// `signIn` off the caller's actor: Argon2id takes a noticeable fraction of a second, which an app's main
    /// thread must not wait for.
    @concurrent
    public func signIn(name: IdentityName, pin: PIN) async throws -> Signer {
        try signIn(name: name) { pin }
    }

    /// Re-encrypts an identity under a new PIN (checked for strength) and ends its sessions. `current` is asked
    /// when the identity is ready. With `checkingCurrentFirst` (a person choosing the new PIN), `new` is asked
    /// only after `current` proved right, so that whoever mistyped the current PIN hears so before choosing a new
    /// one; a script saves that second key derivation. A PIN change that loses a race with another is not counted
    /// as a wrong PIN (`VaultError.changedWhileWaiting`). `kdf` nil keeps the vault's cost; a choice is resolved
    /// as for `signUp`, once the new PIN is accepted.
    @discardableResult
    public func changePIN(name: IdentityName, kdf: KDFChoice? = nil, checkingCurrentFirst: Bool = true,
                          from current: () throws -> PIN, to new: () throws -> PIN) throws -> Vault {
        let seen = try vaultReadyForPIN(name, for: .changePIN)
        let currentPIN = try current()
        if checkingCurrentFirst { _ = try vaults.unlock(name, pin: currentPIN) }
        let newPIN = try new()
        try newPIN.checkStrength()
        let cost = try kdf.map { try self.cost(of: $0) }
        return try vaults.changePIN(name, from: currentPIN, to: newPIN, kdf: cost?.parameters, kdfChosen: cost?.chosen, expecting: seen)
    }

    /// `changePIN` off the caller's actor, with both PINs known (one key derivation for the current one).
    @discardableResult
    @concurrent
    public func changePIN(name: IdentityName, from current: PIN, to new: PIN, kdf: KDFChoice? = nil) async throws -> Vault {
        try changePIN(name: name, kdf: kdf, checkingCurrentFirst: false, from: { current }, to: { new })
    }
}
