import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions

/// What a person sees before a key signs (`SigningSummary`): one quoting, nothing dropped silently, two requests
/// that differ never alike, and a bound on the whole that keeps its top in view.
@Suite struct SigningSummaryTests {
    let alice = KeyPair.random().publicKey
    let attacker = KeyPair.random().publicKey
    let contract = [UInt8](repeating: 0xC0, count: 32)
    var signer: (name: String, key: PublicKey) { ("alice", alice) }

    /// An envelope with one INVOKE_HOST_FUNCTION of `call`, and one address-credential entry for `alice` whose
    /// root is that call with `subInvocations` copies of `call` below it.
    func envelope(call: [UInt8], subInvocations: Int = 0) throws -> TransactionEnvelope {
        typealias B = SCValBytes
        var bytes = B.int32(2) + B.int32(0) + alice.rawRepresentation + B.uint32(100) + B.uint64(1) + B.int32(0) + B.int32(0)
        bytes += B.uint32(1) + B.uint32(0) + B.int32(24) + B.int32(0) + call
        bytes += B.uint32(1) + B.int32(1) + B.account(alice) + B.uint64(7) + B.uint32(1_000_000) + B.int32(1)
        bytes += invocation(call: call, subInvocations: subInvocations)
        bytes += B.int32(0) + B.uint32(0)
        return try TransactionEnvelope(xdr: bytes)
    }

    /// A `SorobanAuthorizedInvocation` of `call` with `subInvocations` copies of it (each with none) below it.
    func invocation(call: [UInt8], subInvocations: Int) -> [UInt8] {
        let leaf = SCValBytes.int32(0) + call + SCValBytes.uint32(0)
        return SCValBytes.int32(0) + call + SCValBytes.uint32(UInt32(subInvocations))
            + [UInt8](leaf).repeated(subInvocations)
    }

    func execute(_ argument: [UInt8]) -> [UInt8] { SCValBytes.call(contract, "execute", [argument]) }

    /// What a person reads: every line but the hash, which no person compares by eye.
    func read(_ summary: SigningSummary) -> [String] { summary.text.filter { !$0.hasPrefix("  hash ") } }

    func expectElidedAndSaid(_ summary: SigningSummary, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(summary.isElided, sourceLocation: sourceLocation)
        #expect(summary.text.contains { $0.hasPrefix("  !! ") && $0.contains(words) }, "\(summary.text)", sourceLocation: sourceLocation)
    }

    // MARK: Elision never makes two requests alike

    @Test func callsThatDifferOnlyPastTheTwelfthElementRenderDifferently() throws {
        func summary(_ last: PublicKey) throws -> SigningSummary {
            let vector = SCValBytes.vec((0..<12).map { SCValBytes.u32(UInt32($0)) } + [SCValBytes.address(last)])
            return SigningSummary.transaction(try envelope(call: execute(vector)), on: .testnet, signingAs: signer)
        }
        let (honest, hostile) = (try summary(alice), try summary(attacker))
        #expect(read(honest) != read(hostile))
        expectElidedAndSaid(honest, "1 of 13 elements")
    }

    @Test func addressesNestedTooDeepRenderDifferently() throws {
        func summary(_ key: PublicKey) throws -> SigningSummary {
            let deep = (0..<5).reduce(SCValBytes.address(key)) { inner, _ in SCValBytes.vec([inner]) }
            return SigningSummary.transaction(try envelope(call: execute(deep)), on: .testnet, signingAs: signer)
        }
        let (honest, hostile) = (try summary(alice), try summary(attacker))
        #expect(read(honest) != read(hostile))
        expectElidedAndSaid(honest, "nested deeper than")
    }

    @Test func bytesThatDifferPastTheShownPartRenderDifferently() throws {
        func summary(_ last: UInt8) throws -> SigningSummary {
            SigningSummary.transaction(try envelope(call: execute(SCValBytes.bytes([UInt8](repeating: 1, count: 99) + [last]))),
                                       on: .testnet, signingAs: signer)
        }
        let (one, other) = (try summary(1), try summary(2))
        #expect(read(one) != read(other))
        expectElidedAndSaid(one, "100 bytes, 36 not shown")
    }

    @Test func anAuthorizationPreimageSaysWhatItElides() throws {
        func summary(_ last: UInt32) throws -> SigningSummary {
            let vector = SCValBytes.vec((0..<12).map { SCValBytes.u32(UInt32($0)) } + [SCValBytes.u32(last)])
            let preimage = try AuthorizationPreimage(network: .testnet, nonce: 1, signatureExpirationLedger: 9,
                                                     invocation: invocation(call: execute(vector), subInvocations: 0))
            return SigningSummary.preimage(preimage, on: .testnet, signingAs: signer)
        }
        let (one, other) = (try summary(12), try summary(13))
        #expect(read(one) != read(other))
        expectElidedAndSaid(one, "1 of 13 elements")
    }

    // MARK: The invocation tree is bounded

