import FoundationEssentials
import StellarKeys
import StellarTransactions

extension Keystore {
    // MARK: Making identities

    /// An identity as `signUp`, `recover` and `derive` leave it.
    public struct Created: Sendable {
        public let name: IdentityName
        /// Its Stellar account's address (G…); nil for a P-256 key in the TPM, which is a smart account's
        /// External signer and has no account of its own (`key` holds its public key).
        public let address: String?
        /// Its public key: an Ed25519 key (its account's), or a P-256 key in the TPM.
        public let key: AuthorizationSigner.Key
        public let path: String
        /// The vault it replaced, kept as a backup (`replacing`).
        public let backup: String?
        /// A new recovery phrase (`NewKey.phrase`): returned only once the vault is safely written, so that a
        /// failure can never leave a person with a phrase for no key.
        public let phrase: Mnemonic?
        /// The token that holds it, for a key in a token (`NewKey.inToken`).
        public let token: PKCS11KeyReference?
        /// Whether its key was already in the token (`TokenKeyChoice.existing`), not made for it.
        public let foundInToken: Bool

        init(name: IdentityName, key: AuthorizationSigner.Key, path: String, backup: String?, phrase: Mnemonic? = nil,
             token: PKCS11KeyReference? = nil, foundInToken: Bool = false) {
            self.name = name
            if case .ed25519(let publicKey) = key { address = publicKey.accountID } else { address = nil }
            self.key = key
            self.path = path
            self.backup = backup
            self.phrase = phrase
            self.token = token
            self.foundInToken = foundInToken
        }

        func with(phrase: Mnemonic? = nil, token: PKCS11KeyReference? = nil, foundInToken: Bool = false) -> Created {
            Created(name: name, key: key, path: path, backup: backup, phrase: phrase, token: token, foundInToken: foundInToken)
        }
    }

    /// The key a new identity holds: a seed sealed under its PIN (`random`, `imported`, `phrase`), a key in a
    /// PKCS#11 token (`inToken`), or a P-256 key inside this machine's TPM (`p256InTPM`).
    public enum NewKey: Sendable {
        /// A new random key.
        case random
        /// An existing key, e.g. from an `S…` seed.
        case imported(KeyPair)
        /// A new SEP-5 recovery phrase of `words` words (12 to 24), and its account `account`: the vault keeps
        /// what further accounts need, and `Created.phrase` holds the phrase, once.
        case phrase(words: Int = 24, account: UInt32 = 0)
        /// An Ed25519 key in the token of module `module` (an absolute path) labelled `token`, or the module's
        /// only token that signs Ed25519: a new key pair made there, or one already there (`TokenKeyChoice`). The
        /// PIN asked is the token's; the vault keeps no secret.
        case inToken(module: String, token: String?, key: TokenKeyChoice)
        /// A new NIST P-256 key inside this machine's TPM, which never leaves it: it signs only as a smart
        /// account's External signer (`Created.key` is what the account registers), under a new PIN.
        case p256InTPM
    }

    /// Creates identity `name` holding `key`. An existing identity is refused unless `replacing`, which keeps its
    /// vault as a backup and ends its sessions. `pin` is asked only once what can be checked was (the name free,
    /// the TPM ready, a token's module recordable), so that nobody types a PIN for nothing, for the PIN `KeyPIN`
    /// names: a new PIN for the identity (`.vault`, checked for strength), or the token's own (`.token`).
    ///
    /// A sealed seed is encrypted at the cost `kdf` names (a level, recorded as chosen: `Vault.isKDFChosen`) or,
    /// for `auto`, the one this machine affords, measured once the PIN is accepted if it never was; nil is
    /// `moderate`. `boundToTPM`: its vault opens only with this machine's TPM as well (`Keystore.tpmBindingNotice`).
    /// A P-256 key's PIN is derived at `kdf`'s cost too, `auto` or nil being the lightest, `interactive`: the TPM
    /// limits guesses, and a copy of its vault is worth nothing without it. A key in a token has no cost and no
    /// binding (its token guards it): `boundToTPM` is refused for it.
    public func signUp(name: IdentityName, kdf: KDFChoice? = nil, key: NewKey = .random, replacing: Bool = false,
                       boundToTPM: Bool = false, pin: (KeyPIN) throws -> PIN) throws -> Created {
        // A sealed seed's key is made (a phrase drawn) only once its PIN is accepted: none for nothing.
        let seed: () throws -> (keyPair: KeyPair, root: (root: AccountRoot, account: UInt32)?, phrase: Mnemonic?)
        switch key {
        case .inToken(let module, let token, let choice):
            if boundToTPM { throw KeystoreUseError.keyInToken(name.rawValue, .bindTPM) }
            return try signUpInToken(name: name, module: module, token: token, key: choice, replacing: replacing) { try pin(.token) }
        case .p256InTPM:
            return try signUpInTPM(name: name, kdf: kdf ?? .interactive, replacing: replacing) { try pin(.vault) }
        case .random:
            seed = { (.random(), nil, nil) }
        case .imported(let keyPair):
            seed = { (keyPair, nil, nil) }
        case .phrase(let words, let account):
            seed = {
                let phrase = try Mnemonic.generate(wordCount: words)
                let root = AccountRoot(bip39Seed: try phrase.seed())
                return (try root.keyPair(account: account), (root, account), phrase)
            }
        }
        try refuseExisting(name, replacing: replacing)
        if boundToTPM { try checkTPMReadyToBind() }
        let pin = try pin(.vault)
        try pin.checkStrength()
        let cost = try cost(of: kdf ?? .moderate)
        let made = try seed()
        let created = try create(made.keyPair, root: made.root, name: name, pin: pin, kdf: cost, replacing: replacing,
                                 boundToTPM: boundToTPM)
        return created.with(phrase: made.phrase)
    }

