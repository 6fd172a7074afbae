import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// A v1 transaction written byte by byte (RFC 4506, Stellar-transaction.x), so that each test holds exactly the
/// field it is about: a memo, an asset code, a time bound, one operation.
struct TransactionWriter {
    var bytes: [UInt8] = []

    mutating func int32(_ value: Int32) { bytes += withUnsafeBytes(of: value.bigEndian, Array.init) }
    mutating func uint32(_ value: UInt32) { bytes += withUnsafeBytes(of: value.bigEndian, Array.init) }
    mutating func uint64(_ value: UInt64) { bytes += withUnsafeBytes(of: value.bigEndian, Array.init) }
    mutating func opaque(_ value: [UInt8]) {
        uint32(UInt32(value.count))
        bytes += value + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }
    mutating func account(_ key: PublicKey) {
        int32(0)  // KEY_TYPE_ED25519
        bytes += key.rawRepresentation
    }

    enum Operation {
        case payment(to: PublicKey, code: [UInt8]?, issuer: PublicKey, amount: UInt64)
        case setOptions(masterWeight: UInt32?, thresholds: (UInt32, UInt32, UInt32)?, signer: (PublicKey, UInt32)?, homeDomain: [UInt8]?)
        case merge(into: PublicKey)
        case manageData(name: [UInt8])
    }

    static func envelope(source: PublicKey, timeBounds: (UInt64, UInt64)? = nil, memo: [UInt8]? = nil,
                         operations: [(source: PublicKey?, operation: Operation)]) -> TransactionEnvelope {
        var w = TransactionWriter()
        w.int32(2)  // ENVELOPE_TYPE_TX
        w.account(source)
        w.uint32(100 * UInt32(operations.count))
        w.uint64(4_294_967_297)
        if let timeBounds {
            w.int32(1)  // PRECOND_TIME
            w.uint64(timeBounds.0)
            w.uint64(timeBounds.1)
        } else {
            w.int32(0)
        }
        if let memo {
            w.int32(1)  // MEMO_TEXT
            w.opaque(memo)
        } else {
            w.int32(0)
        }
        w.uint32(UInt32(operations.count))
        for (opSource, operation) in operations {
            if let opSource { w.uint32(1); w.account(opSource) } else { w.uint32(0) }
            switch operation {
            case .payment(let to, let code, let issuer, let amount):
                w.int32(1)
                w.account(to)
                if let code {
                    w.int32(code.count == 4 ? 1 : 2)
                    w.bytes += code
                    w.account(issuer)
                } else {
                    w.int32(0)
                }
                w.uint64(amount)
            case .setOptions(let masterWeight, let thresholds, let signer, let homeDomain):
                w.int32(5)
                w.uint32(0); w.uint32(0); w.uint32(0)  // inflationDest, clearFlags, setFlags
                if let masterWeight { w.uint32(1); w.uint32(masterWeight) } else { w.uint32(0) }
                for value in thresholds.map({ [$0.0, $0.1, $0.2] }) ?? [] { w.uint32(1); w.uint32(value) }
                if thresholds == nil { w.uint32(0); w.uint32(0); w.uint32(0) }
                if let homeDomain { w.uint32(1); w.opaque(homeDomain) } else { w.uint32(0) }
                if let signer {
                    w.uint32(1)
                    w.int32(0)  // SIGNER_KEY_TYPE_ED25519
                    w.bytes += signer.0.rawRepresentation
                    w.uint32(signer.1)
                } else {
                    w.uint32(0)
                }
            case .merge(let into):
                w.int32(8)
                w.account(into)
            case .manageData(let name):
                w.int32(10)
                w.opaque(name)
                w.uint32(0)
            }
        }
        w.int32(0)   // ext
        w.uint32(0)  // signatures
        return try! TransactionEnvelope(xdr: w.bytes)
    }
}

@Suite struct SummaryTests {
    let alice = KeyPair.random().publicKey
    let bob = KeyPair.random().publicKey

    func memoLine(_ memo: [UInt8]) -> String {
        let envelope = TransactionWriter.envelope(source: alice, memo: memo, operations: [(nil, .manageData(name: Array("n".utf8)))])
        return TransactionSummary(envelope, on: .testnet).lines.first { $0.hasPrefix("  memo") }!
    }

