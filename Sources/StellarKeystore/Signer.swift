import StellarKeys
import StellarTransactions
/// What signs authorization entries: any key, Ed25519 or (as a smart account's External signer) a P-256 key in
/// the TPM (`TPMResidentKey`). Only an approved review (`SigningReview.approve`) reaches one.
package protocol AuthorizationSigning: Sendable {
    var name: IdentityName { get }
    var signerKey: AuthorizationSigner.Key { get }
    /// The signature of an authorization payload's digest (`AuthorizationPayload.digest`) as its credential
    /// holds it; one for another network is refused before the key is used.
    func signAuthorization(_ payload: AuthorizationPayload, on network: StellarNetwork) throws -> [UInt8]
    /// The same key as an Ed25519 `Signing`, nil for a P-256 key. A requirement rather than an `as? any Signing`
    /// cast, whose first use looks the conformance up by a scan of every conformance record in the binary, in
    /// every process that signs once (a session `sign`).
    var ed25519Key: (any Signing)? { get }
}

extension AuthorizationSigning {
    package var ed25519Key: (any Signing)? { nil }
}

/// A P-256 key, which signs a smart account's authorizations in the form its verifier checks (a WebAuthn
/// assertion, or the digest itself): a key in the TPM (`TPMResidentKey`), or one a signing agent holds
/// (`AgentP256Signer`).
protocol P256Signing: AuthorizationSigning {
    var form: P256SignatureForm { get set }
}

extension P256Signing {
    /// The same key, signing in `form`.
    func signing(in form: P256SignatureForm) -> Self {
        var key = self
        key.form = form
        return key
    }
}

/// What signs for an identity with an Ed25519 key: its key opened here (`CheckedKey`), in a token (`TokenKey`), or
/// held by a signing agent (`AgentSigner`). Each method gives the same bytes either way, since Ed25519 signatures
/// are deterministic; a remote one can fail. Only an approved review (`SigningReview.approve`) reaches one, so
/// that an app cannot sign without the review.
package protocol Signing: AuthorizationSigning {
    var publicKey: PublicKey { get }
    /// A raw Ed25519 signature of `bytes` (64 bytes).
    func sign(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8]
    /// A SEP-53 message signature (64 bytes).
    func signMessage(_ message: UnsafeRawBufferPointer) throws -> [UInt8]
    func signTransaction(_ envelope: TransactionEnvelope, on network: StellarNetwork) throws -> SignedTransaction
}

extension Signing {
    package var signerKey: AuthorizationSigner.Key { .ed25519(publicKey) }
    package var ed25519Key: (any Signing)? { self }
}

extension AuthorizationSigning {
    /// The entries of `plan`, made for `envelope`, each signed through `signAuthorization(_:on:)`.
    package func signAuthorizations(_ plan: AuthorizationPlan, in envelope: TransactionEnvelope, on network: StellarNetwork,
                                    expirationLedger: UInt32) throws -> SignedAuthorizations {
        try envelope.signing(plan, on: network, expirationLedger: expirationLedger) { try signAuthorization($0, on: network) }
    }
}

extension Signing {
    package var address: String { publicKey.accountID }
    package func sign(_ bytes: [UInt8]) throws -> [UInt8] { try bytes.withUnsafeBytes { try sign($0) } }
    package func signMessage(_ message: [UInt8]) throws -> [UInt8] { try message.withUnsafeBytes { try signMessage($0) } }
}

/// An opened identity: its key, for as long as the value lives. An app hands it to a session or an agent, or
/// exports its seed; it signs only through a review (`Keystore.review`).
public struct Signer: Signing {
    public let name: IdentityName
    let keyPair: KeyPair
    /// Whether it was made from a recovery phrase; nil when opened from a session, which does not say.
    public let isFromPhrase: Bool?

    package init(name: IdentityName, keyPair: KeyPair, isFromPhrase: Bool?) {
        self.name = name
        self.keyPair = keyPair
        self.isFromPhrase = isFromPhrase
    }

    public var publicKey: PublicKey { keyPair.publicKey }
    public var address: String { keyPair.publicKey.accountID }

    /// A raw Ed25519 signature of `bytes` (64 bytes), e.g. of a transaction hash.
    package func sign(_ bytes: [UInt8]) -> [UInt8] { keyPair.signature(for: bytes) }
    package func sign(_ bytes: UnsafeRawBufferPointer) -> [UInt8] { keyPair.signature(for: bytes) }

    /// A SEP-53 message signature (64 bytes).
    package func signMessage(_ message: [UInt8]) -> [UInt8] { keyPair.messageSignature(for: message) }
    package func signMessage(_ message: UnsafeRawBufferPointer) -> [UInt8] { keyPair.messageSignature(for: message) }

    /// The secret seed StrKey (`S…`) in guarded memory, for a deliberate backup.
    public func exportSecretSeed() -> SecureBytes { keyPair.secretSeedStrKey() }
}

extension Signer: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "Signer(\(name), \(address), key redacted)" }
    public var debugDescription: String { description }
}
