import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures
import StellarText

/// fixtures/tx-envelopes.json, made by stellar-sdk (fixtures/make-tx-envelopes.py).
struct TransactionFixtures: Decodable {
    struct Envelope: Decodable, CustomTestStringConvertible {
        let name, network, passphrase, kind, envelope, hash, signed: String
        let alreadySigned: Bool
        let operations: [String]
        var testDescription: String { name }
    }
    struct Full: Decodable { let envelope, passphrase, hash: String }
    struct Signer: Decodable { let secretSeed, address: String }
    let envelopes: [Envelope]
    let full: Full
    let signer: Signer

    static let loaded = try! Fixtures.load(TransactionFixtures.self, "tx-envelopes.json")
}

@Suite struct TransactionTests {
    static let fixtures = TransactionFixtures.loaded
    let keyPair = try! KeyPair(secretSeed: TransactionFixtures.loaded.signer.secretSeed)

    @Test func theFixturesCoverWhatTheIssueAsks() {
        let envelopes = Self.fixtures.envelopes
        #expect(envelopes.count >= 200)
        #expect(Set(envelopes.map(\.kind)) == ["v0", "v1", "fee-bump"])
        #expect(Set(envelopes.flatMap(\.operations)).count == 27)
        #expect(Set(envelopes.map(\.network)).count >= 2)
        #expect(envelopes.contains { $0.alreadySigned })
    }

    /// Read back through keystore's own decoder: the fixtures hold every SCVal arm and every memo type.
    @Test func theFixturesHoldEverySCValArmAndMemoType() throws {
        var arms = Set<String>()
        var memos = Set<String>()
        func walk(_ value: XDR.SCVal) {
            let mirror = Mirror(reflecting: value)
            arms.insert(mirror.children.first?.label ?? "\(value)")
            switch value {
            case .vec(let vector?): vector.value.forEach(walk)
            case .map(let map?): map.value.forEach { walk($0.key); walk($0.val) }
            case .instance(let instance): instance.storage?.value.forEach { walk($0.key); walk($0.val) }
            default: break
            }
        }
        for fixture in Self.fixtures.envelopes {
            let transaction: XDR.Transaction
            switch try TransactionEnvelope(base64: fixture.envelope).decoded {
            case .v0(let v0): memos.insert("\(v0.memo)".components(separatedBy: "(").first!); continue
            case .v1(let v1): transaction = v1
            case .feeBump(let bump): guard case .v1(let inner) = bump.innerTx else { continue }; transaction = inner.tx
            }
            memos.insert("\(transaction.memo)".components(separatedBy: "(").first!)
            for case .invokeHostFunctionOp(let op) in transaction.operations.map(\.body) {
                if case .invokeContract(let call) = op.hostFunction { call.args.forEach(walk) }
            }
        }
        #expect(arms.count == XDR.SCValType.allCases.count, "\(arms.sorted())")
        #expect(memos.count == XDR.MemoType.allCases.count, "\(memos.sorted())")
    }

    @Test(arguments: TransactionFixtures.loaded.envelopes)
    func signingGivesStellarSDKsBytes(_ fixture: TransactionFixtures.Envelope) throws {
        let envelope = try TransactionEnvelope(base64: fixture.envelope)
        #expect(envelope.kind.rawValue == fixture.kind)
        let network = try StellarNetwork(passphrase: fixture.passphrase)
        #expect(Hex.string(envelope.hash(on: network)) == fixture.hash)
        let signed = try envelope.signed(by: keyPair, on: network)
        #expect(signed.base64 == fixture.signed)
        #expect(signed.wasAlreadySigned == fixture.alreadySigned)
        #expect(Hex.string(signed.hash) == fixture.hash)
        // The summary names every operation as stellar-sdk's XDR does, and nothing in it reaches the terminal raw.
        let summary = TransactionSummary(envelope, on: network)
        #expect(summary.operations.map(\.type) == fixture.operations.map { $0.lowercased() })
        #expect(summary.hash == fixture.hash && summary.signatures == envelope.signatures.count)
        #expect(summary.lines.allSatisfy(TerminalText.isPlain))
    }