    @Test func elevenThousandSubInvocationsStayWithinTheBound() throws {
        let call = execute(SCValBytes.u32(1))
        let transaction = SigningSummary.transaction(try envelope(call: call, subInvocations: 11_000), on: .testnet, signingAs: signer)
        #expect(transaction.text.count <= SigningSummary.maximumLines, "\(transaction.text.count) lines")
        expectElidedAndSaid(transaction, "invocations not shown")
        let preimage = try AuthorizationPreimage(network: .testnet, nonce: 1, signatureExpirationLedger: 9,
                                                 invocation: invocation(call: call, subInvocations: 11_000))
        let authorization = SigningSummary.preimage(preimage, on: .testnet, signingAs: signer)
        #expect(authorization.text.count <= SigningSummary.maximumLines, "\(authorization.text.count) lines")
        expectElidedAndSaid(authorization, "invocations not shown")
        // Said on a line of its own, however many values in the shown calls are elided too.
        let wide = execute(SCValBytes.vec((0..<13).map { SCValBytes.u32(UInt32($0)) }))
        expectElidedAndSaid(SigningSummary.transaction(try envelope(call: wide, subInvocations: 11_000), on: .testnet, signingAs: signer),
                            "11001 invocations not shown")
        // The tree's tail counts: one more sub-invocation is another summary.
        let longer = SigningSummary.transaction(try envelope(call: call, subInvocations: 11_001), on: .testnet, signingAs: signer)
        #expect(read(longer) != read(transaction))
    }

    // MARK: SEP-53 messages

    @Test func aLongMessageIsCutWithACountAndTheWholeMessagesHash() throws {
        let head = String(repeating: "I agree to the terms. ", count: 10).prefix(200)
        let message = Array((head + "ALSO: I transfer ownership of all my funds.").utf8)
        #expect(message.count == 243)
        let summary = SigningSummary.message(message, signingAs: signer)
        let hash = Hex.string(message.withUnsafeBytes { Sodium.sha256($0) })
        expectElidedAndSaid(summary, "message: 243 characters, 43 not shown")
        #expect(summary.text.contains { $0.hasPrefix("  !! ") && $0.contains(hash) }, "\(summary.text)")
        let other = SigningSummary.message(Array((head + "ALSO: I transfer ownership of all my NFTs!!").utf8), signingAs: signer)
        #expect(other.text != summary.text)
        #expect(summary.network == nil)
    }

    @Test func aShortMessageIsShownWholeAndQuoted() {
        let summary = SigningSummary.message(Array("Log in to \"example\"".utf8), signingAs: signer)
        #expect(!summary.isElided && summary.warnings.isEmpty)
        #expect(summary.text.contains { $0.hasSuffix("\"Log in to \\\"example\\\"\"") }, "\(summary.text)")
    }

