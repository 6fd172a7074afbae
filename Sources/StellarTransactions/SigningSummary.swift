import FoundationEssentials
import StellarKeys

/// What a person must see before a key signs, rendered one way everywhere (command line, agent prompt, app).
///
/// Three rules hold for every kind of request:
/// - text from outside (a memo, a message, a passphrase, a name) is quoted one way, `quoted(_:)`;
/// - nothing is left out silently: each part a bound leaves out (nesting, elements, bytes, characters,
///   invocations, lines) is a warning that says what and how much, with the SHA-256 of what was left out (or of
///   the whole it was cut from), so that two requests that differ only there never render alike;
/// - `text` is bounded (`maximumLines`, `maximumBytes`), so that nothing can scroll its first lines away.
public struct SigningSummary: Sendable, Encodable {
    /// The first line: what is asked, and where (e.g. `Transaction on testnet ("Test SDF Network ; September 2015")`).
    public let title: String
    /// What a person must not miss, elisions included; shown as `  !! …` lines right after the title.
    public let warnings: [String]
    /// The body, each line indented.
    public let lines: [String]
    /// Whether anything was left out: of a value (nesting, elements, bytes), of a message (characters), of a
    /// tree (invocations), or of `text` (lines, or the end of a long line).
    public let isElided: Bool
    /// The network the signature is for; nil for a raw payload or a SEP-53 message, which name none.
    public let network: StellarNetwork?
    /// The title, the warnings as `  !! …` lines, then the body: within `maximumLines` and `maximumBytes` (each
    /// line counted with its newline), with a `!!` line second when that bound cut it.
    public let text: [String]

    /// The kind of request, as JSON names it: `payload`, `message`, `transaction`, `authorizations`,
    /// `authorization`, `sign-in`.
    let kind: String
    /// The transaction's structured summary, for a transaction and for its authorization entries.
    public let transaction: TransactionSummary?
    /// For authorization entries: which are signed and which left alone.
    let plan: (plan: AuthorizationPlan, expirationLedger: UInt32)?

    /// 500 lines: a transaction of 100 payments (the most one holds) is about 420, so no real transaction is cut,
    /// and with long lines wrapped twice it still fits the scroll-back of a default terminal (xterm keeps 1,024),
    /// so the title and the warnings can always be scrolled back to.
    public static let maximumLines = 500
    /// 64 KiB: 500 lines of 130 bytes, about 820 rows of 80 columns, within the same scroll-back.
    public static let maximumBytes = 64 << 10
    /// One line is cut after this many bytes (51 rows of 80 columns): a value nested 3 deep and 12 wide can
    /// render to more than all the rest together.
    public static let maximumLineBytes = 4 << 10
    /// A summary longer than this (a terminal's height) ends with a line pointing at its warnings.
    public static let screenLines = 40
    /// A SEP-53 message is shown whole up to this many characters (Unicode scalars), as a person reads it
    /// before saying yes; a longer one is read by its count and hash, not by eye.
    public static let mostMessageCharacters = 200
    /// A raw payload (or a message that is not UTF-8) is shown whole in hex up to this many bytes, 32 a line.
    public static let mostPayloadBytes = 256

    init(kind: String, title: String, warnings: [String], lines: [String], elided: Bool, network: StellarNetwork?,
         transaction: TransactionSummary? = nil, plan: (AuthorizationPlan, UInt32)? = nil) {
        self.kind = kind
        self.title = title
        self.warnings = warnings
        self.lines = lines
        self.network = network
        self.transaction = transaction
        self.plan = plan
        let (text, cut) = Self.text(title: title, warnings: warnings, lines: lines)
        self.text = text
        isElided = elided || cut
    }

    // MARK: Quoting

    /// Text from outside, quoted one way everywhere: printable ASCII as is with `\` and `"` escaped, anything
    /// else followed by its bytes in hex, and invisible or look-alike characters (controls, bidi overrides,
    /// joiners, separators, marks) as `\u{XXXX}`, so that no two different byte strings look alike.
    public static func quoted(_ text: String) -> String { SummaryText.quoted(text) }
    public static func quoted(_ bytes: [UInt8]) -> String { SummaryText.quoted(bytes) }

    /// A name or a path as itself when it is a plain word (ASCII letters, digits and `. _ - / @ + :`), and
    /// `quoted(_:)` otherwise; `alice` stays `alice`, `alice (G…)` becomes `"alice (G…)"`.
    public static func quotedIfNeeded(_ text: String) -> String { SummaryText.quotedIfNeeded(text) }

