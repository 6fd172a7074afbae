import StellarKeys
import StellarText

/// Why a SEP-7 transaction request (`TransactionRequest`) is not signed: it cannot be read, its origin does not
/// check out, or its network is not the one given.
public enum TransactionRequestError: KeystoreError, Equatable {
    case notARequest
    /// A SEP-7 URI for another operation than `tx` (`pay`).
    case notTransaction(String)
    case tooLarge(Int)
    case malformed(String)
    case badEscape(String)
    case notUTF8(String)
    case unknownParameter(String)
    case repeatedParameter(String)
    /// `replace`: the signer would fill in fields (SEP-11) and sign something it was not shown.
    case replaceUnsupported
    case noEnvelope
    case messageTooLong(Int)
    case badCallback(String)
    case badPubkey(String)
    case badOriginDomain(String)
    case badSignatureEncoding
    /// Something follows `signature`, which covers only what precedes it.
    case signatureNotLast
    case badChain
    case chainTooDeep

    // The request's origin (SEP-7, "Request Signing"):
    /// A `signature` but no `origin_domain`: no key to check it with.
    case signedWithoutOrigin
    /// An `origin_domain` with no `signature`: SEP-7 says such a request is not to be signed.
    case originNotSigned(String)
    /// The origin domain's stellar.toml has no `URI_REQUEST_SIGNING_KEY` (or not a `G…` key).
    case noSigningKey(String)
    case signatureInvalid(domain: String, key: String)
    /// The origin is a port on this machine (`TransactionRequest.originIsOnThisMachine`), which was not allowed.
    case originOnThisMachine(String)

    // Its network:
    /// The network given and the one the request names differ.
    case networkMismatch(given: String, requested: String)
    /// No network was given, and nobody agreed to the request's.
    case networkNotConfirmed(String)
    /// The signed envelope was to go to the request's callback, and it has none.
    case noCallback

    public var message: String {
        switch self {
        case .notARequest: "This is not a SEP-7 request (web+stellar:…)."
        case .notTransaction(let operation):
            "The SEP-7 request is for '\(TerminalText.escaped(operation))', not a transaction (web+stellar:tx?…); only tx requests are signed."
        case .tooLarge(let count): "The SEP-7 request is \(count) bytes, more than the \(TransactionRequest.maximumSize / 1024) KiB that is read."
        case .malformed(let what): "The SEP-7 request is malformed: \(what)."
        case .badEscape(let name): "The SEP-7 request's \(TerminalText.escaped(name)) has a % not followed by two hex digits."
        case .notUTF8(let name): "The SEP-7 request's \(TerminalText.escaped(name)) is not UTF-8 once decoded."
        case .unknownParameter(let name): "The SEP-7 request has a parameter '\(TerminalText.escaped(name, limit: 40))' that SEP-7 does not define for tx."
        case .repeatedParameter(let name): "The SEP-7 request has '\(TerminalText.escaped(name))' twice."
        case .replaceUnsupported:
            "The SEP-7 request asks for fields to be filled in (replace); only a transaction signed exactly as it is shown is signed."
        case .noEnvelope: "The SEP-7 request has no xdr (the transaction envelope)."
        case .messageTooLong(let count): "The SEP-7 request's msg is \(count) characters, more than the \(TransactionRequest.mostMessageCharacters) SEP-7 allows."
        case .badCallback(let text): "The SEP-7 request's callback '\(TerminalText.escaped(text, limit: 200))' is not url:… (the only kind SEP-7 defines)."
        case .badPubkey(let text): "The SEP-7 request's pubkey '\(TerminalText.escaped(text, limit: 100))' is not a G… account."
        case .badOriginDomain(let text): "The SEP-7 request's origin_domain '\(TerminalText.escaped(text, limit: 260))' is not a domain name."
        case .badSignatureEncoding: "The SEP-7 request's signature is not 64 bytes of base64."
        case .signatureNotLast: "The SEP-7 request has parameters after its signature, which does not cover them."
        case .badChain: "The SEP-7 request's chain is not a SEP-7 request."
        case .chainTooDeep: "The SEP-7 request's chain nests more than \(TransactionRequest.mostChainLevels) requests."
        case .signedWithoutOrigin: "The SEP-7 request is signed but names no origin_domain to check the signature with; nothing was signed."
        case .originNotSigned(let domain):
            "The SEP-7 request names the origin \(SummaryText.quoted(domain)) but is not signed, so that origin is unproven; nothing was signed."
        case .noSigningKey(let domain):
            "The stellar.toml of \(SummaryText.quoted(domain)) has no URI_REQUEST_SIGNING_KEY (a G… key) to check the SEP-7 request with; nothing was signed."
        case .signatureInvalid(let domain, let key):
            "The SEP-7 request's signature is not by \(key), the URI_REQUEST_SIGNING_KEY of \(SummaryText.quoted(domain)): it was changed or not made there; nothing was signed."
        case .originOnThisMachine(let domain):
            "The SEP-7 request names \(SummaryText.quoted(domain)), a port on this machine, as its origin: its stellar.toml would come over plain http from whatever program holds that port, so it proves nothing; nothing was fetched or signed."
        case .networkMismatch(let given, let requested):
            "The network given is \(given), but the SEP-7 request is for \(requested); nothing was signed."
        case .networkNotConfirmed(let network):
            "The SEP-7 request is for \(network), and no network was given to check it against; nothing was signed."
        case .noCallback: "The SEP-7 request has no callback (url:…) to send the signed envelope to; nothing was signed."
        }
    }
}
