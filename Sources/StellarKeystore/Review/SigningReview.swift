import FoundationEssentials
import StellarKeys
import StellarTransactions

/// One request, checked and summarised for one key, waiting to be approved: the conversation every signing
/// path has.
///
/// ```swift
/// let review = try keystore.review(.transaction(envelope, network: .testnet), as: "alice",
///                                  keys: .automatic(agent: client, session: token))
/// show(review.summary.text)            // the same text on a terminal, in an agent's prompt, in an app
/// let signed = try review.approve(pin: { try PIN(askPIN()) }).signed
/// ```
///
/// Making it decodes the request strictly and runs every check that needs only the public key (the network of
/// a preimage, the account of a sign-in, which authorization entries are this key's); it touches no secret and
/// asks for nothing. `approve` asks for a PIN only when the key is the vault's (or a token's, or a P-256 key's in
/// the TPM), signs exactly what was reviewed, and checks each Ed25519 signature against the key's public key
/// before it returns it (a P-256 key's signature is not checked: no P-256 verifier is linked). A review is
/// approved at most once: it is consumed, and `approve` gives back what it showed (`Approval`), so that nothing is
/// read from a review after it is gone.
public struct SigningReview<Signed: Sendable>: ~Copyable, Sendable {
    /// The key that will sign: its identity, address and where it comes from.
    public let signer: SigningKey
    /// What a person must see before approving, rendered one way everywhere.
    public let summary: SigningSummary
    /// A consent the request needs beyond a PIN (an authorization that is not strict, or binds no address); `approve` refuses
    /// without it.
    public let consentNeeded: SigningConsent?
    let request: SigningRequest<Signed>
    let clientDomainIdentity: IdentityName?

    public var keySource: KeySource { signer.source }

    /// `summarizing` false: nobody will read the summary (a signing agent that asks nobody), so it is not made;
    /// every check still runs.
    init(_ request: SigningRequest<Signed>, key: SigningKey, now: Date, summarizing: Bool = true) throws {
        // A P-256 key signs only a smart account's authorizations (never for an address a host names); every
        // other request needs an Ed25519 key.
        if case .p256 = key.key {
            switch request.content {
            case .authorizations(_, _, _, .smartAccount, _): break
            case .preimage(_, _, .some, _) where request.address == nil: break
            default: throw ReviewError.onlySmartAccounts
            }
        }
        let identity = (name: key.name.rawValue, key: key.key)
        func ed25519() throws -> (name: String, key: PublicKey) {
            guard let publicKey = key.publicKey else { throw ReviewError.onlySmartAccounts }
            return (key.name.rawValue, publicKey)
        }
        let summary: () -> SigningSummary
        var consent: SigningConsent?
        var clientDomain: IdentityName?
        switch request.content {
        case .payload(let bytes):
            let signingAs = try ed25519()
            summary = { .payload(bytes, signingAs: signingAs) }
        case .message(let bytes):
            let signingAs = try ed25519()
            summary = { .message(bytes, signingAs: signingAs) }
        case .transaction(let envelope, let network):
            let signingAs = try ed25519()
            if let expected = request.expectedHash, expected != envelope.hash(on: network) { throw ReviewError.hashMismatch }
            try request.checkTrimmable(envelope, on: network, adding: signingAs.key)
            summary = { .transaction(envelope, on: network, signingAs: signingAs, now: now, accounts: request.accounts,
                                     request: request.transactionRequest?.checked) }
            if request.transactionRequest?.networkNeedsConsent == true { consent = SigningConsent(requestedNetwork: network) }
        case .authorizations(let envelope, let network, let expirationLedger, let account, let allowing):
            let plan = try envelope.authorizationPlan(for: try AuthorizationSigner(signingKey: key.key, for: account),
                                                      expirationLedger: expirationLedger)
            consent = SigningConsent(needed: plan.risks.subtracting(allowing), notStrict: plan.notStrict,
                                     notAddressBound: plan.notAddressBound)
            summary = { .authorizations(in: envelope, on: network, plan: plan, expirationLedger: expirationLedger, signingAs: identity) }
        case .preimage(let preimage, let network, let contextRuleIDs, let allowing):
            // A preimage for another network is never summarised as if it were for this one.
            try preimage.check(on: network)
            if let expected = request.expectedHash, expected != preimage.hash { throw ReviewError.hashMismatch }
            // An `SCAddress` of type account (0) holding an Ed25519 key (0): this key's, or nothing is signed.
            if let address = request.address, address != [0, 0, 0, 0, 0, 0, 0, 0] + (try ed25519()).key.rawRepresentation {
                throw ReviewError.notThisAddress
            }
            if let contextRuleIDs, contextRuleIDs.isEmpty || contextRuleIDs.count > SmartAccountCredential.maximumContextRules {
                throw contextRuleIDs.isEmpty ? SmartAccountError.noContextRules : SmartAccountError.tooManyContextRules(contextRuleIDs.count)
            }
            if let contextRuleIDs, contextRuleIDs.count != preimage.contextCount {
                throw AuthorizationError.contextRulesMismatch(entry: nil, contexts: preimage.contextCount, given: contextRuleIDs.count)
            }
            if preimage.boundAddress == nil && !allowing.contains(.notAddressBound) {
                consent = SigningConsent(needed: .notAddressBound, notStrict: [], notAddressBound: [])
            }
            summary = { .preimage(preimage, on: network, signingAs: identity, contextRuleIDs: contextRuleIDs) }
        case .signIn(let challenge, let clientDomainIdentity):
            let signingAs = try ed25519()
            if case .agent = key.holder { throw ReviewError.signInThroughAgent }
            guard key.address == challenge.expectation.clientAccount else {
                throw WebAuthSigningError.notTheAccount(signer: key.address, account: challenge.expectation.clientAccount)
            }
            clientDomain = try Self.checkClientDomain(challenge.expectation.clientDomain, identity: clientDomainIdentity, key: key)
            summary = { .signIn(challenge, signingAs: signingAs) }
        case .contractSignIn(let challenge, let signer, let clientDomainIdentity, let allowing):
            let signingAs = try ed25519()
            (clientDomain, consent) = try Self.checkContractSignIn(challenge, as: signer, clientDomainIdentity: clientDomainIdentity,
                                                                   allowing: allowing, key: key)
            summary = { .contractSignIn(challenge, as: signer, signingAs: signingAs) }
        case .batch(let kind):
            let signingAs = try ed25519()
            let rawBytes = if case .payloads = kind { true } else { false }
            summary = { .batch(kind.description, network: request.network, signingAs: signingAs, rawBytes: rawBytes) }
        }
        self.summary = summarizing ? summary() : .notMade
        self.signer = key
        self.request = request
        consentNeeded = consent
        clientDomainIdentity = clientDomain
    }