    // MARK: Requests

    /// Bytes to sign as they are. What they approve cannot be known from them, and the first warning says so.
    public static func payload(_ bytes: [UInt8], signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        var warnings = [rawBytesWarning]
        let (lines, elision) = hexLines("payload", bytes, whole: "the whole payload")
        if let elision { warnings.append(elision.warning) }
        return SigningSummary(kind: "payload", title: "Sign \(bytes.count) raw bytes as \(who(signer))", warnings: warnings,
                              lines: lines, elided: elision != nil, network: nil)
    }

    /// A SEP-53 message: quoted whole up to `mostMessageCharacters`, else cut with a count and the SHA-256 of
    /// the whole message; one that is not UTF-8 in hex.
    public static func message(_ bytes: [UInt8], signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let title = "Sign a SEP-53 message as \(who(signer))"
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let (lines, elision) = hexLines("message", bytes, whole: "the whole message", note: "not UTF-8, \(bytes.count) bytes in hex:")
            return SigningSummary(kind: "message", title: title, warnings: elision.map { [$0.warning] } ?? [], lines: lines,
                                  elided: elision != nil, network: nil)
        }
        let scalars = Array(text.unicodeScalars)
        guard scalars.count > mostMessageCharacters else {
            return SigningSummary(kind: "message", title: title, warnings: [], lines: ["  message     " + quoted(bytes)],
                                  elided: false, network: nil)
        }
        var head = String.UnicodeScalarView()
        head.append(contentsOf: scalars.prefix(mostMessageCharacters))
        let left = scalars.count - mostMessageCharacters
        let elision = Elision("message: \(scalars.count) characters, \(left) not shown", hashing: bytes, of: "the whole message",
                              isWhole: true)
        return SigningSummary(kind: "message", title: title, warnings: [elision.warning],
                              lines: ["  message     " + quoted(String(head)) + " … (\(left) more characters not shown)"],
                              elided: true, network: nil)
    }

    /// A transaction envelope, as `TransactionSummary` reads it. `signer` nil: shown with no key about to sign.
    /// `accounts`: the signers and thresholds known, to show whether the signatures meet them (nil: not shown).
    /// `request`: the SEP-7 request that brought it, whose lines come first (`TransactionRequest.Checked`).
    public static func transaction(_ envelope: TransactionEnvelope, on network: StellarNetwork,
                                   signingAs signer: (name: String, key: PublicKey)?, now: Date = Date(),
                                   accounts: [AccountSigners]? = nil, request: TransactionRequest.Checked? = nil) -> SigningSummary {
        let summary = TransactionSummary(envelope, on: network, signingAs: signer, now: now, accounts: accounts)
        let asked = request?.shown(signingAs: signer?.key) ?? (warnings: [], lines: [], elisions: [])
        return SigningSummary(kind: "transaction", title: summary.title, warnings: asked.warnings + Elision.warnings(asked.elisions) + summary.warnings,
                              lines: asked.lines + summary.body, elided: !summary.elisions.isEmpty || !asked.elisions.isEmpty,
                              network: network, transaction: summary)
    }

    /// The authorization entries of an envelope that `plan` signs: the transaction's summary (made without a
    /// signer, whose warning about a key with no part in the transaction is for an envelope signature, which
    /// this is not), then who signs which entries, valid through which ledger, and which are left alone.
    public static func authorizations(in envelope: TransactionEnvelope, on network: StellarNetwork, plan: AuthorizationPlan,
                                      expirationLedger: UInt32, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        authorizations(in: envelope, on: network, plan: plan, expirationLedger: expirationLedger, signingAs: (signer.name, .ed25519(signer.key)))
    }

    /// The same for a signer with any key (a P-256 key signs as a smart account's External signer).
    public static func authorizations(in envelope: TransactionEnvelope, on network: StellarNetwork, plan: AuthorizationPlan,
                                      expirationLedger: UInt32, signingAs signer: (name: String, key: AuthorizationSigner.Key)) -> SigningSummary {
        let summary = TransactionSummary(envelope, on: network)
        return SigningSummary(kind: "authorizations", title: summary.title, warnings: plan.warnings + summary.warnings,
                              lines: summary.body + plan.lines(expirationLedger: expirationLedger, signingAs: signer),
                              elided: !summary.elisions.isEmpty, network: network, transaction: summary,
                              plan: (plan, expirationLedger))
    }

    /// An authorization preimage (what SEP-43's `signAuthEntry` receives): the network, who signs, what the
    /// signature binds, its expiration, and the invocation tree.
    /// With `contextRuleIDs`: a smart account's signer's signature, valid only for those rules.
    public static func preimage(_ preimage: AuthorizationPreimage, on network: StellarNetwork,
                                signingAs signer: (name: String, key: PublicKey), contextRuleIDs: [UInt32]? = nil) -> SigningSummary {
        self.preimage(preimage, on: network, signer: (signer.name, .ed25519(signer.key)), contextRuleIDs: contextRuleIDs)
    }

    /// The same for a signer with any key (a P-256 key signs as a smart account's External signer).
    public static func preimage(_ preimage: AuthorizationPreimage, on network: StellarNetwork,
                                signingAs signer: (name: String, key: AuthorizationSigner.Key), contextRuleIDs: [UInt32]? = nil) -> SigningSummary {
        self.preimage(preimage, on: network, signer: signer, contextRuleIDs: contextRuleIDs)
    }

    static func preimage(_ preimage: AuthorizationPreimage, on network: StellarNetwork,
                         signer: (name: String, key: AuthorizationSigner.Key)?, contextRuleIDs: [UInt32]? = nil) -> SigningSummary {
        var elided: [Elision] = []
        let lines = preimage.body(signingAs: signer, contextRuleIDs: contextRuleIDs, elided: &elided)
        let unbound = preimage.boundAddress == nil ? [AuthorizationPreimage.notAddressBoundWarning] : []
        return SigningSummary(kind: "authorization", title: "Authorization on \(network.shown)", warnings: unbound + Elision.warnings(elided),
                              lines: lines, elided: !elided.isEmpty, network: network)
    }

    /// A SEP-10 challenge that passed its checks: the service, the account, the server, the time bounds.
    public static func signIn(_ challenge: WebAuthChallenge, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let expectation = challenge.expectation
        var lines = [
            "  server      \(expectation.serverKey.accountID) (\(quoted(expectation.webAuthDomain)))",
            "  network     \(expectation.network.shown)",
            "  valid       from \(SummaryText.time(challenge.validFrom)) until \(SummaryText.time(challenge.validUntil))",
        ]
        if let memoID = challenge.memoID { lines.append("  memo        id \(memoID)") }
        if let clientDomain = expectation.clientDomain {
            lines.append("  client      \(quoted(clientDomain.domain)) (\(clientDomain.key.accountID))")
        }
        return SigningSummary(kind: "sign-in",
                              title: "Sign in to \(quoted(expectation.homeDomain)) as \(expectation.clientAccount) (\(quotedIfNeeded(signer.name)))",
                              warnings: [], lines: lines, elided: false, network: expectation.network)
    }

    /// No summary: for a request nobody is shown (a signing agent that asks nobody). Never rendered.
    package static let notMade = SigningSummary(kind: "none", title: "", warnings: [], lines: [], elided: false, network: nil)

    /// Many requests of one kind (`what`) signed with one key, none shown to a person one by one: the warning
    /// says so, and the summary counts as elided.
    /// `rawBytes`: the requests are raw payloads, of which nothing can be told.
    public static func batch(_ what: String, network: StellarNetwork?, signingAs signer: (name: String, key: PublicKey),
                             rawBytes: Bool = false) -> SigningSummary {
        SigningSummary(kind: "batch", title: "Sign \(what) from a batch as \(who(signer))" + (network.map { " on \($0.shown)" } ?? ""),
                       warnings: (rawBytes ? [rawBytesWarning] : []) + ["each request of the batch is signed without being shown here"],
                       lines: [], elided: true, network: network)
    }

    /// What a raw payload's summary says first.
    static let rawBytesWarning = "what these bytes approve cannot be told from them: they could be a transaction hash on any network, "
        + "or an authorization for any address; sign them only if you know what they are"

    // MARK: Rendering

    /// `ADDRESS (name)`.
    private static func who(_ signer: (name: String, key: PublicKey)) -> String {
        "\(signer.key.accountID) (\(quotedIfNeeded(signer.name)))"
    }

    /// Bytes in hex, 32 a line, the first `mostPayloadBytes` of them; past that, an elision with the SHA-256 of
    /// all of them.
    private static func hexLines(_ label: String, _ bytes: [UInt8], whole: String, note: String? = nil)
        -> (lines: [String], elision: Elision?) {
        let shown = Array(bytes.prefix(mostPayloadBytes))
        let rows = stride(from: 0, to: shown.count, by: 32).map { Hex.string(Array(shown[$0..<min($0 + 32, shown.count)])) }
        let name = label + String(repeating: " ", count: max(12 - label.count, 1))
        var lines = note.map { ["  " + name + $0] } ?? []
        for (index, row) in (rows.isEmpty ? [""] : rows).enumerated() {
            lines.append("  " + (index == 0 && note == nil ? name : String(repeating: " ", count: name.count)) + row)
        }
        guard bytes.count > shown.count else { return (lines, nil) }
        let left = bytes.count - shown.count
        lines.append("  " + String(repeating: " ", count: name.count) + "… (\(left) more bytes not shown)")
        return (lines, Elision("\(label): \(bytes.count) bytes, \(left) not shown", hashing: bytes, of: whole, isWhole: true))
    }

    /// The title, the warnings and the body within the bounds, and whether they cut it. When they do, the second
    /// line says how much there was and gives the SHA-256 of all of it, so that two summaries cut alike still
    /// differ where a person looks first.
    static func text(title: String, warnings: [String], lines: [String]) -> (text: [String], cut: Bool) {
        var all = [title] + warnings.map { "  !! " + $0 } + lines
        // Longer than a screen: the warnings at the top may have scrolled away by the time a PIN or a yes is asked
        // below, so the last line says they are there.
        if all.count > screenLines && !warnings.isEmpty {
            all.append("  !! \(warnings.count) warning\(warnings.count == 1 ? "" : "s") at the top of this summary: scroll up to read \(warnings.count == 1 ? "it" : "them")")
        }
        let size = all.reduce(0) { $0 + $1.utf8.count + 1 }
        guard all.count > maximumLines || size > maximumBytes || all.contains(where: { $0.utf8.count > maximumLineBytes }) else {
            return (all, false)
        }
        let notice = "  !! only the start of this summary is shown: it is \(all.count) lines and \(size) bytes, more than the "
            + "\(maximumLines) lines, \(maximumBytes) bytes or \(maximumLineBytes) bytes a line shown "
            + "(SHA-256 of all of it \(Elision.sha256(Array(all.joined(separator: "\n").utf8))))"
        var text = [cut(title), notice]
        var used = text.reduce(0) { $0 + $1.utf8.count + 1 }
        // Room for the last line, which counts what is not shown.
        let closing = 64
        var shown = 1
        for line in all.dropFirst() {
            let line = cut(line)
            guard text.count + 2 <= maximumLines, used + line.utf8.count + 1 + closing <= maximumBytes else { break }
            text.append(line)
            used += line.utf8.count + 1
            shown += 1
        }
        if shown < all.count { text.append("  … \(all.count - shown) more lines not shown") }
        return (text, true)
    }

    /// A line of at most `maximumLineBytes`, cut between Unicode scalars, saying how much of it was cut.
    private static func cut(_ line: String) -> String {
        guard line.utf8.count > maximumLineBytes else { return line }
        var kept = String.UnicodeScalarView(), bytes = 0
        for scalar in line.unicodeScalars {
            let width = UTF8.width(scalar)
            guard bytes + width <= maximumLineBytes - 64 else { break }
            kept.append(scalar)
            bytes += width
        }
        return String(kept) + "… (\(line.utf8.count - bytes) more bytes of this line not shown)"
    }

    // MARK: JSON

    private enum CodingKeys: String, CodingKey { case kind, title, warnings, elided, lines, network, transaction, authorizations }

    private struct Authorizations: Encodable {
        let toSign: [Int]
        let leftAlone: [AuthorizationPlan.LeftAlone]
        let expirationLedger: UInt32
    }

    /// `{"kind", "title", "warnings", "elided", "lines"}`, the network's passphrase where there is one, and the
    /// structured parts: `transaction` (a `TransactionSummary`), `authorizations` (which entries are signed).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(title, forKey: .title)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(isElided, forKey: .elided)
        try container.encode(lines, forKey: .lines)
        try container.encodeIfPresent(network?.passphrase, forKey: .network)
        try container.encodeIfPresent(transaction, forKey: .transaction)
        if let plan {
            try container.encode(Authorizations(toSign: plan.plan.toSign, leftAlone: plan.plan.leftAlone,
                                                expirationLedger: plan.expirationLedger), forKey: .authorizations)
        }
    }
}
