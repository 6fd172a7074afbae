import StellarKeys
import StellarTransactions

/// What a key is asked to sign, and what signing it gives back (`Signed`): a signature, a signed envelope, or a
/// batch signer. It is reviewed first (`Keystore.review(_:as:keys:)`), which decodes and checks it in full and
/// makes its summary, and signed only when that review is approved.
public struct SigningRequest<Signed: Sendable>: Sendable {
    enum Content: Sendable {
        case payload([UInt8])
        case message([UInt8])
        case transaction(TransactionEnvelope, StellarNetwork)
        case authorizations(TransactionEnvelope, StellarNetwork, expirationLedger: UInt32, account: AuthorizationAccount,
                            allowing: AuthorizationRisks)
        case preimage(AuthorizationPreimage, StellarNetwork, contextRuleIDs: [UInt32]?, allowing: AuthorizationRisks)
        case signIn(WebAuthChallenge, clientDomainIdentity: IdentityName?)
        case contractSignIn(ContractWebAuthChallenge, AuthorizationSigner, clientDomainIdentity: IdentityName?, allowing: AuthorizationRisks)
        case batch(SigningBatch.Kind)
    }

    let content: Content
    /// What the caller was told it signs, checked by the review: the hash (of a transaction, or of a preimage),
    /// and the `SCAddress` a preimage's signature is for.
    var expectedHash: [UInt8]? = nil
    var address: [UInt8]? = nil
    /// For a transaction: the signers and thresholds of the accounts it needs, known to the caller, which its
    /// summary shows against the signatures present (nil: not shown).
    var accounts: [AccountSigners]? = nil
    /// The SEP-7 request a transaction came in (`SigningRequest.transaction(_:network:)`), and whether its network
    /// still needs a person's consent.
    var transactionRequest: (checked: TransactionRequest.Checked, networkNeedsConsent: Bool)? = nil
    /// For a transaction: whether the signatures the network would refuse it for are taken out after signing
    /// (`SigningRequest.transaction(_:network:expectedHash:accounts:trimming:)`).
    var trimming = false
    /// Signs with the approved key; `clientDomain` is the second signer a sign-in may need, `hash` the
    /// transaction hash the review computed (so that one command hashes a transaction once).
    let sign: @Sendable (_ key: any AuthorizationSigning, _ clientDomain: (any Signing)?, _ hash: [UInt8]?) throws -> Signed

    /// Whether the request is for a Stellar network, and which: nil for raw bytes and SEP-53 messages, which
    /// say nothing of one.
    public var network: StellarNetwork? {
        switch content {
        case .payload, .message: nil
        case .transaction(_, let network), .authorizations(_, let network, _, _, _), .preimage(_, let network, _, _): network
        case .signIn(let challenge, _): challenge.expectation.network
        case .contractSignIn(let challenge, _, _, _): challenge.expectation.network
        case .batch(let kind): if case .transactions(let network) = kind { network } else { nil }
        }
    }
}

extension SigningRequest where Signed == [UInt8] {
    /// Raw bytes, signed with Ed25519 as they are. Nothing says what they mean: a transaction hash on any network,
    /// an authorization for any address. The summary says so.
    public static func payload(_ bytes: [UInt8]) -> Self {
        Self(content: .payload(bytes)) { key, _, _ in try ed25519(key).sign(bytes) }
    }

    /// A SEP-53 message: Ed25519 over SHA-256("Stellar Signed Message:\n" + message).
    public static func message(_ bytes: [UInt8]) -> Self {
        Self(content: .message(bytes)) { key, _, _ in try ed25519(key).signMessage(bytes) }
    }

    /// A Soroban authorization preimage (what SEP-43's `signAuthEntry` receives): the signature of its SHA-256,
    /// or with `contextRuleIDs`, a smart account's signer's signature for those rules (`AuthorizationPayload`).
    /// One for another network is refused by the review; a V1 preimage, which binds no address, needs
    /// `.notAddressBound` in `allowing` or the consent the review asks for. A caller that was told what to sign by
    /// a host (stellar-cli's signer plugins) passes what it was told: `expectedHash`, the preimage's SHA-256, and
    /// `forAddress`, the `SCAddress` XDR the signature is for, which must be the key's account; the review
    /// refuses a request whose parts disagree.
    /// A P-256 key (in the TPM) signs only with `contextRuleIDs`, in `p256Form`: what the smart account's
    /// verifier checks.
    public static func authorization(_ preimage: AuthorizationPreimage, network: StellarNetwork, contextRuleIDs: [UInt32]? = nil,
                                     allowing: AuthorizationRisks = [], expectedHash: [UInt8]? = nil,
                                     forAddress address: [UInt8]? = nil, p256Form: P256SignatureForm = .webAuthn) -> Self {
        Self(content: .preimage(preimage, network, contextRuleIDs: contextRuleIDs, allowing: allowing),
             expectedHash: expectedHash, address: address) { key, _, _ in
            try signing(key, p256Form).signAuthorization(AuthorizationPayload(preimage: preimage, contextRuleIDs: contextRuleIDs), on: network)
        }
    }

