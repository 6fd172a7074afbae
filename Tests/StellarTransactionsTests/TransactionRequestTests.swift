import StellarKeys
import StellarTransactions
import TestFixtures
import Testing

extension SEP7Fixtures.Case: CustomTestStringConvertible {
    public var testDescription: String { name }
}

/// SEP-7 transaction requests against stellar-sdk 16.1.1's (fixtures/make-sep7.py): reading, the signature
/// payload and check, the request made from fields, the refusals, the network rule and the summary's lines.
@Suite struct TransactionRequestTests {
    static let fixtures = try! SEP7Fixtures.load()
    static let originKey = try! PublicKey(accountID: fixtures.originKey)
    static func fixture(_ name: String) -> SEP7Fixtures.Case { fixtures.cases.first { $0.name == name }! }

    /// Every field as stellar-sdk put it in, the payload as stellar-sdk signs it, and the origin check's outcome.
    @Test(arguments: fixtures.cases)
    func eachRequestIsReadAndCheckedAsStellarSDKMadeIt(_ entry: SEP7Fixtures.Case) throws {
        guard entry.expect != "replaceUnsupported" else {
            #expect(throws: TransactionRequestError.replaceUnsupported) { try TransactionRequest(uri: entry.uri) }
            return
        }
        let request = try TransactionRequest(uri: Array((entry.uri + "\n").utf8))
        #expect(Base64.string(request.envelope.bytes) == entry.envelope)
        #expect(request.network.passphrase == entry.networkPassphrase && request.namesNetwork == entry.namesNetwork)
        #expect(request.message == entry.msg && request.callback == entry.callback && request.pubkey?.accountID == entry.pubkey)
        #expect(request.originDomain == entry.originDomain && request.chain == entry.chain && (request.signature != nil) == entry.signed)
        if let payload = entry.payload { #expect(Hex.string(request.signaturePayload) == payload) }
        do {
            let checked = try request.checked(originKey: Self.originKey)
            #expect(entry.expect == "valid", "accepted")
            #expect(checked.origin == (entry.originDomain.map { .verified(domain: $0, key: Self.originKey) } ?? .unnamed))
        } catch let error as TransactionRequestError {
            switch (entry.expect, error) {
            case ("signatureInvalid", .signatureInvalid(let domain, let key)): #expect(domain == entry.originDomain && key == Self.fixtures.originKey)
            case ("originNotSigned", .originNotSigned(let domain)): #expect(domain == entry.originDomain)
            case ("signedWithoutOrigin", .signedWithoutOrigin): break
            default: Issue.record("\(entry.name): \(error)")
            }
        }
    }

    @Test func aRequestSignedByAnotherKeyIsNotTheOrigins() throws {
        let request = try TransactionRequest(uri: Self.fixture("valid-testnet").uri)
        #expect(request.isSigned(by: Self.originKey))
        #expect(!request.isSigned(by: try PublicKey(accountID: Self.fixtures.wrongKey)))
        #expect(throws: TransactionRequestError.noSigningKey("sep7.example.com")) { try request.checked(originKey: nil) }
    }

    /// The request made from the same fields is stellar-sdk's `to_uri`, byte for byte (a signed one too).
    @Test func aMadeRequestIsStellarSDKs() throws {
        for made in Self.fixtures.made {
            let request = try TransactionRequest(
                envelope: TransactionEnvelope(base64: made.envelope), network: StellarNetwork(passphrase: made.networkPassphrase),
                message: made.msg, callback: made.callback, pubkey: made.pubkey.map { try PublicKey(accountID: $0) },
                originDomain: made.originDomain, signature: made.signature.map { Base64.decode($0)! })
            #expect(request.uri == made.uri, "\(made.name)")
        }
    }

    static let valid = fixture("plain").uri

    /// Each breaks one reading rule of a request that is otherwise `plain`.
    static let refused: [(String, TransactionRequestError)] = [
        ("web+stellar:pay?destination=GCATS5YOVB6ROX2WUNKGNQ2MP3GMXDMKSG2O4N5CLX3A6W4PZGZZI55U", .notTransaction("pay")),
        ("WEB+STELLAR:tx?" + valid.dropFirst(TransactionRequest.prefix.count), .notARequest),
        (valid + "&pubkey=GCATS5YOVB6ROX2WUNKGNQ2MP3GMXDMKSG2O4N5CLX3A6W4PZGZZI55U", .repeatedParameter("pubkey")),
        (valid + "&amount=1", .unknownParameter("amount")),
        (valid + "&msg=", .malformed("an empty parameter")),
        (valid + "&msg", .malformed("a parameter without a value")),
        (valid + "&msg=%4", .badEscape("msg")),
        (valid + "&msg=%ZZ", .badEscape("msg")),
        (valid + "&msg=%FF", .notUTF8("msg")),
        (valid + "&msg=caf\u{E9}", .malformed("a character that is not printable ASCII")),
        (valid + "&msg=a%0Ab#c", .malformed("a fragment (#)")),
        (valid + "&msg=" + String(repeating: "x", count: 301), .messageTooLong(301)),
        (valid + "&callback=https%3A%2F%2Fexample.com", .badCallback("https://example.com")),
        (valid + "&origin_domain=exa_mple.com", .badOriginDomain("exa_mple.com")),
        (valid + "&origin_domain=10.0.0.1%3A80", .badOriginDomain("10.0.0.1:80")),
        (valid + "&signature=AAAA", .badSignatureEncoding),
        (valid + "&signature=" + String(repeating: "A", count: 86) + "%3D%3D&msg=x", .signatureNotLast),
        ("web+stellar:tx?msg=hello", .noEnvelope),
        (valid + "&chain=https%3A%2F%2Fexample.com", .badChain),
    ]

    @Test func whatBreaksAReadingRuleIsRefused() {
        for (uri, error) in Self.refused {
            #expect(throws: error, "\(uri.suffix(60))") { try TransactionRequest(uri: uri) }
        }
        // A message of exactly 300 characters (not bytes) is read.
        #expect((try? TransactionRequest(uri: Self.valid + "&msg=" + String(repeating: "%E2%84%96", count: 300)))?.message?.count == 300)
        #expect(throws: TransactionRequestError.tooLarge(TransactionRequest.maximumSize + 1)) {
            try TransactionRequest(uri: Array(repeating: UInt8(ascii: "a"), count: TransactionRequest.maximumSize + 1))
        }
        #expect(!TransactionRequest.isURI(Array("AAAAAgAAAA".utf8)) && TransactionRequest.isURI(Array("\nweb+stellar:pay?".utf8)))
    }

