import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// Soroban values and calls, written byte by byte (Stellar-contract.x), as a person must see them before signing.
enum SCValBytes {
    static func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func uint32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func uint64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func opaque(_ value: [UInt8]) -> [UInt8] { uint32(UInt32(value.count)) + value + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4) }

    static func u32(_ value: UInt32) -> [UInt8] { int32(3) + uint32(value) }
    static func i128(hi: Int64, lo: UInt64) -> [UInt8] { int32(10) + uint64(UInt64(bitPattern: hi)) + uint64(lo) }
    static func u256(_ words: [UInt64]) -> [UInt8] { int32(11) + words.flatMap(uint64) }
    static func i256(_ words: [UInt64]) -> [UInt8] { int32(12) + words.flatMap(uint64) }
    static func symbol(_ text: String) -> [UInt8] { int32(15) + opaque(Array(text.utf8)) }
    static func string(_ text: String) -> [UInt8] { int32(14) + opaque(Array(text.utf8)) }
    static func bytes(_ value: [UInt8]) -> [UInt8] { int32(13) + opaque(value) }
    static func vec(_ elements: [[UInt8]]) -> [UInt8] { int32(16) + uint32(1) + uint32(UInt32(elements.count)) + elements.flatMap { $0 } }
    static func account(_ key: PublicKey) -> [UInt8] { int32(0) + int32(0) + key.rawRepresentation }
    static func address(_ key: PublicKey) -> [UInt8] { int32(18) + account(key) }
    static func contractAddress(_ id: [UInt8]) -> [UInt8] { int32(1) + id }

    static func call(_ contract: [UInt8], _ function: String, _ args: [[UInt8]]) -> [UInt8] {
        contractAddress(contract) + opaque(Array(function.utf8)) + uint32(UInt32(args.count)) + args.flatMap { $0 }
    }

    /// An envelope with one INVOKE_HOST_FUNCTION of `call`, and one address-credential authorisation entry per
    /// `auth` item (its signer and the call at its root).
    static func envelope(source: PublicKey, call: [UInt8], auth: [(signer: PublicKey, root: [UInt8])]) throws -> TransactionEnvelope {
        var bytes = int32(2) + int32(0) + source.rawRepresentation + uint32(100) + uint64(1) + int32(0) + int32(0)
        bytes += uint32(1) + uint32(0) + int32(24)  // one operation, no source, INVOKE_HOST_FUNCTION
        bytes += int32(0) + call                     // HOST_FUNCTION_TYPE_INVOKE_CONTRACT
        bytes += uint32(UInt32(auth.count))
        for entry in auth {
            bytes += int32(1) + account(entry.signer) + uint64(7) + uint32(1_000_000) + int32(1)  // address, nonce 7, expiry, void signature
            bytes += int32(0) + entry.root + uint32(0)                                             // contract fn, no sub-invocations
        }
        bytes += int32(0) + uint32(0)  // ext, signatures
        return try TransactionEnvelope(xdr: bytes)
    }
}

@Suite struct ContractCallTests {
    let alice = KeyPair.random().publicKey
    let bob = KeyPair.random().publicKey
    let token = [UInt8](repeating: 0xAB, count: 32)

    func value(_ bytes: [UInt8]) throws -> XDR.SCVal {
        var reader = XDRReader(bytes)
        return try XDR.SCVal(xdr: &reader)
    }