    /// A SEP-10 challenge that passed every check (`WebAuthChallenge`), signed by its client account and, when it
    /// carries a client domain, by `clientDomainIdentity`, whose key must be that domain's: the envelope to send
    /// back. A sign-in is never signed through a signing agent, whose protocol could show it only as a hash.
    public static func signIn(_ challenge: WebAuthChallenge, clientDomainIdentity: IdentityName? = nil) -> Self {
        Self(content: .signIn(challenge, clientDomainIdentity: clientDomainIdentity)) { key, clientDomain, _ in
            try challenge.signed(by: try ed25519(key), clientDomainSigner: clientDomain)
        }
    }
}

extension SigningRequest where Signed == SignedTransaction {
    /// A transaction envelope for `network`: signed by appending one signature, or given back unchanged when it
    /// holds this key's signature already. `expectedHash`: the transaction hash the caller was told it signs (a
    /// signer plugin's `tx_hash`); the review refuses an envelope whose hash on `network` is another.
    /// `accounts`: the signers and thresholds of the accounts it needs, as far as known (`AccountSigners`): its
    /// summary then says whether the signatures, this key's included, meet them.
    /// `trimming`: the signatures the network would refuse the transaction for (`tx_bad_auth_extra`) are taken
    /// out of the signed envelope (`SignedTransaction.removed` says which). The review refuses, before any PIN,
    /// what cannot be trimmed: an account it needs missing from `accounts`, a fee bump's extra inner signature,
    /// or a signature by this key that would be extra itself (`TrimError`).
    public static func transaction(_ envelope: TransactionEnvelope, network: StellarNetwork, expectedHash: [UInt8]? = nil,
                                   accounts: [AccountSigners]? = nil, trimming: Bool = false) -> Self {
        var request = Self(content: .transaction(envelope, network), expectedHash: expectedHash, accounts: accounts) { key, _, hash in
            let signed = if let key = key as? CheckedKey, let hash { try key.signTransaction(envelope, hash: hash) }
                         else { try ed25519(key).signTransaction(envelope, on: network) }
            return trimming ? try signed.trimmed(on: network, accounts: accounts ?? []).signed : signed
        }
        request.trimming = trimming
        return request
    }
}

extension SigningRequest where Signed == SignedAuthorizations {
    /// The Soroban authorization entries of `envelope` that ask for `account` (the key's own by default: its
    /// entries and the delegate nodes that name it), valid through `expirationLedger`. The risks an entry carries
    /// (not strict; a V1 payload, bound to no address) are accepted in `allowing`, or by the consent the review
    /// asks for (`SigningReview.consentNeeded`).
    /// A P-256 key (in the TPM) signs only for a smart account, in `p256Form`: what its verifier checks.
    public static func authorizations(in envelope: TransactionEnvelope, network: StellarNetwork, expirationLedger: UInt32,
                                      for account: AuthorizationAccount = .ownAccount, allowing: AuthorizationRisks = [],
                                      p256Form: P256SignatureForm = .webAuthn) -> Self {
        Self(content: .authorizations(envelope, network, expirationLedger: expirationLedger, account: account, allowing: allowing)) { key, _, _ in
            // The review checked every entry and found the consent its risks need, or refused.
            let plan = try envelope.authorizationPlan(for: try AuthorizationSigner(signingKey: key.signerKey, for: account),
                                                      expirationLedger: expirationLedger)
            return try signing(key, p256Form).signAuthorizations(plan, in: envelope, on: network, expirationLedger: expirationLedger)
        }
    }
}

extension SigningRequest where Signed == SigningBatch {
    /// A key opened in this process signs a batch without checking each signature, which would cost more than
    /// making it, at thousands a second; a key held elsewhere (an agent) is checked as ever.
    static func batchKey(_ key: any AuthorizationSigning) throws -> any Signing {
        let key = try ed25519(key)
        return (key as? CheckedKey)?.signer ?? key
    }

    /// Many raw payloads with one key, each request a JSON line (`SigningBatch`); none is shown one by one.
    public static func payloads(encoding: SigningBatch.Encoding) -> Self {
        Self(content: .batch(.payloads(encoding))) { key, _, _ in SigningBatch(kind: .payloads(encoding), key: try batchKey(key)) }
    }

    /// Many SEP-53 messages with one key.
    public static func messages(encoding: SigningBatch.Encoding) -> Self {
        Self(content: .batch(.messages(encoding))) { key, _, _ in SigningBatch(kind: .messages(encoding), key: try batchKey(key)) }
    }

    /// Many transaction envelopes for `network` with one key.
    public static func transactions(network: StellarNetwork) -> Self {
        Self(content: .batch(.transactions(network))) { key, _, _ in SigningBatch(kind: .transactions(network), key: try batchKey(key)) }
    }
}

/// The Ed25519 key a request other than an authorization needs: a P-256 key never gets this far (the review
/// refuses it), and would be refused here again.
func ed25519(_ key: any AuthorizationSigning) throws -> any Signing {
    guard let key = key.ed25519Key else { throw ReviewError.onlySmartAccounts }
    return key
}

/// `key`, set to sign in `form` if it is a P-256 key.
func signing(_ key: any AuthorizationSigning, _ form: P256SignatureForm) -> any AuthorizationSigning {
    (key as? any P256Signing)?.signing(in: form) ?? key
}
