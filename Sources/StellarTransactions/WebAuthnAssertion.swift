import StellarKeys

// What a P-256 key signs for an account, read at OpenZeppelin/stellar-contracts
// 8af46e2c3ba3501ff6ddd0a5d72290e410ace9ca:
//   packages/accounts/src/smart_account/storage.rs  `authenticate` (l. 341-359) passes the verifier the 32-byte
//       auth_digest = SHA-256(signature_payload ‖ XDR(context_rule_ids)) of `do_check_auth` (l. 493-495) as its
//       `signature_payload`, and the signer's `key_data` and signature value (`sig_data`) as registered and given.
//   examples/multisig-smart-account/webauthn-verifier/src/contract.rs  `verify` (l. 51-64): `sig_data` is the XDR of
//       a `WebAuthnSigData`, `key_data` the 65-byte point, then any credential id.
//   packages/accounts/src/verifiers/webauthn.rs  `WebAuthnSigData` (l. 92-101), a `#[contracttype]` struct, so an
//       SCV_MAP keyed by its field names in order: authenticator_data, client_data, signature (BytesN<64>).
//       `verify` (l. 302-359): client data at most 1024 bytes (l. 320); parsed as JSON for "type" and "challenge"
//       (l. 324-327, serde_json_core: other fields ignored); type "webauthn.get" (l. 121-126); challenge the
//       base64url, unpadded, of the payload's first 32 bytes (l. 151-163); authenticator data at least 37 bytes
//       (l. 338); flags (its byte 32) with UP (l. 184-189) and UV (l. 217-221), and not BS without BE (l. 257-261);
//       then secp256r1_verify(key, SHA-256(authenticator_data ‖ SHA-256(client_data)), signature) (l. 350-356),
//       which takes only a low S (P256Signature). Not checked (l. 9-25): the origin, the rpIdHash, the counter.
// The host's secp256r1_verify: stellar/rs-soroban-env v26.1.4, soroban-env-host/src/crypto/mod.rs (l. 99-117,
// 168-195): `verify_prehash` of the 32-byte message digest given.