    @Test func invisibleAndLookAlikeCharactersInAMessageAreEscaped() {
        // RLO override, U+2028 line separator, word joiner, and a Cyrillic "а" that passes for Latin "a".
        let text = "pay b\u{202E}0001\u{2028}ok\u{2060}x p\u{0430}ypal"
        let summary = SigningSummary.message(Array(text.utf8), signingAs: signer)
        let shown = summary.text.joined(separator: "\n")
        for hidden in ["\u{202E}", "\u{2028}", "\u{2060}"] { #expect(!shown.contains(hidden)) }
        for escaped in ["\\u{202E}", "\\u{2028}", "\\u{2060}"] { #expect(shown.contains(escaped), "\(shown)") }
        // Not printable ASCII: the bytes follow in hex, so "pаypal" is told from "paypal".
        #expect(shown.contains("d0b0"), "\(shown)")
    }

    @Test func aMessageThatIsNotUTF8IsShownInHex() {
        let summary = SigningSummary.message([0xFF, 0xFE, 0x41], signingAs: signer)
        #expect(summary.text.contains { $0.contains("fffe41") }, "\(summary.text)")
    }

    // MARK: Raw payloads

    @Test func aRawPayloadSaysItsMeaningCannotBeTold() {
        let summary = SigningSummary.payload([UInt8](repeating: 7, count: 32), signingAs: signer)
        #expect(summary.warnings.contains { $0.contains("cannot be told") && $0.contains("any network") && $0.contains("any address") },
                "\(summary.warnings)")
        #expect(summary.text.contains { $0.contains(String(repeating: "07", count: 32)) })
        #expect(summary.network == nil)
    }

    @Test func longPayloadsThatDifferPastTheShownPartRenderDifferently() {
        let base = [UInt8](repeating: 7, count: 999)
        let (one, other) = (SigningSummary.payload(base + [1], signingAs: signer), SigningSummary.payload(base + [2], signingAs: signer))
        #expect(one.text != other.text)
        expectElidedAndSaid(one, "payload: 1000 bytes")
    }

    // MARK: One quoting

    @Test func customPassphrasesAndNamesAreQuotedTheOneWay() throws {
        let network = try StellarNetwork(passphrase: "My net\u{202E}ten")
        let preimage = try AuthorizationPreimage(network: network, nonce: 1, signatureExpirationLedger: 9,
                                                 invocation: invocation(call: execute(SCValBytes.u32(1)), subInvocations: 0))
        let summary = SigningSummary.preimage(preimage, on: network, signingAs: ("bob\u{2060}", alice))
        let shown = summary.text.joined(separator: "\n")
        #expect(!shown.contains("\u{202E}") && shown.contains("\\u{202E}"), "\(shown)")
        #expect(!shown.contains("\u{2060}") && shown.contains("\"bob\\u{2060}\""), "\(shown)")
        #expect(SigningSummary.quotedIfNeeded("alice") == "alice")
        #expect(SigningSummary.quotedIfNeeded("/home/a b/.config") == "\"/home/a b/.config\"")
        #expect(SigningSummary.quotedIfNeeded("\u{0430}lice") == SigningSummary.quoted("\u{0430}lice"))
        #expect(SigningSummary.quotedIfNeeded("") == "\"\"")
    }

    // MARK: The bound on the whole

    @Test func theTextNeverExceedsItsBoundsAndSaysWhenCut() throws {
        let huge = try StellarNetwork(passphrase: String(repeating: "\u{202E}", count: 40_000))
        let wide = SCValBytes.vec((0..<12).map { _ in SCValBytes.vec((0..<12).map { _ in SCValBytes.vec((0..<12).map { _ in
            SCValBytes.bytes([UInt8](repeating: 0xEE, count: 64)) }) }) })
        let summaries: [SigningSummary] = [
            SigningSummary.transaction(try envelope(call: execute(SCValBytes.u32(1)), subInvocations: 11_000), on: huge, signingAs: signer),
            SigningSummary.transaction(try envelope(call: execute(wide)), on: .testnet, signingAs: signer),
            SigningSummary.message([UInt8](repeating: 0x41, count: 1 << 20), signingAs: signer),
            SigningSummary.payload([UInt8](repeating: 0x41, count: 1 << 20), signingAs: signer),
        ]
        for summary in summaries {
            #expect(summary.text.count <= SigningSummary.maximumLines, "\(summary.text.count) lines")
            #expect(summary.text.reduce(0) { $0 + $1.utf8.count + 1 } <= SigningSummary.maximumBytes)
            #expect(summary.isElided && summary.text.dropFirst().prefix(2).contains { $0.hasPrefix("  !! ") }, "\(summary.text.prefix(3))")
        }
    }

    @Test func aSummaryWithNothingElidedSaysNothingOfIt() throws {
        let summary = SigningSummary.transaction(try envelope(call: execute(SCValBytes.u32(1))), on: .testnet, signingAs: signer)
        #expect(!summary.isElided && summary.warnings.isEmpty)
        #expect(summary.text == [summary.title] + summary.lines)
        #expect(summary.title == "Transaction on testnet (\"Test SDF Network ; September 2015\")")
        #expect(summary.text == TransactionSummary(try envelope(call: execute(SCValBytes.u32(1))), on: .testnet, signingAs: signer).lines)
    }

    @Test func theJSONHasTheKindTheTextAndTheTransaction() throws {
        let summary = SigningSummary.transaction(try envelope(call: execute(SCValBytes.u32(1))), on: .testnet, signingAs: nil)
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any])
        #expect(json["kind"] as? String == "transaction" && json["title"] as? String == summary.title)
        #expect(json["elided"] as? Bool == false && (json["lines"] as? [String]) == summary.lines)
        #expect((json["transaction"] as? [String: Any])?["hash"] as? String == summary.transaction?.hash)
    }
}

extension Array {
    func repeated(_ count: Int) -> [Element] { (0..<count).flatMap { _ in self } }
}

extension SigningSummaryTests {
    /// Authorization entries: the transaction's summary, then who signs which entries until which ledger; the
    /// JSON carries the plan.
    @Test func authorizationsFollowTheTransactionWithThePlan() throws {
        let envelope = try envelope(call: execute(SCValBytes.u32(1)))
        let plan = try envelope.authorizationPlan(for: .account(alice), expirationLedger: 77)
        let summary = SigningSummary.authorizations(in: envelope, on: .testnet, plan: plan, expirationLedger: 77, signingAs: signer)
        let transaction = SigningSummary.transaction(envelope, on: .testnet, signingAs: nil)
        #expect(Array(summary.lines.prefix(transaction.lines.count)) == transaction.lines)
        #expect(summary.lines.suffix(2) == ["  signer      alice (\(alice.accountID)), for its authorization entries",
                                            "  signs       authorization 1, valid through ledger 77"])
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any])
        #expect(json["kind"] as? String == "authorizations")
        #expect((json["authorizations"] as? [String: Any])?["toSign"] as? [Int] == [1])
        #expect((json["authorizations"] as? [String: Any])?["expirationLedger"] as? Int == 77)
    }
}