    @Test func theSummaryShowsWhatIsSigned() throws {
        let fixture = try #require(Self.fixtures.envelopes.first { $0.name.hasPrefix("payment_credit12_muxed (testnet") })
        let summary = TransactionSummary(try TransactionEnvelope(base64: fixture.envelope), on: .testnet)
        let payment = try #require(summary.operations.first)
        #expect(payment.type == "payment")
        #expect(payment.fields.map(\.name) == ["destination", "asset", "amount"])
        #expect(payment.fields[0].value.description.hasPrefix("M"))
        // The issuer is the key from seed 0x03…03 (fixtures/make-tx-envelopes.py).
        let issuer = try KeyPair(seed: SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 3) }).publicKey.accountID
        #expect(payment.fields[1].value.description == "LONGASSET123:" + issuer)
        #expect(payment.fields[2].value.description == "922337203685.4775807")
        #expect(summary.network == "testnet" && summary.fee == 100 && summary.feeXLM == "0.0000100")
        // A memo with an escape sequence is shown escaped, with its bytes (it is not all printable ASCII).
        let text = try #require(Self.fixtures.envelopes.first { $0.name.contains("memo text") })
        let memo = TransactionSummary(try TransactionEnvelope(base64: text.envelope), on: try StellarNetwork(passphrase: text.passphrase)).memo
        #expect(memo == "text \"hello é\\x1b[31m\" (hex 68656c6c6f20c3a91b5b33316d)")
    }

    @Test func aFullEnvelopeIsRefused() throws {
        let envelope = try TransactionEnvelope(base64: Self.fixtures.full.envelope)
        #expect(envelope.signatures.count == 20)
        #expect(throws: TransactionError.full) {
            try envelope.signed(by: keyPair, on: StellarNetwork(passphrase: Self.fixtures.full.passphrase))
        }
    }
}

/// A violation anywhere in an envelope is `TransactionError.invalidXDR` with the offset and what was expected
/// there, never a trap.
@Suite struct TransactionStrictnessTests {
    static let fixtures = TransactionFixtures.loaded.envelopes

    func bytes(_ name: String) throws -> [UInt8] {
        let fixture = try #require(Self.fixtures.first { $0.name.hasPrefix(name) }, "no fixture \(name)")
        return try #require(Base64.decode(fixture.envelope))
    }

