import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// What a request can move (`Outflow`), on envelopes stellar-sdk made (fixtures/tx-envelopes.json,
/// fixtures/make-tx-envelopes.py, whose classic cases come from the account of seed 0x01…, to the account of seed
/// 0x02…, with USD and LONGASSET123 issued by the account of seed 0x03…, fee bumps paid by the fixture signer).
@Suite struct OutflowTests {
    struct Envelope: Decodable { let name, envelope: String }
    struct File: Decodable { let envelopes: [Envelope]; let signer: Signer }
    struct Signer: Decodable { let address: String }
    static let file = try! Fixtures.load(File.self, "tx-envelopes.json")

    static func key(_ byte: UInt8) -> PublicKey {
        try! KeyPair(seed: SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: byte) }).publicKey
    }
    static let destination = key(2).accountID, issuer = key(3).accountID

    static func outflow(_ name: String) throws -> Outflow {
        let envelope = try #require(file.envelopes.first { $0.name == name }, "\(name)")
        return Outflow(of: try TransactionEnvelope(base64: envelope.envelope))
    }

    @Test func aPaymentMovesItsAmountAndTheFee() throws {
        let payment = try Self.outflow("payment_native (testnet, memo hash, time)")
        #expect(payment.amounts == ["native": 1_000_000_001 + 100])
        #expect(payment.fee == 100)
        #expect(payment.destinations == [Self.destination])
        #expect(payment.operations == ["payment"])
        #expect(payment.isCountable)
        #expect(payment.timeBounds != nil)
        #expect(try Self.outflow("create_account (testnet, memo id, none)").timeBounds == nil)
    }

    /// A muxed destination is kept as written, with its id (a policy tells one id from another); its account is
    /// what receives.
    @Test func aMuxedDestinationKeepsItsIdAndTheMemoIsRead() throws {
        let payment = try Self.outflow("payment_credit12_muxed (testnet, memo none, v2)")
        #expect(payment.amounts == ["LONGASSET123:\(Self.issuer)": Int64.max, "native": 100])
        let muxed = try #require(payment.destinations.first)
        #expect(payment.destinations.count == 1)
        #expect(try StrKey(muxed, as: .muxedAccount).ed25519PublicKey?.accountID == Self.destination)
        #expect(payment.memo == nil)
        // A muxed source is the account too.
        let source = try Self.outflow("payment_credit4 (testnet, memo return, open-time, muxed source)")
        #expect(source.amounts == ["USD:\(Self.issuer)": 1, "native": 100])
        guard case .return(let hash)? = source.memo else { Issue.record("memo \(String(describing: source.memo))"); return }
        #expect(hash.count == 32)
        #expect(try Self.outflow("create_account (testnet, memo id, none)").memo.map { if case .id = $0 { true } else { false } } == true)
    }

    @Test func pathPaymentsAndOffersCountWhatTheyCanSell() throws {
        #expect(try Self.outflow("path_payment_strict_receive (testnet, memo text, none)").amounts == ["native": 100_000_000 + 100])
        #expect(try Self.outflow("path_payment_strict_send (testnet, memo return, open-time)").amounts
                == ["USD:\(Self.issuer)": 50_000_000, "native": 100])
        // Buying 3 USD at 7/2 XLM each sells at most 10.5 XLM.
        #expect(try Self.outflow("manage_buy_offer (testnet, memo hash, time)").amounts == ["native": 105_000_000 + 100])
        #expect(try Self.outflow("manage_sell_offer (public, memo text, time)").amounts == ["USD:\(Self.issuer)": 10_000_000, "native": 100])
    }

    @Test func whatCannotBeCountedSaysWhy() throws {
        let merge = try Self.outflow("account_merge (testnet, memo id, v2)")
        #expect(!merge.isCountable)
        #expect(merge.uncountable == ["accountMerge moves the account's whole balance"])
    }

    /// A key may co-sign another account's operation: what every operation moves counts, whatever its source.
    @Test func everyOperationCountsWhateverItsSource() throws {
        let six = try Self.outflow("six operations (testnet)")
        // The USD payment's source is another account (muxed): counted with the rest.
        #expect(six.amounts == ["native": 1_000_000_001 + 125_000_000 + 1500, "USD:\(Self.issuer)": 10_000_000])
        #expect(six.operations == ["payment", "createAccount", "manageData", "bumpSequence", "setOptions"])
        #expect(six.destinations == [Self.destination])
    }

    @Test func aFeeBumpChargesItsOuterFeeAndNotTheInnerOne() throws {
        let bump = try Self.outflow("fee bump of payment_native (testnet)")
        #expect(bump.amounts == ["native": 1_000_000_001 + 1000])
        #expect(bump.fee == 1000)
        #expect(bump.destinations == [Self.destination])
    }

    @Test func aTokenTransferCountsOnItsContract() throws {
        struct Call: Decodable { struct Argument: Decodable { let value: String }; let function, contract, envelope: String; let args: [Argument] }
        struct Calls: Decodable { let calls: [Call] }
        let call = try #require(try Fixtures.load(Calls.self, "sep41-calls.json").calls.first { $0.function == "transfer" })
        let outflow = Outflow(of: try TransactionEnvelope(base64: call.envelope))
        #expect(outflow.amounts[call.contract] == Int64(call.args[2].value))
        #expect(outflow.destinations == [call.args[1].value])
        #expect(outflow.calls == [Outflow.Call(contract: call.contract, function: "transfer")])
        #expect(outflow.operations == ["invokeHostFunction"])
    }

    @Test func aClassicAssetHasItsContractOnEachNetwork() {
        // The lumens' contract on testnet and on the public network, as stellar-sdk's Asset.native().contract_id gives them.
        #expect(StellarAssetContract.id(of: "native", on: .testnet) == "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC")
        #expect(StellarAssetContract.id(of: "native", on: .public) == "CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA")
        #expect(StellarAssetContract.id(of: "USD:\(Self.issuer)", on: .testnet) != StellarAssetContract.id(of: "USD:\(Self.issuer)", on: .public))
        #expect(StellarAssetContract.id(of: "USD", on: .testnet) == nil)
        #expect(StellarAssetContract.id(of: "US$:\(Self.issuer)", on: .testnet) == nil)
    }
}

