import StellarKeys
import StellarTransactions

/// An identity's key in a PKCS#11 token, through a session logged in to it: the token signs, and each signature
/// it returns is checked against the public key the vault recorded before it is used, so that a token that
/// answers with another key's signature, or with garbage, gives an error and never a signature.
package struct TokenKey: Signing {
    package let name: IdentityName
    let reference: PKCS11KeyReference
    let session: PKCS11Session

    package var publicKey: PublicKey { reference.publicKey }

    /// Logs in to the token `reference` names with its user PIN and finds the key by its id: a key whose public
    /// key is not the recorded one is not the identity's (replaced behind keystore's back), and is never used.
    static func open(_ reference: PKCS11KeyReference, name: IdentityName, pin: PIN) throws -> TokenKey {
        let session = try PKCS11Session(module: try PKCS11Module(path: reference.module), token: reference.tokenSerial,
                                        label: reference.tokenLabel)
        try session.login(pin: pin.bytes)
        let found = try session.keys(label: nil, id: reference.keyID)
        guard !found.isEmpty else { throw TokenError.keyNotFound(id: reference.keyID) }
        guard found.contains(where: { $0.publicKey == reference.publicKey }) else {
            throw TokenError.notTheIdentitysKey(id: reference.keyID, address: reference.publicKey.accountID)
        }
        return TokenKey(name: name, reference: reference, session: session)
    }

    package func sign(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        let message = Array(bytes)
        let signature = try session.sign(message, key: reference.keyID)
        guard publicKey.isValidSignature(signature, for: message) else { throw ReviewError.signatureInvalid(publicKey.accountID) }
        return signature
    }

    package func signMessage(_ message: UnsafeRawBufferPointer) throws -> [UInt8] {
        try sign(SignedMessage.hash(of: message))
    }

    package func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction {
        try envelope.signed(by: publicKey, on: network) { hash in try sign(hash) }
    }

    package func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8] {
        try payload.preimage.check(on: network)
        return try sign(payload.digest)
    }
}

extension VaultStore {
    /// Logs in to the token of a version 4 vault with its PIN, counted as every PIN tried here is (the token
    /// counts too, and may lock itself: its message is the one given), refused while a wait after wrong PINs
    /// runs; the vault must still be the one read (`VaultError.changedWhileWaiting`).
    func openToken(_ seen: Reading, pin: PIN) throws -> TokenKey {
        let name = seen.vault.name
        if let wait = attempts.secondsUntilNextAttempt(name) { throw VaultError.throttled(secondsLeft: wait) }
        let vault = try self.vault(named: name)
        guard vault == seen.vault, let reference = vault.token else { throw VaultError.changedWhileWaiting(name: name.rawValue) }
        let (before, _) = try attempts.record(name)
        do {
            let key = try TokenKey.open(reference, name: name, pin: pin)
            try? attempts.clear(name)
            return key
        } catch let error as TokenError where error.countsAsTried {
            throw error
        } catch {
            try? attempts.restore(name, to: before)
            throw error
        }
    }
}

extension Keystore {
    /// Refuses, before its PIN is asked, a token that cannot take one: its module not loadable, the token not
    /// there, or its user PIN locked.
    func checkTokenReady(_ reference: PKCS11KeyReference) throws {
        let module = try PKCS11Module(path: reference.module)
        guard let token = try module.tokens().first(where: { $0.serial == reference.tokenSerial && $0.label == reference.tokenLabel }) else {
            throw TokenError.tokenNotFound(serial: reference.tokenSerial, label: reference.tokenLabel)
        }
        if token.pinLocked { throw TokenError.pinLocked(token: reference.tokenLabel) }
    }
}
