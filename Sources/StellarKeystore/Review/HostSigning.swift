import StellarKeys
import StellarText
import StellarTransactions

/// A host's request to sign, as stellar-cli's signer-plugin protocol sends one, its fields as the host wrote
/// them (read from its JSON by the caller; absent is nil): `sign_tx`, an envelope and the hash the host says it
/// has; `sign_auth`, a Soroban authorization's root invocation, nonce and expiration ledger, with its hash and the
/// address the signature is for. One call (`SigningRunner.run(_:as:in:keys:)`) decodes every field, rebuilds
/// what is signed, reviews it against what the host said (`SigningRequest`'s `expectedHash` and `forAddress`),
/// shows, approves, and gives back the answer's bytes. A host asks nobody mid-way: a risk not accepted up front
/// (`allowing`) is refused (`SigningRefusal`).
public struct HostSigning: Sendable {
    let mode: String
    let networkPassphrase: String
    let fields: [String: String]
    let nonce: Int64?
    let expirationLedger: UInt32?
    let allowing: AuthorizationRisks

    /// `fields`: the request's text fields by their names (`tx_env_xdr`, `tx_hash`, `payload`, `address`,
    /// `root_invocation`); `nonce` and `signatureExpirationLedger`: its integers.
    public init(mode: String, networkPassphrase: String, fields: [String: String], nonce: Int64? = nil,
                signatureExpirationLedger: UInt32? = nil, allowing: AuthorizationRisks = []) {
        self.mode = mode
        self.networkPassphrase = networkPassphrase
        self.fields = fields
        self.nonce = nonce
        self.expirationLedger = signatureExpirationLedger
        self.allowing = allowing
    }

    /// What the host gets back, and whether it is a list of them.
    public enum Answer: Sendable, Equatable {
        /// `sign_tx`: one `DecoratedSignature` (XDR) of the list the host reads.
        case decoratedSignature([UInt8])
        /// `sign_auth`: the signature `SCVal` (XDR) for the address.
        case authorizationSignature([UInt8])
    }

    func field<Value>(_ value: Value?, _ name: String) throws -> Value {
        guard let value else { throw HostRequestError.missing(name) }
        return value
    }

    func hash(_ name: String) throws -> [UInt8] {
        // A hash that is not hex is not the hash of anything signed here: the review's own refusal.
        guard let hash = Hex.bytes(try field(fields[name], name)) else { throw ReviewError.hashMismatch }
        return hash
    }

    func base64(_ name: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(Array(try field(fields[name], name).utf8)) else { throw HostRequestError.notBase64(name) }
        return bytes
    }
}

extension HostSigning: SigningTask {
    /// The whole envelope is reviewed and signed (through an agent too, which can then show it), and the
    /// signature taken from the signed envelope: never a bare hash.
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> Answer {
        let network = try StellarNetwork(passphrase: networkPassphrase)
        switch mode {
        case "sign_tx":
            let envelope = try TransactionEnvelope(base64: try field(fields["tx_env_xdr"], "tx_env_xdr"))
            let request = SigningRequest<SignedTransaction>.transaction(envelope, network: network, expectedHash: try hash("tx_hash"))
            let approval = try runner.run(request, with: try keystore.signingKey(as: identity, keys: keys))
            return .decoratedSignature(TransactionEnvelope.decoratedSignature(key: try approval.signer.ed25519Key(), signature: approval.signed.signature))
        case "sign_auth":
            let invocation = try base64("root_invocation")
            let preimage = try AuthorizationPreimage(network: network, nonce: try field(nonce, "nonce"),
                                                     signatureExpirationLedger: try field(expirationLedger, "signature_expiration_ledger"),
                                                     invocation: invocation)
            let request = SigningRequest<[UInt8]>.authorization(preimage, network: network, allowing: allowing, expectedHash: try hash("payload"),
                                                                forAddress: try base64("address"))
            let approval = try runner.run(request, with: try keystore.signingKey(as: identity, keys: keys))
            return .authorizationSignature(TransactionEnvelope.accountSignature(key: try approval.signer.ed25519Key(), signature: approval.signed))
        default:
            throw HostRequestError.unknownMode(TerminalText.escaped(mode))
        }
    }
}

/// A host's request that cannot be what it says: not JSON, or a field missing or not what it must be.
public enum HostRequestError: KeystoreError, Equatable {
    case unknownMode(String)
    case missing(String)
    case notBase64(String)
    /// Not a JSON object with a mode and a network passphrase.
    case malformed
    /// Not JSON, not an object, or a key given twice: what `StrictJSON` found.
    case unreadable(String)
    /// A field of another type than the protocol's: the field, and what it must be.
    case wrongType(String, String)

    public var message: String {
        switch self {
        case .malformed: "The signer-plugin request is not a JSON object with a mode and a network_passphrase."
        case .unreadable(let reason): "The signer-plugin request cannot be read: \(reason)."
        case .wrongType(let field, let expected): "The request's \(field) is not \(expected)."
        case .unknownMode(let mode): "Unknown mode '\(mode)'; expected sign_tx or sign_auth."
        case .missing(let field): "The request has no \(field)."
        case .notBase64(let field): "The request's \(field) is not base64."
        }
    }
}