    /// `signUp` off the caller's actor: Argon2id takes a noticeable fraction of a second, which an app's main
    /// thread must not wait for. It takes the PIN itself (the token's, for `NewKey.inToken`), so that `await`
    /// picks it, in top-level code too.
    @concurrent
    public func signUp(name: IdentityName, pin: PIN, kdf: KDFChoice? = nil, key: NewKey = .random,
                       replacing: Bool = false, boundToTPM: Bool = false) async throws -> Created {
        try signUp(name: name, kdf: kdf, key: key, replacing: replacing, boundToTPM: boundToTPM) { _ in pin }
    }

    /// Restores an identity from a recovery phrase (and BIP39 passphrase), at account `account`, under a new PIN,
    /// asked once the name is free (and the TPM ready, for a binding), at `kdf` as for `signUp`.
    public func recover(name: IdentityName, phrase: Mnemonic, passphrase: SecureBytes? = nil, account: UInt32 = 0,
                        kdf: KDFChoice = .moderate, replacing: Bool = false, boundToTPM: Bool = false,
                        pin: () throws -> PIN) throws -> Created {
        try refuseExisting(name, replacing: replacing)
        if boundToTPM { try checkTPMReadyToBind() }
        let pin = try pin()
        try pin.checkStrength()
        let root = AccountRoot(bip39Seed: try phrase.seed(passphrase: passphrase))
        return try create(root.keyPair(account: account), root: (root, account), name: name, pin: pin,
                          kdf: try cost(of: kdf), replacing: replacing, boundToTPM: boundToTPM)
    }

    /// `recover` off the caller's actor.
    @concurrent
    public func recover(name: IdentityName, phrase: Mnemonic, passphrase: SecureBytes? = nil, account: UInt32 = 0,
                        pin: PIN, kdf: KDFChoice = .moderate, replacing: Bool = false,
                        boundToTPM: Bool = false) async throws -> Created {
        try recover(name: name, phrase: phrase, passphrase: passphrase, account: account, kdf: kdf, replacing: replacing,
                    boundToTPM: boundToTPM) { pin }
    }

    /// Refuses an existing identity before anyone is asked for a PIN, a seed or a phrase it could not be used for.
    public func refuseExisting(_ name: IdentityName, replacing: Bool) throws {
        if !replacing && vaults.exists(name) { throw VaultError.alreadyExists(name: name.rawValue) }
    }

    /// `renewing`: the binding a new vault inherits (`derive`), whose primary key must still be the TPM's and
    /// whose consent to an open lockout, if it had one, stands.
    func create(_ keyPair: KeyPair, root: (root: AccountRoot, account: UInt32)?, name: IdentityName, pin: PIN,
                kdf: (parameters: KDFParameters, chosen: Bool), replacing: Bool, boundToTPM: Bool = false,
                renewing: TPMSealedObject? = nil) throws -> Created {
        let vault = try Vault.seal(keyPair, root: root, name: name, pin: pin, kdf: kdf.parameters, kdfChosen: kdf.chosen,
                                   tpm: boundToTPM ? tpm() : nil, renewing: renewing)
        let backup = try vaults.create(vault, replacing: replacing)
        warnAboutPermissions(name)
        return Created(name: name, key: .ed25519(keyPair.publicKey), path: vaults.path(of: name), backup: backup)
    }

    /// Account `account` of an identity made from a recovery phrase, after its PIN; with `addingAs`, also kept as
    /// a new identity under the same PIN and cost.
    public func derive(name: IdentityName, account: UInt32, addingAs newName: IdentityName? = nil,
                       pin: () throws -> PIN) throws -> Created {
        if let newName, vaults.exists(newName) { throw VaultError.derivedNameTaken(name: newName.rawValue) }
        let key = try vaults.key(named: name)
        let vault = try key.vault(for: .derive)
        guard vault.account != nil, let kdf = vault.kdf else { throw KeystoreUseError.notFromPhrase(name.rawValue) }
        try key.checkReadyForPIN(in: self)
        let pin = try pin()
        guard let root = try vaults.unlockWithRoot(name, pin: pin).root else { throw KeystoreUseError.notFromPhrase(name.rawValue) }
        let keyPair = try root.keyPair(account: account)
        guard let newName else {
            return Created(name: name, key: .ed25519(keyPair.publicKey), path: vaults.path(of: name), backup: nil)
        }
        do {
            // A key from a TPM-bound phrase stays bound: deriving must not make an easier copy of it.
            return try create(keyPair, root: (root, account), name: newName, pin: pin, kdf: (kdf, vault.isKDFChosen), replacing: false,
                              boundToTPM: vault.isTPMBound, renewing: vault.tpmObject)
        } catch VaultError.alreadyExists(let existing) {
            throw VaultError.derivedNameTaken(name: existing)  // created meanwhile
        }
    }
}
