import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// The `--json` summary carries contract-call arguments and authorization entries typed, not as the text a person
/// reads. Checked over stellar-sdk's envelope with one SCVal of every arm (fixtures/make-tx-envelopes.py,
/// `every_scval`), against the values that script wrote.
@Suite struct SCValJSONTests {
    func fields(_ prefix: String) throws -> [String: Any] {
        let fixture = try #require(TransactionFixtures.loaded.envelopes.first { $0.name.hasPrefix(prefix) && $0.network == "testnet" })
        let summary = TransactionSummary(try TransactionEnvelope(base64: fixture.envelope), on: .testnet)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let operations = try #require(try JSONSerialization.jsonObject(with: encoder.encode(summary.operations)) as? [[String: Any]])
        let list = try #require(operations.first?["fields"] as? [[String: Any]])
        return Dictionary(list.map { ($0["name"] as! String, $0["value"]!) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func everyArmIsTyped() throws {
        let fields = try fields("invoke_every_scval")
        func argument(_ n: Int) -> NSDictionary? { fields["argument \(n)"] as? NSDictionary }
        let expected: [[String: Any]] = [
            ["type": "bool", "value": true], ["type": "void"], ["type": "error", "value": "contract code 7"],
            ["type": "u32", "value": 4294967295], ["type": "i32", "value": -2147483648],
            ["type": "u64", "value": "18446744073709551615"], ["type": "i64", "value": "-9223372036854775808"],
            ["type": "timepoint", "value": "1700000000"], ["type": "duration", "value": "3600"],
            ["type": "u128", "value": "340282366920938463463374607431768211455"],
            ["type": "i128", "value": "-170141183460469231731687303715884105728"],
            ["type": "u256", "value": "115792089237316195423570985008687907853269984665640564039457584007913129639935"],
            ["type": "i256", "value": "-57896044618658097711785492504343953926634992332820282019728792003956564819968"],
            ["type": "bytes", "value": "000102" + Hex.string(Array("keystore".utf8))],
            ["type": "string", "value": "caf\u{e9} \u{2603}"], ["type": "symbol", "value": "transfer"],
            ["type": "vec", "value": [["type": "u32", "value": 1],
                                      ["type": "vec", "value": [["type": "symbol", "value": "nested"], ["type": "vec", "value": [] as [Any]]]]]],
            ["type": "map", "value": [["key": ["type": "symbol", "value": "a"], "value": ["type": "i32", "value": 1]],
                                      ["key": ["type": "symbol", "value": "b"], "value": ["type": "map", "value": [] as [Any]]]]],
            ["type": "address", "value": "CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE"],
            ["type": "instance"], ["type": "ledger_key_contract_instance"], ["type": "ledger_key_nonce", "value": "42"],
            ["type": "executable_tag", "value": "wasm"],
        ]
        #expect(fields["arguments"] as? Int == expected.count)
        for (index, value) in expected.enumerated() {
            #expect(argument(index + 1) == value as NSDictionary, "argument \(index + 1): \(String(describing: argument(index + 1)))")
        }
    }

    @Test func authorizationEntriesAreTyped() throws {
        let fields = try fields("invoke_with_auth")
        let source = try #require(fields["authorization 1"] as? [String: Any])
        #expect(source["credentials"] as? String == "source_account" && source["strict"] == nil)
        let address = try #require(fields["authorization 2"] as? [String: Any])
        #expect(address["credentials"] as? String == "address")
        #expect(address["nonce"] as? String == "77" && address["signatureExpirationLedger"] as? Int == 1000)
        // Its root is swap(i128 5); the transaction calls swap(G…, i128 10^20): not strict.
        #expect(address["strict"] as? Bool == false)
        #expect(address["signature"] as? NSDictionary == ["type": "vec", "value": [] as [Any]] as NSDictionary)
        // swap → transfer → burn, each with its argument i128 5.
        var node = try #require(address["invocation"] as? [String: Any])
        for function in ["swap", "transfer", "burn"] {
            #expect(node["function"] as? String == function)
            #expect((node["args"] as? [NSDictionary]) == [["type": "i128", "value": "5"] as NSDictionary])
            guard let next = (node["subInvocations"] as? [[String: Any]])?.first else { break }
            node = next
        }
        #expect(node["function"] as? String == "burn" && (node["subInvocations"] as? [Any])?.isEmpty == true)
    }
}
