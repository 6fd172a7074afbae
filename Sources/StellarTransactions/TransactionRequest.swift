import StellarKeys
import StellarText

/// A SEP-7 request to sign a transaction (`web+stellar:tx?xdr=…`, SEP-7 v2.1.0, "Operation tx"): the envelope,
/// and what its requester adds around it: a message to show (`msg`), where the signed envelope is to go
/// (`callback`), which key it asks for (`pubkey`), the network (`network_passphrase`; none means the public
/// network), the request that led to this one (`chain`), and the domain that made it (`origin_domain`, with a
/// `signature` by that domain's `URI_REQUEST_SIGNING_KEY`).
///
/// Read strictly: the exact scheme and operation; each parameter once, known, non-empty, percent-decoded once
/// (`+` is a space, as in a form and as stellar-sdk reads it), valid UTF-8; `signature` last, since it covers
/// everything before it; `msg` at most 300 characters; the whole at most `maximumSize` bytes. `replace` (SEP-11
/// fields the signer is to fill in) is refused: what is signed is exactly what is shown. A request is not
/// trusted for anything until `checked(originKey:)` says who made it (`Checked`).
public struct TransactionRequest: Sendable {
    public let envelope: TransactionEnvelope
    /// The network the request names, or the public network when it names none (SEP-7's default).
    public let network: StellarNetwork
    /// Whether `network_passphrase` was in the request.
    public let namesNetwork: Bool
    /// `msg`: the requester's words for the person signing, not part of the transaction.
    public let message: String?
    /// `callback` without its `url:` prefix: where the requester wants the signed envelope POSTed.
    public let callback: String?
    /// `pubkey`: the key the requester asks to sign.
    public let pubkey: PublicKey?
    /// `origin_domain`, as written.
    public let originDomain: String?
    /// `signature`, decoded: the origin domain's signature of `signaturePayload`.
    public let signature: [UInt8]?
    /// `chain`, decoded: the SEP-7 request this one was made from (informational; its signature is not checked).
    public let chain: String?
    /// How many requests `chain` nests, itself included (0 without one).
    public let chainDepth: Int
    /// The request as read (or made): what the signature is checked over is its part before `&signature=`.
    public let uri: String
    private let signedLength: Int

    /// 1 MiB, the most of an envelope that is read: no real request comes near it.
    public static let maximumSize = 1 << 20
    /// SEP-7: `msg` "should not be longer than 300 characters before the URL-encoding" (counted as stellar-sdk
    /// counts them, in Unicode scalars).
    public static let mostMessageCharacters = 300
    /// SEP-7: "wallets can expect this field to have no more than 7 nested levels".
    public static let mostChainLevels = 7
    public static let prefix = "web+stellar:tx?"
    static let scheme = "web+stellar:"
    /// SEP-7, "Request Signing": 35 zero bytes, a 4, then this text, then the request without its signature.
    static let payloadPrefix = [UInt8](repeating: 0, count: 35) + [4] + Array("stellar.sep.7 - URI Scheme".utf8)

    /// Whether `text` is a SEP-7 URI at all (of any operation), and not an envelope or something else.
    public static func isURI(_ text: [UInt8]) -> Bool {
        text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.starts(with: Array(scheme.utf8))
    }

    /// Reads a request as a person or a program hands it over: white space at either end (a final newline) is
    /// dropped, nothing else.
    public init(uri bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumSize else { throw TransactionRequestError.tooLarge(bytes.count) }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let trimmed = Array(bytes.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
        // Anything outside printable ASCII (a control character, a space, a non-ASCII letter) must be
        // percent-encoded in a URI; a raw one is a request that was mangled, or made to look like another.
        guard trimmed.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw TransactionRequestError.malformed("a character that is not printable ASCII") }
        try self.init(uri: String(decoding: trimmed, as: UTF8.self))
    }

