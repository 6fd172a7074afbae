import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

@Suite struct LockoutCodeTests {
    func typed(_ text: String) throws -> LockoutCode {
        var bytes = Array(text.utf8)
        return try LockoutCode(typed: SecureBytes(consuming: &bytes))
    }

    func text(_ code: LockoutCode) -> String {
        code.formatted().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aCodeReadsBackAsTypedInAnyCaseWithOrWithoutDashes() throws {
        let code = LockoutCode.random()
        let shown = text(code)
        #expect(shown.split(separator: "-").map(\.count) == Array(repeating: 5, count: 11))
        #expect(shown.allSatisfy { $0 == "-" || ("A"..."Z").contains($0) || ("2"..."7").contains($0) })
        for variant in [shown, shown.lowercased(), shown.split(separator: "-").joined(), shown.split(separator: "-").joined(separator: " ")] {
            #expect(try typed(variant).bytes.isEqual(to: code.bytes), "\(variant)")
        }
        #expect(!LockoutCode.random().bytes.isEqual(to: code.bytes))
    }

    /// Every single-symbol typo is caught here, before the TPM would count it against its lockout hierarchy.
    @Test func everySingleSymbolTypoIsCaught() throws {
        let shown = Array(text(.random()))
        for position in shown.indices where shown[position] != "-" {
            var typo = shown
            typo[position] = shown[position] == "Q" ? "R" : "Q"
            #expect(throws: TPMError.self) { try typed(String(typo)) }
        }
        #expect(throws: TPMError.self) { try typed(String(shown.dropLast())) }
        #expect(throws: TPMError.self) { try typed(String(shown) + "A") }
        #expect(throws: TPMError.self) { try typed(String(shown).replacingOccurrences(of: "-", with: "1")) }
    }

    @Test func anErrorNeverRepeatsTheCode() throws {
        let shown = text(.random())
        let first = shown.first!
        for mangled in ["1" + shown.dropFirst(), String(first == "A" ? "B" : "A") + shown.dropFirst()] {
            do {
                _ = try typed(mangled)
                Issue.record("accepted")
            } catch let error as TPMError {
                #expect(!error.message.contains(shown.dropFirst().prefix(10)))
                guard case .malformedLockoutCode = error else { Issue.record("\(error)"); continue }
            }
        }
    }
}