    /// Each of these prints as nothing, or as something else, on a terminal: none may reach it raw, and each memo
    /// must look different from the plain one it imitates.
    @Test(arguments: [
        "\u{2060}", "\u{00AD}", "\u{E0041}", "\u{FE0F}", "\u{180E}", "\u{3164}", "\u{2028}", "\u{2029}", "\u{200B}",
        "\u{202E}", "\u{0301}", "\u{E000}", "\u{00A0}", "\u{FFA0}",
    ])
    func anInvisibleCharacterNeverPrintsRawAndNeverLooksLikeNothing(_ hidden: String) {
        let scalar = hidden.unicodeScalars.first!
        let line = memoLine(Array("12345\(hidden)6".utf8))
        #expect(!line.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) printed raw: \(line)")
        #expect(line.contains("\\u{\(String(scalar.value, radix: 16, uppercase: true))}") && line.contains("(hex 3132333435"), "\(line)")
        #expect(line != memoLine(Array("123456".utf8)))
    }

    @Test func aLookAlikeFromAnotherScriptShowsItsBytes() {
        let cyrillic = memoLine(Array("АВC".utf8))  // Cyrillic А and В, Latin C
        #expect(cyrillic == "  memo        text \"АВC\" (hex d090d09243)", "\(cyrillic)")
        #expect(memoLine(Array("ABC".utf8)) == "  memo        text \"ABC\"")
    }