    /// SEP-7 allows 7 levels of chained requests; an eighth is refused, each level encoded once more.
    @Test func aChainNestsAtMostSevenRequests() throws {
        var chain = Self.valid
        for depth in 1...8 {
            let uri = Self.valid + "&chain=" + TransactionRequest.escaped(chain)
            if depth <= 7 {
                #expect(try TransactionRequest(uri: uri).chainDepth == depth)
            } else {
                #expect(throws: TransactionRequestError.chainTooDeep) { try TransactionRequest(uri: uri) }
            }
            chain = uri
        }
    }

    /// The network is the one given, which the request's must equal; none given, the request's, with a consent.
    @Test func theRequestNeverPicksTheNetworkAlone() throws {
        let testnet = try TransactionRequest(uri: Self.valid).checked(originKey: nil)
        #expect(throws: TransactionRequestError.networkMismatch(given: StellarNetwork.public.shown, requested: StellarNetwork.testnet.shown)) {
            try testnet.network(given: .public)
        }
        #expect(try testnet.network(given: .testnet) == (.testnet, false))
        #expect(try testnet.network(given: nil) == (.testnet, true))
        let publicRequest = try TransactionRequest(uri: Self.fixture("valid-public").uri).checked(originKey: Self.originKey)
        #expect(try publicRequest.network(given: nil) == (.public, true))
        #expect(throws: TransactionRequestError.self) { try publicRequest.network(given: .testnet) }
    }

    /// The request's lines come first in the one transaction summary, quoted; a pubkey that is not the signer's
    /// is a warning; a long chain is cut with its count and SHA-256.
    @Test func theSummaryShowsTheRequest() throws {
        let entry = Self.fixture("valid-testnet")
        let checked = try TransactionRequest(uri: entry.uri).checked(originKey: Self.originKey)
        let golden = try PublicKey(accountID: Self.fixtures.signer)
        let summary = SigningSummary.transaction(checked.request.envelope, on: .testnet, signingAs: ("golden", golden), request: checked)
        #expect(summary.text.contains("  origin      \"sep7.example.com\", verified: signed by its URI_REQUEST_SIGNING_KEY \(Self.fixtures.originKey)"))
        #expect(summary.text.contains("  message     \(SigningSummary.quoted(entry.msg!)) (the requester's words, not part of the transaction)"))
        #expect(summary.text.contains("  callback    \"https://sep7.example.com/callback?id=7&x=a b\" (where the request asks the signed envelope to go)"))
        #expect(summary.text.contains("  network     named by the request: \"Test SDF Network ; September 2015\""))
        #expect(!summary.warnings.contains { $0.contains("asks for a signature by") })
        let other = SigningSummary.transaction(checked.request.envelope, on: .testnet, signingAs: ("other", Self.originKey), request: checked)
        #expect(other.warnings.first == "the request asks for a signature by \(Self.fixtures.signer), and the key about to sign is \(Self.fixtures.originKey)")

        let chained = try TransactionRequest(uri: Self.fixture("chain").uri).checked(originKey: nil)
        let long = SigningSummary.transaction(chained.request.envelope, on: .testnet, signingAs: nil, request: chained)
        #expect(long.isElided && long.warnings.first?.hasPrefix("chain: \(entry.uri.count) characters, \(entry.uri.count - 200) not shown (SHA-256 of the whole chain ") == true,
                "\(long.warnings)")
        #expect(long.text.contains { $0.hasPrefix("  chain       \"web+stellar:tx?xdr=") && $0.hasSuffix(" more characters not shown; 1 request, shown only: their signatures are not checked)") })
        #expect(long.text.contains("  origin      none named: the request is not signed, and who made it is unknown"))
        // Without a request, the summary is what it was.
        let bare = SigningSummary.transaction(checked.request.envelope, on: .testnet, signingAs: nil)
        #expect(!bare.text.contains { $0.hasPrefix("  request ") })
    }
}