/// A WebAuthn assertion (W3C WebAuthn Level 2, §6.1 and §5.8.1) made without a browser, for OpenZeppelin's WebAuthn
/// verifier: the authenticator data and client data that a P-256 key signs through, for a 32-byte challenge (the
/// digest a smart account's signers sign). The key signs `messageDigest`; `signatureData` is the `sig_data` the
/// verifier decodes.
package struct WebAuthnAssertion: Sendable, Equatable {
    /// The authenticator data flags (WebAuthn §6.1): the verifier needs UP and UV, and refuses BS without BE.
    package struct Flags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// UP: a user was present.
        package static let userPresent = Flags(rawValue: 0x01)
        /// UV: the user was verified (a PIN, a biometric).
        package static let userVerified = Flags(rawValue: 0x04)
        /// BE: the credential may be backed up (synced).
        package static let backupEligible = Flags(rawValue: 0x08)
        /// BS: the credential is backed up.
        package static let backedUp = Flags(rawValue: 0x10)
    }

    /// The relying party whose SHA-256 the authenticator data starts with. The verifier does not check it; this
    /// name is reserved (RFC 2606, RFC 6761 §6.4), so no website can ever be the relying party of such an assertion.
    package static let defaultRelyingPartyID = "keystore.invalid"
    /// The client data the verifier reads at most (webauthn.rs, `CLIENT_DATA_MAX_LEN`).
    package static let maximumClientDataSize = 1024

    /// The 32 bytes the assertion is for.
    package let challenge: [UInt8]
    /// rpIdHash (32) ‖ flags (1) ‖ signature counter (4, zero: the verifier keeps none; a key kept in a TPM is not
    /// cloned).
    package let authenticatorData: [UInt8]
    /// `{"type":"webauthn.get","challenge":"<base64url of the challenge, unpadded>"}`: only what the verifier reads.
    package let clientDataJSON: [UInt8]

    /// For `challenge`, the 32-byte digest the verifier is given. Refused: a challenge of another length; flags
    /// without UP or UV, BS without BE, or bits other than these four (AT and ED say data follows, and none does).
    package init(challenge: [UInt8], relyingPartyID: String = Self.defaultRelyingPartyID,
                flags: Flags = [.userPresent, .userVerified]) throws {
        guard challenge.count == 32 else { throw P256Error.digestLength(challenge.count) }
        guard flags.contains(.userPresent) else { throw P256Error.flagsRefused("no user presence (UP), which the verifier requires") }
        guard flags.contains(.userVerified) else { throw P256Error.flagsRefused("no user verification (UV), which the verifier requires") }
        guard flags.contains(.backupEligible) || !flags.contains(.backedUp) else {
            throw P256Error.flagsRefused("backed up (BS) but not backup eligible (BE), which the verifier refuses")
        }
        let known: Flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
        guard known.isSuperset(of: flags) else {
            throw P256Error.flagsRefused("0x\(Hex.string([flags.rawValue])) has bits other than UP, UV, BE and BS")
        }
        self.challenge = challenge
        authenticatorData = Array(relyingPartyID.utf8).withUnsafeBytes { Sodium.sha256($0) } + [flags.rawValue, 0, 0, 0, 0]
        clientDataJSON = Array(#"{"type":"webauthn.get","challenge":""#.utf8) + Self.base64URL(challenge) + Array(#""}"#.utf8)
    }

    /// SHA-256(authenticatorData ‖ SHA-256(clientDataJSON)) (WebAuthn §7.2 steps 19-20): the 32 bytes the key signs
    /// with ECDSA, as a digest, not hashed again.
    package var messageDigest: [UInt8] {
        let clientDataHash = clientDataJSON.withUnsafeBytes { Sodium.sha256($0) }
        return authenticatorData.withUnsafeBytes { data in clientDataHash.withUnsafeBytes { Sodium.sha256(parts: [data, $0]) } }
    }

    /// The verifier's `sig_data`: the XDR of `WebAuthnSigData { authenticator_data, client_data, signature }`, an
    /// SCV_MAP keyed by those symbols in that order, with `signature`'s r ‖ s (s low).
    package func signatureData(_ signature: P256Signature) -> [UInt8] {
        [0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 3]  // SCV_MAP, present, three fields
            + SmartAccountCredential.symbol("authenticator_data") + SmartAccountCredential.bytes(authenticatorData)
            + SmartAccountCredential.symbol("client_data") + SmartAccountCredential.bytes(clientDataJSON)
            + SmartAccountCredential.symbol("signature") + SmartAccountCredential.bytes(signature.rawRepresentation)
    }

    /// `signatureData` of the signature (r, s) the key made of `messageDigest`; a high s is made low. Refused as
    /// `P256Signature` refuses.
    package func signatureData(r: [UInt8], s: [UInt8]) throws -> [UInt8] {
        signatureData(try P256Signature(r: r, s: s))
    }

    /// RFC 4648 §5, without padding.
    static func base64URL(_ bytes: [UInt8]) -> [UInt8] {
        var standard: [UInt8] = []
        Base64.encode(bytes, into: &standard)
        return standard.compactMap { character in
            switch character {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "="): nil
            default: character
            }
        }
    }
}

/// How an account verifies a P-256 key's signature, so what the key signs for a 32-byte account digest and what
/// goes in the account's credential.
public enum P256SignatureForm: String, Sendable, CaseIterable {
    /// OpenZeppelin's WebAuthn verifier: the key signs a `WebAuthnAssertion`'s `messageDigest` for the digest (with
    /// the default relying party and flags UP and UV); the credential holds its `signatureData`.
    case webAuthn
    /// A verifier that calls the host's `secp256r1_verify` on the digest itself: the key signs the digest; the
    /// credential holds r ‖ s, s low (64 bytes).
    case secp256r1

    /// The 32 bytes the key signs with ECDSA (as a digest, not hashed again) for `digest`, the account's digest
    /// (`AuthorizationPayload.digest`). Refused: a digest that is not 32 bytes.
    package func digestToSign(for digest: [UInt8]) throws -> [UInt8] {
        switch self {
        case .webAuthn: return try WebAuthnAssertion(challenge: digest).messageDigest
        case .secp256r1:
            guard digest.count == 32 else { throw P256Error.digestLength(digest.count) }
            return digest
        }
    }

    /// The signature value for the account's credential, from the signature (r, s) the key made of
    /// `digestToSign(for: digest)`; a high s is made low. Refused: a digest that is not 32 bytes, r or s out of range.
    package func credentialSignature(r: [UInt8], s: [UInt8], for digest: [UInt8]) throws -> [UInt8] {
        let signature = try P256Signature(r: r, s: s)
        switch self {
        case .webAuthn: return try WebAuthnAssertion(challenge: digest).signatureData(signature)
        case .secp256r1:
            guard digest.count == 32 else { throw P256Error.digestLength(digest.count) }
            return signature.rawRepresentation
        }
    }

    /// The longest `credentialSignature` of any form, in bytes: what a credential grows by, at most, for the value.
    package static let largestCredentialSignature = 292
}