    /// An escape written out in ASCII must not pass for an escaped control character, nor a quote end the text.
    @Test func backslashesAndQuotesAreEscapedSoThatNothingPassesForAnEscape() {
        let written = memoLine(Array(#"a\x1b"#.utf8))
        let real = memoLine([0x61, 0x1B])
        #expect(written == #"  memo        text "a\\x1b""#, "\(written)")
        #expect(real == #"  memo        text "a\x1b" (hex 611b)"#, "\(real)")
        #expect(memoLine(Array(#"a" (hex 00)"#.utf8)) == #"  memo        text "a\" (hex 00)""#)
        #expect(memoLine([0xFF, 0xFE]) != memoLine([0xFE, 0xFF]), "invalid UTF-8 shows its bytes")
    }

    @Test func dataNamesHomeDomainsAndPassphrasesFollowTheSameRules() throws {
        let envelope = TransactionWriter.envelope(source: alice, operations: [
            (nil, .manageData(name: Array("key\u{200B}".utf8))),
            (nil, .setOptions(masterWeight: nil, thresholds: nil, signer: nil, homeDomain: Array("exаmple.com".utf8))),
        ])
        let lines = TransactionSummary(envelope, on: try StellarNetwork(passphrase: "My Net\u{2066}work")).lines.joined(separator: "\n")
        #expect(lines.contains(#""key\u{200B}" (hex 6b6579e2808b)"#), "\(lines)")
        #expect(lines.contains(#""exаmple.com" (hex 6578d0b06d706c652e636f6d)"#), "\(lines)")
        #expect(lines.contains(#"("My Net\u{2066}work" (hex"#), "\(lines)")
    }

    @Test func anAssetCodeThatBreaksTheRulesIsShownAsInvalid() {
        func asset(_ code: [UInt8]) -> String {
            let envelope = TransactionWriter.envelope(source: alice, operations: [(nil, .payment(to: bob, code: code, issuer: bob, amount: 1))])
            let payment = TransactionSummary(envelope, on: .testnet).operations[0]
            return payment.fields.first { $0.name == "asset" }!.value.description
        }
        #expect(asset(Array("USD\0".utf8)) == "USD:" + bob.accountID)
        #expect(asset(Array("USDC".utf8)) == "USDC:" + bob.accountID)
        #expect(asset(Array("USDCOIN".utf8) + [0, 0, 0, 0, 0]) == "USDCOIN:" + bob.accountID)
        #expect(asset([0x55, 0x53, 0x00, 0x44]) == "(invalid asset code 55530044):" + bob.accountID)  // US\0D
        #expect(asset(Array("USDC".utf8) + [UInt8](repeating: 0, count: 8)).hasPrefix("(invalid asset code 55534443"))
        #expect(asset(Array("U-D\0".utf8)).hasPrefix("(invalid asset code"))
        #expect(asset([0, 0, 0, 0]).hasPrefix("(invalid asset code"))
    }

    @Test func whatAPersonMustNotMissComesFirst() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func warnings(_ envelope: TransactionEnvelope, signer: PublicKey? = nil) -> [String] {
            TransactionSummary(envelope, on: .testnet, signingAs: signer.map { ("alice", $0) }, now: now).warnings
        }
        let plain = TransactionWriter.envelope(source: alice, operations: [(nil, .payment(to: bob, code: nil, issuer: bob, amount: 1))])
        #expect(warnings(plain, signer: alice).isEmpty)
        let expired = TransactionWriter.envelope(source: alice, timeBounds: (0, 1_700_000_000), operations: [(nil, .manageData(name: [0x6E]))])
        #expect(warnings(expired).count == 1 && warnings(expired)[0].hasPrefix("EXPIRED"))
        let early = TransactionWriter.envelope(source: alice, timeBounds: (1_900_000_000, 0), operations: [(nil, .manageData(name: [0x6E]))])
        #expect(warnings(early).count == 1 && warnings(early)[0].hasPrefix("NOT YET VALID"))
        let takeover = TransactionWriter.envelope(source: alice, operations: [
            (nil, .setOptions(masterWeight: 0, thresholds: (1, 2, 3), signer: (bob, 10), homeDomain: nil)),
            (nil, .merge(into: bob)),
        ])
        let found = warnings(takeover)
        #expect(found.count == 4, "\(found)")
        #expect(found.contains { $0.contains("master key's weight of \(alice.accountID) to 0") })
        #expect(found.contains { $0.contains("thresholds") && $0.contains("low 1, medium 2, high 3") })
        #expect(found.contains { $0.contains("adds \(bob.accountID) as a signer") })
        #expect(found.contains { $0.contains("merges \(alice.accountID) away") && $0.contains(bob.accountID) })
        // Shown first, on lines of their own.
        let lines = TransactionSummary(takeover, on: .testnet, now: now).lines
        #expect(lines[1...4].allSatisfy { $0.hasPrefix("  !! ") }, "\(lines)")
    }

    @Test func theSummaryNamesWhoSignsAndSaysWhenTheyHaveNoPart() {
        let stranger = KeyPair.random().publicKey
        let envelope = TransactionWriter.envelope(source: alice, operations: [(bob, .payment(to: alice, code: nil, issuer: bob, amount: 1))])
        for involved in [alice, bob] {
            let summary = TransactionSummary(envelope, on: .testnet, signingAs: ("me", involved))
            #expect(summary.warnings.isEmpty && summary.lines.contains("  signer      me (\(involved.accountID))"))
        }
        let summary = TransactionSummary(envelope, on: .testnet, signingAs: ("me", stranger))
        #expect(summary.warnings == ["\(stranger.accountID) is neither the source, the fee source, nor any operation's source: check that this is the transaction you meant it to sign"])
    }

    /// JSON carries values typed: a function name is the name, a count a number, an operation type the text's.
    @Test func theJSONSummaryIsTyped() throws {
        let fixture = try #require(TransactionFixtures.loaded.envelopes.first { $0.name.hasPrefix("invoke_with_auth") })
        let summary = TransactionSummary(try TransactionEnvelope(base64: fixture.envelope), on: try StellarNetwork(passphrase: fixture.passphrase))
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any])
        let operation = try #require((json["operations"] as? [[String: Any]])?.first)
        let fields = try #require(operation["fields"] as? [[String: Any]])
        let function = try #require(fields.first { $0["name"] as? String == "function" }?["value"] as? String)
        #expect(!function.contains("\"") && !function.isEmpty, "\(function)")
        #expect(fields.first { $0["name"] as? String == "arguments" }?["value"] is Int)
        #expect(fields.first { $0["name"] as? String == "authorizations" }?["value"] is Int)
        #expect(operation["type"] as? String == "invoke_host_function")
        #expect(summary.lines.contains("  1. invoke_host_function"))
    }
}
