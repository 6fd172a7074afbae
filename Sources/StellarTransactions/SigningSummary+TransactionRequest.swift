import FoundationEssentials
import StellarKeys

extension SigningSummary {
    /// A `chain` is shown whole up to this many characters (Unicode scalars); a longer one by its start, its count
    /// and its SHA-256.
    public static let mostChainCharacters = 200
}

extension TransactionRequest.Checked {
    /// What a person sees of a SEP-7 request beside its transaction: who made it (the origin domain and the key
    /// that proved it, or that nobody is named), its message, callback, the key it asks for, the request it
    /// came from, and whether it named its network. Text from the request is quoted as all text from outside.
    /// `signer`: the key about to sign; a `pubkey` that is another is a warning.
    func shown(signingAs signer: PublicKey?) -> (warnings: [String], lines: [String], elisions: [Elision]) {
        var warnings: [String] = []
        var lines: [String] = []
        var elisions: [Elision] = []
        func add(_ name: String, _ value: String) { lines.append("  " + name + String(repeating: " ", count: max(12 - name.count, 1)) + value) }
        add("request", "SEP-7 (web+stellar:tx)")
        switch origin {
        case .unnamed:
            add("origin", "none named: the request is not signed, and who made it is unknown")
        case .verified(let domain, let key):
            if request.originIsOnThisMachine {
                add("origin", "\(SummaryText.quoted(domain)), a port on this machine: signed by the URI_REQUEST_SIGNING_KEY \(key.accountID) it served over plain http")
                warnings.append("the request's origin is a port on this machine, whose stellar.toml came over plain http: any program here could have made and signed it")
            } else {
                add("origin", "\(SummaryText.quoted(domain)), verified: signed by its URI_REQUEST_SIGNING_KEY \(key.accountID)")
            }
        }
        if let message = request.message { add("message", SummaryText.quoted(message) + " (the requester's words, not part of the transaction)") }
        if let callback = request.callback { add("callback", SummaryText.quoted(callback) + " (where the request asks the signed envelope to go)") }
        if let pubkey = request.pubkey {
            add("pubkey", pubkey.accountID + " (the key the request asks to sign)")
            if let signer, signer != pubkey {
                warnings.append("the request asks for a signature by \(pubkey.accountID), and the key about to sign is \(signer.accountID)")
            }
        }
        if let chain = request.chain {
            let scalars = Array(chain.unicodeScalars)
            let levels = "\(request.chainDepth) request\(request.chainDepth == 1 ? "" : "s"), shown only: their signatures are not checked"
            if scalars.count <= SigningSummary.mostChainCharacters {
                add("chain", SummaryText.quoted(chain) + " (\(levels))")
            } else {
                var head = String.UnicodeScalarView()
                head.append(contentsOf: scalars.prefix(SigningSummary.mostChainCharacters))
                let left = scalars.count - SigningSummary.mostChainCharacters
                add("chain", SummaryText.quoted(String(head)) + " … (\(left) more characters not shown; \(levels))")
                elisions.append(Elision("chain: \(scalars.count) characters, \(left) not shown", hashing: chain, of: "the whole chain", isWhole: true))
            }
        }
        let passphrase = SummaryText.quoted(request.network.passphrase)
        add("network", request.namesNetwork ? "named by the request: \(passphrase)" : "not named by the request, which means the public network \(passphrase)")
        return (warnings, lines, elisions)
    }
}

extension TransactionRequest.Checked: Encodable {
    private enum CodingKeys: String, CodingKey {
        case originDomain, originVerifiedBy, message, callback, pubkey, chain, networkPassphrase, namesNetwork
    }

    /// The request's fields for JSON: `originDomain` and `originVerifiedBy` (the key) only when verified.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if case .verified(let domain, let key) = origin {
            try container.encode(domain, forKey: .originDomain)
            try container.encode(key.accountID, forKey: .originVerifiedBy)
        }
        try container.encodeIfPresent(request.message, forKey: .message)
        try container.encodeIfPresent(request.callback, forKey: .callback)
        try container.encodeIfPresent(request.pubkey?.accountID, forKey: .pubkey)
        try container.encodeIfPresent(request.chain, forKey: .chain)
        try container.encode(request.network.passphrase, forKey: .networkPassphrase)
        try container.encode(request.namesNetwork, forKey: .namesNetwork)
    }
}