    /// Signs what was reviewed, with the PIN from `pin` when the key is the vault's (asked once the vault is
    /// known to be ready; not at all for an agent, a session or a held key), and with `consent` when the review
    /// needs one. Every signature is checked against the signer's public key before it is returned (a held key's
    /// by whoever it is returned to: an agent's client).
    public consuming func approve(consent: SigningConsent? = nil, pin: () throws -> PIN) throws -> Approval<Signed> {
        try approve(consent: consent, pinFor: { _ in try pin() })
    }

    /// `approve(consent:pin:)` with the PIN known, off the caller's actor: Argon2id takes a noticeable fraction
    /// of a second, which an app's main thread must not wait for.
    @concurrent
    public consuming func approve(consent: SigningConsent? = nil, pin: PIN) async throws -> Approval<Signed> {
        try approve(consent: consent, pinFor: { _ in pin })
    }

    /// `approve(consent:pin:)`, for a request two identities sign (a sign-in with a client domain): `pinFor` is
    /// asked for each identity's PIN by name.
    public consuming func approve(consent: SigningConsent? = nil, pinFor: (IdentityName) throws -> PIN) throws -> Approval<Signed> {
        if let needed = consentNeeded, consent != needed { throw needed.refusal }
        let key = try signer.opened(pin: pinFor)
        let clientDomain = try clientDomainIdentity.map { name -> any Signing in
            // The same identity for both: its key is open already, and its PIN is not asked twice.
            if name == signer.name { return try ed25519(key) }
            guard let keystore = signer.keystore else { throw WebAuthSigningError.clientDomainSignerMismatch }
            return CheckedKey(try keystore.signIn(name: name) { try pinFor(name) })
        }
        let signed = try request.sign(key, clientDomain, summary.transaction.flatMap { Hex.bytes($0.hash) })
        return Approval(signed: signed, summary: summary, signer: signer)
    }
}

/// What an approved review gives back: the result, and the summary and signer that were reviewed for it.
///
/// A caller that prints the summary after signing reads it here, never from the consumed review: a copy read from
/// a review before `approve` consumed it was used after the review was freed in an optimized build (Swift 6.3.1
/// held the copy as a borrow of the review's storage).
public struct Approval<Signed: Sendable>: Sendable {
    /// What was signed: the signature, or the envelope or entries with it.
    public let signed: Signed
    /// The summary the review made (not made when nobody was to read it).
    public let summary: SigningSummary
    /// The key that signed.
    public let signer: SigningKey
}