    func refused(_ bytes: [UInt8], at offset: Int? = nil, expecting words: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try TransactionEnvelope(xdr: bytes)
            Issue.record("accepted", sourceLocation: sourceLocation)
        } catch TransactionError.invalidXDR(let error) {
            if let offset { #expect(error.offset == offset, "\(error)", sourceLocation: sourceLocation) }
            if let words { #expect(error.expected.contains(words), "\(error)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["payment_native (testnet", "invoke_every_scval (testnet", "v0 create_claimable_balance (testnet",
                      "fee bump of invoke_with_auth (public", "set_options_all (public", "six operations (futurenet"])
    func everyTruncationIsRefused(_ name: String) throws {
        let whole = try bytes(name)
        #expect(throws: Never.self) { try TransactionEnvelope(xdr: whole) }
        for length in 0..<whole.count {
            refused(Array(whole[..<length]))
        }
    }

    @Test func trailingBytesAreRefused() throws {
        let whole = try bytes("payment_native (testnet")
        refused(whole + [0, 0, 0, 0], at: whole.count, expecting: "the end of the envelope")
        refused(whole + [0], at: whole.count)
    }

    static func u32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// A v1 envelope made by hand, so that every offset is known: an ed25519 source, fee 100, sequence 1, no
    /// preconditions, `memo` (default: none), one BUMP_SEQUENCE operation without a source, no signatures.
    /// Offsets: source 4, fee 40, sequence 44, preconditions 52, memo 56; then the operation count, the
    /// operation's optional source, its type and bumpTo, ext, and the signature count (the last 4 bytes).
    static func plain(memo: [UInt8] = u32(0)) -> [UInt8] {
        u32(XDR.EnvelopeType.tx.rawValue) + u32(0) + [UInt8](repeating: 7, count: 32) + u32(100) + u32(0) + u32(1)
            + u32(0) + memo + u32(1) + u32(0) + u32(XDR.OperationType.bumpSequence.rawValue) + u32(0) + u32(5)
            + u32(0) + u32(0)
    }

    @Test func theHandMadeEnvelopeIsValid() throws {
        let envelope = try TransactionEnvelope(xdr: Self.plain())
        #expect(envelope.kind == .v1 && envelope.signatures.isEmpty)
        let summary = TransactionSummary(envelope, on: .testnet)
        #expect(summary.operations.map(\.type) == ["bump_sequence"] && summary.memo == nil && summary.fee == 100)
    }

    @Test func unknownDiscriminantsAreRefused() throws {
        var envelope = Self.plain()
        for type: UInt8 in [1, 3, 4, 6, 99] {
            envelope[3] = type
            refused(envelope, at: 0)
        }
        var source = Self.plain()
        source[7] = 1  // KEY_TYPE_PRE_AUTH: a known CryptoKeyType, but not a MuxedAccount arm
        refused(source, at: 4, expecting: "MuxedAccount arm")
        var precondition = Self.plain()
        precondition[55] = 3
        refused(precondition, at: 52, expecting: "PreconditionType")
        var memo = Self.plain()
        memo[59] = 5
        refused(memo, at: 56, expecting: "MemoType")
        var operation = Self.plain()
        operation[71] = 27
        refused(operation, at: 68, expecting: "OperationType")
        var optional = Self.plain()
        optional[67] = 2
        refused(optional, at: 64, expecting: "a bool (0 or 1)")
        var ext = Self.plain()
        ext[83] = 2
        refused(ext, at: 80, expecting: "TransactionExt arm")
    }

    @Test func paddingMustBeZero() throws {
        let text = Array("hello".utf8)  // 5 bytes, then 3 of padding
        let memo = Self.u32(1) + Self.u32(5) + text + [0, 0, 0]
        #expect(throws: Never.self) { try TransactionEnvelope(xdr: Self.plain(memo: memo)) }
        for padding in 0..<3 {
            var envelope = Self.plain(memo: memo)
            envelope[56 + 8 + 5 + padding] = 0x20
            refused(envelope, at: 56 + 8 + 5 + padding, expecting: "a zero padding byte")
        }
    }

    @Test func declaredMaximumsAreEnforced() throws {
        let plain = Self.plain()
        // 21 signatures where XDR allows 20: the count is the last 4 bytes of an unsigned envelope.
        var signatures = plain
        signatures[signatures.count - 1] = 21
        refused(signatures, at: plain.count - 4, expecting: "at most 20 elements")
        // 101 operations where MAX_OPS_PER_TX is 100.
        var operations = plain
        operations[63] = 101
        refused(operations, at: 60, expecting: "at most 100 elements")
        // A count far larger than what follows is refused before anything is allocated for it.
        var huge = plain
        huge.replaceSubrange(60..<64, with: [0x7F, 0xFF, 0xFF, 0xFF])
        refused(huge, at: 60, expecting: "at most 100")
        // A memo text longer than 28 bytes.
        refused(Self.plain(memo: Self.u32(1) + Self.u32(29) + [UInt8](repeating: 0x61, count: 32)), at: 60, expecting: "a length of at most 28")
    }

    /// An envelope invoking a contract with one argument: `depth` vectors, each holding the next, around a void.
    static func nestedEnvelope(depth: Int) -> [UInt8] {
        var bytes = Self.u32(XDR.EnvelopeType.tx.rawValue)
        bytes += Self.u32(0) + [UInt8](repeating: 7, count: 32)  // source: KEY_TYPE_ED25519
        bytes += Self.u32(100) + Self.u32(0) + Self.u32(1)  // fee, sequence number
        bytes += Self.u32(0) + Self.u32(0)  // PRECOND_NONE, MEMO_NONE
        bytes += Self.u32(1) + Self.u32(0) + Self.u32(XDR.OperationType.invokeHostFunction.rawValue)  // one operation, no source
        bytes += Self.u32(0) + Self.u32(1) + [UInt8](repeating: 9, count: 32)  // invoke contract C…
        bytes += Self.u32(1) + Array("f".utf8) + [0, 0, 0]  // function "f"
        bytes += Self.u32(1)  // one argument:
        for _ in 0..<depth { bytes += Self.u32(XDR.SCValType.vec.rawValue) + Self.u32(1) + Self.u32(1) }
        bytes += Self.u32(XDR.SCValType.void.rawValue)
        bytes += Self.u32(0) + Self.u32(0) + Self.u32(0)  // no auth entries, ext v0, no signatures
        return bytes
    }

    @Test func deepNestingIsRefusedNotAStackOverflow() throws {
        #expect(throws: Never.self) { try TransactionEnvelope(xdr: Self.nestedEnvelope(depth: 150)) }
        refused(Self.nestedEnvelope(depth: 10_000), expecting: "nested at most 200 deep")
        refused(Self.nestedEnvelope(depth: 200), expecting: "nested at most 200 deep")
    }

    @Test func deepNestingIsRefusedOnASmallStackToo() async throws {
        // Batch signing runs on Dispatch's worker threads, whose stacks are smaller than the main thread's.
        let refusedOnWorker = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: (try? TransactionEnvelope(xdr: Self.nestedEnvelope(depth: 10_000))) == nil)
            }
        }
        #expect(refusedOnWorker)
    }

    /// Hex is said to be hex only when, read as hex, it is an envelope: a short base64 that happens to use only
    /// hex digits ("AAAA") keeps its XDR error.
    @Test func aHexEnvelopeIsNamedAsHex() throws {
        let fixture = TransactionFixtures.loaded.envelopes[0]
        let hex = Hex.string(try #require(Base64.decode(fixture.envelope)))
        #expect(throws: TransactionError.hexNotBase64) { try TransactionEnvelope(base64: hex) }
        #expect(throws: TransactionError.hexNotBase64) { try TransactionEnvelope(base64: hex.uppercased()) }
        #expect { try TransactionEnvelope(base64: "AAAA") } throws: { error in
            guard case TransactionError.invalidXDR = error else { return false }
            return true
        }
    }
}