    @Test func integersOfEveryWidthAreExactDecimals() throws {
        #expect(SCValText.shown(try value(SCValBytes.i128(hi: 0, lo: 500_000_000))) == "i128 500000000")
        #expect(SCValText.shown(try value(SCValBytes.i128(hi: -1, lo: UInt64.max))) == "i128 -1")
        #expect(SCValText.shown(try value(SCValBytes.i128(hi: Int64.min, lo: 0))) == "i128 -170141183460469231731687303715884105728")
        #expect(SCValText.shown(try value(SCValBytes.i128(hi: Int64.max, lo: UInt64.max))) == "i128 170141183460469231731687303715884105727")
        #expect(SCValText.shown(try value(SCValBytes.u256([.max, .max, .max, .max])))
                == "u256 115792089237316195423570985008687907853269984665640564039457584007913129639935")
        #expect(SCValText.shown(try value(SCValBytes.i256([1 << 63, 0, 0, 0])))
                == "i256 -57896044618658097711785492504343953926634992332820282019728792003956564819968")
        #expect(SCValText.shown(try value(SCValBytes.u32(7))) == "u32 7")
    }

    @Test func kindsThatCouldLookAlikeAreTaggedAndNestingIsBounded() throws {
        #expect(SCValText.shown(try value(SCValBytes.symbol("a"))) == "symbol \"a\"")
        #expect(SCValText.shown(try value(SCValBytes.string("a"))) == "string \"a\"")
        #expect(SCValText.shown(try value(SCValBytes.string("a\u{2060}b"))).contains("\\u{2060}"))
        #expect(SCValText.shown(try value(SCValBytes.address(alice))) == alice.accountID)
        let long = [UInt8](repeating: 1, count: 100)
        #expect(SCValText.shown(try value(SCValBytes.bytes(long))).hasSuffix("… (100 bytes)"))
        #expect(SCValText.exact(try value(SCValBytes.bytes(long))) == "bytes " + Hex.string(long))
        let wide = SCValBytes.vec((0..<20).map { SCValBytes.u32(UInt32($0)) })
        #expect(SCValText.shown(try value(wide)).hasSuffix("u32 11, … 8 more not shown]"))
        let deep = SCValBytes.vec([SCValBytes.vec([SCValBytes.vec([SCValBytes.vec([SCValBytes.u32(1)])])])])
        #expect(SCValText.shown(try value(deep)) == "[[[[… 1 nested deeper than 4 levels, not shown]]]]")
        #expect(SCValText.exact(try value(deep)) == "[[[[u32 1]]]]")
    }

    @Test func aTokenTransferReadsAsASentenceWithEveryArgumentShown() throws {
        let call = SCValBytes.call(token, "transfer", [SCValBytes.address(alice), SCValBytes.address(bob), SCValBytes.i128(hi: 0, lo: 500_000_000)])
        let envelope = try SCValBytes.envelope(source: alice, call: call, auth: [(alice, call)])
        let summary = TransactionSummary(envelope, on: .testnet)
        let fields = Dictionary(uniqueKeysWithValues: summary.operations[0].fields.map { ($0.name, $0.value.description) })
        let contract = try StrKey(kind: .contract, payload: token).stringValue
        #expect(fields["argument 1"] == alice.accountID && fields["argument 2"] == bob.accountID && fields["argument 3"] == "i128 500000000")
        #expect(fields["reads as"] == "transfer 500000000 (50.0000000 at 7 decimals, as every Stellar Asset Contract has) from \(alice.accountID) to \(bob.accountID) on \(contract)")
        #expect(fields["authorization 1"]?.hasSuffix(", strict") == true, "\(fields)")
        #expect(fields["invokes"] == "\(contract) \"transfer\"(\(alice.accountID), \(bob.accountID), i128 500000000)")
        #expect(summary.warnings.isEmpty)
    }

    @Test func aNameAloneIsNoTokenCall() throws {
        // "transfer" with an amount of the wrong type: no sentence is guessed.
        let call = SCValBytes.call(token, "transfer", [SCValBytes.address(alice), SCValBytes.address(bob), SCValBytes.u32(5)])
        let summary = TransactionSummary(try SCValBytes.envelope(source: alice, call: call, auth: []), on: .testnet)
        #expect(!summary.operations[0].fields.contains { $0.name == "reads as" })
        #expect(ContractCallText.sevenDecimals("5") == "0.0000005" && ContractCallText.sevenDecimals("-123456789") == "-12.3456789")
    }

    @Test func anAuthorizationForAnotherCallIsMarkedAndWarnedAbout() throws {
        let call = SCValBytes.call(token, "transfer", [SCValBytes.address(alice), SCValBytes.address(bob), SCValBytes.i128(hi: 0, lo: 1)])
        let other = SCValBytes.call(token, "transfer", [SCValBytes.address(alice), SCValBytes.address(bob), SCValBytes.i128(hi: 0, lo: 1_000_000_000)])
        let summary = TransactionSummary(try SCValBytes.envelope(source: bob, call: call, auth: [(alice, other)]), on: .testnet)
        let entry = try #require(summary.operations[0].fields.first { $0.name == "authorization 1" })
        #expect(entry.value.description.contains("NOT STRICT") && entry.value.description.contains("nonce 7"))
        #expect(summary.warnings.contains { $0.contains("authorization 1 is not strict") }, "\(summary.warnings)")
        #expect(summary.lines.first { $0.contains("invokes") }?.contains("i128 1000000000") == true)
    }

    /// Every argument of every contract call in the stellar-sdk fixtures is shown, and nothing of them is lost
    /// to a bound unless it nests or runs past it (then the line says so).
    @Test func everyArgumentOfEveryFixtureIsShown() throws {
        var calls = 0
        for fixture in TransactionFixtures.loaded.envelopes {
            let envelope = try TransactionEnvelope(base64: fixture.envelope)
            let summary = TransactionSummary(envelope, on: try StellarNetwork(passphrase: fixture.passphrase))
            for operation in summary.operations where operation.type == "invoke_host_function" {
                guard let count = operation.fields.first(where: { $0.name == "arguments" }) else { continue }
                guard case .count(let arguments) = count.value else { Issue.record("arguments is not a count"); continue }
                calls += 1
                let shown = operation.fields.filter { $0.name.hasPrefix("argument ") }
                #expect(shown.count == arguments, "\(fixture.name)")
                #expect(shown.allSatisfy { !$0.value.description.isEmpty })
            }
        }
        #expect(calls >= 8, "the fixtures hold 8 contract calls")
    }
}

/// The exact rendering, which strictness compares, tells apart what the bounded one shows alike.
@Suite struct SCValExactTests {
    @Test func instancesWithDifferentStorageAreNotAlike() throws {
        // SCV_CONTRACT_INSTANCE (19) with the Stellar Asset executable (1), and a storage map of one entry
        // symbol "k" → u32 n.
        func instance(_ n: UInt32) throws -> XDR.SCVal {
            var reader = XDRReader(SCValBytes.int32(19) + SCValBytes.int32(1) + SCValBytes.uint32(1) + SCValBytes.uint32(1)
                                   + SCValBytes.symbol("k") + SCValBytes.u32(n))
            return try XDR.SCVal(xdr: &reader)
        }
        #expect(SCValText.shown(try instance(1)) == SCValText.shown(try instance(2)))
        #expect(SCValText.exact(try instance(1)) != SCValText.exact(try instance(2)))
    }
}