extension SigningKey {
    /// The key, opened to sign: a stored key with its PIN, as its kind opens it (a vault read when the key was
    /// found is not read again unless its file changed), the session's read
    /// again (so that a session ended meanwhile signs nothing), the agent's as it is (the agent checks its own
    /// holding, and each Ed25519 signature it returns is checked), or the held one.
    func opened(pin: (IdentityName) throws -> PIN) throws -> any AuthorizationSigning {
        switch holder {
        case .agent(let agent):
            return agent
        case .agentP256(let agent):
            return agent
        case .held(let signer):
            // A signing agent's own key: whoever asked it checks every signature it answers with (`AgentSigner`
            // trusts no agent), so a second check here would only halve the agent's speed.
            return signer
        case .session(let token, let owner):
            guard let keystore else { throw SessionError.ended }
            let session = try keystore.sessions.session(for: token, identity: owner)
            guard session.keyPair.publicKey == publicKey else { throw SessionError.vaultChanged(name: name.rawValue) }
            return CheckedKey(Signer(name: name, keyPair: session.keyPair, isFromPhrase: nil))
        case .stored(let key):
            guard let keystore else { throw SessionError.ended }
            return try key.open(pin: pin(name), in: keystore)
        }
    }
}

/// Why a review cannot go on.
public enum ReviewError: KeystoreError, Equatable {
    /// A sign-in was to go through a signing agent, which could show it only as the hash it signs.
    case signInThroughAgent
    /// A signature made for this address does not verify against its public key: nothing was returned.
    case signatureInvalid(String)
    /// A key that needs a PIN, where none can be asked.
    case noPIN
    /// The hash the caller was told it signs is not the hash of what it asks to sign.
    case hashMismatch
    /// The signature is asked for another address than the key's account.
    case notThisAddress
    /// A P-256 key (in the TPM) was asked for something other than a smart account's authorization.
    case onlySmartAccounts

    public var message: String {
        switch self {
        case .signInThroughAgent: "A sign-in is not signed through the signing agent, which could show it only as a hash; nothing was signed."
        case .signatureInvalid(let address): "The signature made for \(address) does not verify against its public key; nothing was returned."
        case .noPIN: "This key needs its PIN, and none can be asked here; nothing was signed."
        case .hashMismatch: "The hash in the request is not the hash of what it asks to sign; nothing was signed."
        case .notThisAddress: "The request asks for another address's signature than this identity's; nothing was signed."
        case .onlySmartAccounts: "A P-256 key has no Stellar account: it signs only a smart account's authorizations, with the account, its verifier and its rules given; nothing was signed."
        }
    }
}

/// What a person must agree to, in words, besides the summary: the risks of authorization signatures
/// (`AuthorizationRisks`) that were not accepted when the request was made.
public struct SigningConsent: Sendable, Equatable {
    /// The risks agreed to.
    public let risks: AuthorizationRisks
    /// The entries (1-based) each risk concerns; none for a bare preimage.
    public let notStrict: [Int]
    public let notAddressBound: [Int]
    /// The network a SEP-7 request names (or the public network it means by naming none), when the caller gave
    /// none to check it against: signed for only once a person agrees.
    public let requestedNetwork: StellarNetwork?

    /// nil when `needed` is empty.
    init?(needed: AuthorizationRisks, notStrict: [Int], notAddressBound: [Int]) {
        guard !needed.isEmpty else { return nil }
        risks = needed
        self.notStrict = needed.contains(.notStrict) ? notStrict : []
        self.notAddressBound = needed.contains(.notAddressBound) ? notAddressBound : []
        requestedNetwork = nil
    }

    init(requestedNetwork: StellarNetwork) {
        risks = []
        notStrict = []
        notAddressBound = []
        self.requestedNetwork = requestedNetwork
    }

    /// One sentence per risk, for a person to answer yes to.
    public var question: String {
        var sentences: [String] = []
        if let requestedNetwork {
            sentences.append("The request is for \(requestedNetwork.shownBriefly), and no network was given: the signature counts there only.")
        }
        func entries(_ numbers: [Int], _ one: String, _ many: String) -> String {
            numbers.count == 1 ? "Authorization \(numbers[0]) \(one)" : "Authorizations \(numbers.map(String.init).joined(separator: ", ")) \(many)"
        }
        if risks.contains(.notStrict) {
            sentences.append(entries(notStrict, "is not strict: its root is not this transaction's call, so its signature could be used by another transaction.",
                                     "are not strict: their root is not this transaction's call, so their signatures could be used by another transaction."))
        }
        if risks.contains(.notAddressBound) {
            let subject = notAddressBound.isEmpty ? "The preimage is a V1 payload" : entries(notAddressBound, "is a V1 payload", "are V1 payloads")
            sentences.append(subject + ", which binds no address: another address that accepts this key could replay the signature as its own credential (CAP-71-02).")
        }
        return sentences.joined(separator: " ")
    }

    /// The error of a request whose consent was not given: its first risk's.
    public var refusal: KeystoreError {
        if let requestedNetwork { return TransactionRequestError.networkNotConfirmed(requestedNetwork.shownBriefly) }
        if risks.contains(.notStrict), let first = notStrict.first { return AuthorizationError.notStrict(entry: first) }
        return AuthorizationError.notAddressBound(entries: notAddressBound)
    }
}
