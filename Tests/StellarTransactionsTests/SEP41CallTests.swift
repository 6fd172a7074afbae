import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// SEP-41 token calls as stellar-sdk builds them (fixtures/sep41-calls.json, fixtures/make-sep41-calls.py): each
/// function with SEP-41's argument types reads as its sentence, built here from the values the script recorded;
/// a look-alike (another amount type, an argument too many) reads as nothing.
@Suite struct SEP41CallTests {
    struct Call: Decodable {
        struct Argument: Decodable { let type, value: String }
        let function, contract, envelope: String
        let sep41: Bool
        let args: [Argument]
    }
    struct File: Decodable { let calls: [Call] }
    static let file = try! Fixtures.load(File.self, "sep41-calls.json")

    /// The amount with the point moved 7 places, written out digit by digit.
    static func sevenDecimals(_ decimal: String) -> String {
        let negative = decimal.hasPrefix("-")
        var digits = Array(negative ? decimal.dropFirst() : decimal[...])
        while digits.count < 8 { digits.insert("0", at: 0) }
        return (negative ? "-" : "") + String(digits.dropLast(7)) + "." + String(digits.suffix(7))
    }

    static func sentence(_ call: Call) -> String {
        let a = call.args.map(\.value)
        func quantity(_ amount: String) -> String { "\(amount) (\(sevenDecimals(amount)) at 7 decimals, as every Stellar Asset Contract has)" }
        let on = "on \(call.contract)"
        switch call.function {
        case "transfer": return "transfer \(quantity(a[2])) from \(a[0]) to \(a[1]) \(on)"
        case "transfer_from": return "\(a[0]) transfers \(quantity(a[3])) from \(a[1]) to \(a[2]) \(on)"
        case "approve": return "\(a[0]) lets \(a[1]) spend \(quantity(a[2])) until ledger \(a[3]) \(on)"
        case "burn": return "burn \(quantity(a[1])) of \(a[0]) \(on)"
        case "burn_from": return "\(a[0]) burns \(quantity(a[2])) of \(a[1]) \(on)"
        case "mint": return "mint \(quantity(a[1])) to \(a[0]) \(on)"
        default: return "claw back \(quantity(a[1])) from \(a[0]) \(on)"
        }
    }

    @Test func everyTokenFunctionReadsAsItsSentence() throws {
        #expect(Self.file.calls.filter(\.sep41).map(\.function).sorted()
                == ["approve", "burn", "burn_from", "clawback", "mint", "transfer", "transfer_from"])
        for call in Self.file.calls {
            let summary = TransactionSummary(try TransactionEnvelope(base64: call.envelope), on: .testnet)
            let readsAs = summary.operations[0].fields.first { $0.name == "reads as" }?.value.description
            #expect(readsAs == (call.sep41 ? Self.sentence(call) : nil), "\(call.function) \(call.args.map(\.type))")
        }
    }
}