    public init(uri text: String) throws {
        guard text.utf8.count <= Self.maximumSize else { throw TransactionRequestError.tooLarge(text.utf8.count) }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw TransactionRequestError.malformed("a character that is not printable ASCII") }
        guard text.hasPrefix(Self.scheme) else { throw TransactionRequestError.notARequest }
        guard text.hasPrefix(Self.prefix) else {
            let operation = text.dropFirst(Self.scheme.count).prefix { $0 != "?" }
            throw TransactionRequestError.notTransaction(String(operation.prefix(20)))
        }
        let query = text.utf8.dropFirst(Self.prefix.utf8.count)
        if query.contains(UInt8(ascii: "#")) { throw TransactionRequestError.malformed("a fragment (#)") }
        var values: [String: String] = [:]
        var signatureStart: Int?
        var offset = Self.prefix.utf8.count
        for part in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            defer { offset += part.count + 1 }
            let (name, value) = try Self.parameter(part)
            guard values[name] == nil else { throw TransactionRequestError.repeatedParameter(name) }
            guard signatureStart == nil else { throw TransactionRequestError.signatureNotLast }
            switch name {
            case "xdr", "callback", "pubkey", "msg", "network_passphrase", "origin_domain", "chain": break
            case "signature": signatureStart = offset - 1
            case "replace": throw TransactionRequestError.replaceUnsupported
            default: throw TransactionRequestError.unknownParameter(name)
            }
            values[name] = value
        }
        guard let xdr = values["xdr"] else { throw TransactionRequestError.noEnvelope }
        envelope = try TransactionEnvelope(base64: xdr)
        if let passphrase = values["network_passphrase"] {
            network = try StellarNetwork(passphrase: passphrase)
            namesNetwork = true
        } else {
            network = .public
            namesNetwork = false
        }
        if let message = values["msg"], message.unicodeScalars.count > Self.mostMessageCharacters {
            throw TransactionRequestError.messageTooLong(message.unicodeScalars.count)
        }
        message = values["msg"]
        if let callback = values["callback"] {
            // SEP-7: "For now only `url` callback types are supported."
            guard callback.hasPrefix("url:"), callback.utf8.count > 4 else { throw TransactionRequestError.badCallback(callback) }
            self.callback = String(callback.dropFirst(4))
        } else {
            callback = nil
        }
        do { pubkey = try values["pubkey"].map { try PublicKey(accountID: $0) } } catch {
            throw TransactionRequestError.badPubkey(values["pubkey"] ?? "")
        }
        if let domain = values["origin_domain"], !Self.isOriginDomain(domain) { throw TransactionRequestError.badOriginDomain(domain) }
        originDomain = values["origin_domain"]
        if let text = values["signature"] {
            guard let bytes = Base64.decode(text), bytes.count == 64 else { throw TransactionRequestError.badSignatureEncoding }
            signature = bytes
        } else {
            signature = nil
        }
        chain = values["chain"]
        chainDepth = try values["chain"].map { try Self.chainDepth(of: $0) } ?? 0
        uri = text
        signedLength = signatureStart ?? text.utf8.count
    }

    /// A request for `envelope`, as stellar-sdk's `TransactionStellarUri.to_uri` writes one with the same fields
    /// (their order, and every byte but `A–Z a–z 0–9 - . _ ~` percent-encoded): `network_passphrase` only for a
    /// network other than the public one, which SEP-7 assumes. `signature`, when given, is the origin domain's
    /// signature of the request without it (`signaturePayload`); a request to hand to a co-signer needs none.
    public init(envelope: TransactionEnvelope, network: StellarNetwork, message: String? = nil, callback: String? = nil,
                pubkey: PublicKey? = nil, originDomain: String? = nil, signature: [UInt8]? = nil) throws {
        var parameters = [("xdr", Base64.string(envelope.bytes))]
        if let callback { parameters.append(("callback", "url:" + callback)) }
        if let pubkey { parameters.append(("pubkey", pubkey.accountID)) }
        if let message { parameters.append(("msg", message)) }
        if network != .public { parameters.append(("network_passphrase", network.passphrase)) }
        if let originDomain { parameters.append(("origin_domain", originDomain)) }
        if let signature { parameters.append(("signature", Base64.string(signature))) }
        let text = Self.prefix + parameters.map { "\($0.0)=\(Self.escaped($0.1))" }.joined(separator: "&")
        // Read back, so that a made request obeys every rule a read one does (a long message, a bad callback).
        try self.init(uri: text)
    }

    /// What the origin domain signs (SEP-7, "Request Signing"): 35 zero bytes, a 4, "stellar.sep.7 - URI Scheme",
    /// then the request as written, up to its `&signature=` (the whole request when it has none).
    public var signaturePayload: [UInt8] {
        Self.payloadPrefix + Array(uri.utf8.prefix(signedLength))
    }

    /// Whether `signature` is `key`'s signature of `signaturePayload`.
    public func isSigned(by key: PublicKey) -> Bool {
        guard let signature else { return false }
        return key.isValidSignature(signature, for: signaturePayload)
    }

    /// Who made the request, once its signature is checked: `originKey` is the origin domain's
    /// `URI_REQUEST_SIGNING_KEY` (from its stellar.toml; nil when it has none). Refused: a signature without an
    /// origin domain (nobody to check it against), an origin domain without a signature (SEP-7: "do not allow
    /// the user to sign"), no key, and a signature that is not the key's. A request with neither is `.unnamed`.
    public func checked(originKey: PublicKey?) throws -> Checked {
        switch (originDomain, signature) {
        case (nil, nil): return Checked(request: self, origin: .unnamed)
        case (nil, _?): throw TransactionRequestError.signedWithoutOrigin
        case (let domain?, nil): throw TransactionRequestError.originNotSigned(domain)
        case (let domain?, _?):
            guard let originKey else { throw TransactionRequestError.noSigningKey(domain) }
            guard isSigned(by: originKey) else { throw TransactionRequestError.signatureInvalid(domain: domain, key: originKey.accountID) }
            return Checked(request: self, origin: .verified(domain: domain, key: originKey))
        }
    }

    /// A request whose origin was checked: the only form a signing review takes.
    public struct Checked: Sendable {
        public let request: TransactionRequest
        public let origin: Origin

        /// The network to sign for: `given` (the caller's), which the request's must be; or, none given, the
        /// request's (the public network when it names none), which `needsConsent` says a person must agree to
        /// first, since a request is never a source of truth for where its signature counts.
        public func network(given: StellarNetwork?) throws -> (network: StellarNetwork, needsConsent: Bool) {
            guard let given else { return (request.network, true) }
            guard given == request.network else {
                throw TransactionRequestError.networkMismatch(given: given.shownBriefly, requested: request.network.shownBriefly)
            }
            return (given, false)
        }
    }

    public enum Origin: Sendable, Equatable {
        /// Neither `origin_domain` nor `signature`: who made the request is not known.
        case unnamed
        /// `origin_domain`, whose `URI_REQUEST_SIGNING_KEY` signed the request.
        case verified(domain: String, key: PublicKey)
    }

    // MARK: Reading

    /// `name=value`, the value percent-decoded once (`+` a space) and UTF-8; neither part empty.
    static func parameter(_ part: Substring.UTF8View.SubSequence) throws -> (String, String) {
        guard let equals = part.firstIndex(of: UInt8(ascii: "=")) else {
            throw TransactionRequestError.malformed("a parameter without a value")
        }
        let name = String(decoding: part[part.startIndex..<equals], as: UTF8.self)
        let raw = part[part.index(after: equals)...]
        guard !name.isEmpty, !raw.isEmpty else { throw TransactionRequestError.malformed("an empty parameter") }
        return (name, try decoded(raw, name: name))
    }

    static func decoded(_ raw: some Collection<UInt8>, name: String) throws -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            index = raw.index(after: index)
            switch byte {
            case UInt8(ascii: "%"):
                guard index != raw.endIndex, let high = hexValue(raw[index]) else { throw TransactionRequestError.badEscape(name) }
                index = raw.index(after: index)
                guard index != raw.endIndex, let low = hexValue(raw[index]) else { throw TransactionRequestError.badEscape(name) }
                index = raw.index(after: index)
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+"): bytes.append(0x20)
            default: bytes.append(byte)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw TransactionRequestError.notUTF8(name) }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// `text` percent-encoded as Python's `urllib.parse.quote(text, safe="")` does (stellar-sdk's encoding):
    /// every byte of its UTF-8 but RFC 3986's unreserved ones.
    public static func escaped(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            if unreserved {
                output.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                output += "%" + Hex.string([byte]).uppercased()
            }
        }
        return output
    }

    /// The levels `chain` nests: each a SEP-7 URI (of any operation), whose own `chain`, if any, is the next.
    /// Only their shape is read: they are shown, not acted on.
    static func chainDepth(of chain: String) throws -> Int {
        var depth = 0
        var next: String? = chain
        while let uri = next {
            depth += 1
            guard depth <= mostChainLevels else { throw TransactionRequestError.chainTooDeep }
            guard uri.hasPrefix(scheme), let question = uri.utf8.firstIndex(of: UInt8(ascii: "?")),
                  uri.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw TransactionRequestError.badChain
            }
            next = nil
            for part in uri.utf8[uri.utf8.index(after: question)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
                guard let (name, value) = try? parameter(part) else { throw TransactionRequestError.badChain }
                if name == "chain" {
                    guard next == nil else { throw TransactionRequestError.badChain }
                    next = value
                }
            }
        }
        return depth
    }

    /// Whether `origin_domain` is a loopback host with a port: a service on this machine, reached over plain
    /// http, whose stellar.toml any program here could serve from that port. `verifiedOrigin` fetches it only
    /// when the caller allows it, and the summary says so.
    public var originIsOnThisMachine: Bool { originDomain.map(Self.isOnThisMachine) ?? false }

    static func isOnThisMachine(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]), port > 0, String(port) == parts[1] else { return false }
        let host = parts[0]
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return host == "localhost" || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil && String(UInt8($0)!) == $0 })
    }

    /// SEP-7 wants a fully qualified domain name: letters, digits and hyphens in dot-separated labels of 1 to 63,
    /// at most 253 in all. A loopback host with a port (`127.0.0.1:8000`, `localhost:8000`) is also read: a
    /// service on this machine, reached over plain http, as a test runs one.
    static func isOriginDomain(_ text: String) -> Bool {
        if isOnThisMachine(text) { return true }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 1, !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D }
        }
    }
}