/// The counting rules, checked against an independent reading of them (fixtures/policy-requests.json, made by
/// fixtures/make-policy-requests.py with stellar-sdk and its own Python count of every request).
@Suite struct OutflowFixtureTests {
    struct Expected: Decodable {
        struct Call: Decodable { let contract, function: String }
        struct Bounds: Decodable { let min, max: String }
        let countable: Bool
        let outflows: [String: String]
        let destinations, operations, trades: [String]
        let memo: [String: String]?
        let calls: [Call]
        let fee: String
        let timeBounds: Bounds?
    }
    struct Request: Decodable { let name, kind, networkPassphrase, xdr: String; let expected: Expected }
    struct Undecodable: Decodable { let name, kind, xdr: String }
    struct Contract: Decodable { let asset, networkPassphrase, contract: String }
    struct File: Decodable {
        let identity: String
        let requests: [Request]
        let undecodable: [Undecodable]
        let stellarAssetContracts: [Contract]
    }
    static let file = try! Fixtures.load(File.self, "policy-requests.json")

    @Test func everyRequestCountsAsTheReferenceCountsIt() throws {
        #expect(Self.file.requests.count > 60)
        for request in Self.file.requests {
            let outflow = request.kind == "authEntry"
                ? Outflow(of: try AuthorizationPreimage(base64: request.xdr))
                : Outflow(of: try TransactionEnvelope(base64: request.xdr))
            let expected = request.expected
            // Sums past Int64 are kept at Int64.max here: more than any cap.
            let amounts = expected.outflows.mapValues { Int64($0) ?? .max }
            #expect(outflow.isCountable == expected.countable, "\(request.name): \(outflow.uncountable)")
            let calls = expected.calls.map { Outflow.Call(contract: $0.contract, function: $0.function) }
            #expect(outflow.operations == expected.operations, "\(request.name)")
            #expect(outflow.amounts == amounts, "\(request.name)")
            #expect(outflow.destinations == expected.destinations, "\(request.name)")
            #expect(outflow.trades == expected.trades, "\(request.name)")
            let memo: [String: String]? = switch outflow.memo {
            case nil: nil
            case .text(let bytes): ["text": String(decoding: bytes, as: UTF8.self)]
            case .id(let id): ["id": String(id)]
            case .hash(let bytes): ["hash": Hex.string(bytes)]
            case .return(let bytes): ["return": Hex.string(bytes)]
            }
            #expect(memo == expected.memo, "\(request.name)")
            #expect(outflow.calls == calls, "\(request.name)")
            #expect(String(outflow.fee) == expected.fee, "\(request.name)")
            #expect(outflow.timeBounds.map { "\($0.min)-\($0.max)" } == expected.timeBounds.map { "\($0.min)-\($0.max)" }, "\(request.name)")
        }
    }

    @Test func whatCannotBeDecodedIsNotCounted() {
        for request in Self.file.undecodable {
            #expect(throws: (any Error).self, "\(request.name)") { try TransactionEnvelope(base64: request.xdr) }
        }
    }

    @Test func stellarAssetContractsAreTheSDKs() throws {
        for contract in Self.file.stellarAssetContracts {
            #expect(StellarAssetContract.id(of: contract.asset, on: try StellarNetwork(passphrase: contract.networkPassphrase)) == contract.contract)
        }
    }
}
