import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

@Suite struct PINTests {
    @Test(arguments: ["000000"[...], "270419", "918273", "999999"])
    func sixASCIIDigitsAreAPIN(_ text: Substring) throws {
        _ = try PIN(String(text))
    }

    @Test(arguments: [
        ("", PINError.empty),
        ("12345", .wrongLength(5)),
        ("1234567", .wrongLength(7)),
        ("27041a", .notDigits),
        ("abcdef", .notDigits),
        ("270 419", .notDigits),
        (" 270419", .notDigits),
        ("270419\n", .notDigits),
        ("١٢٣٤٥٦", .notDigits),  // Arabic-Indic digits: isNumber says yes
        ("１２３４５６", .notDigits),  // full-width digits
        ("२७०४१९", .notDigits),  // Devanagari digits
        ("+27041", .notDigits),
    ])
    func malformedPINsAreRefusedWithTheirReason(_ text: String, _ expected: PINError) {
        #expect(throws: expected) { try PIN(text) }
    }

    @Test(arguments: [
        ("000000", "repeats one digit"), ("777777", "repeats one digit"),
        ("123456", "ascending"), ("345678", "ascending"), ("789012", "ascending"), ("012345", "ascending"),
        ("654321", "descending"), ("987654", "descending"), ("210987", "descending"),
        ("121212", "pair"), ("909090", "pair"),
        ("123123", "group of three"), ("147147", "group of three"),
        ("112233", "commonly chosen"), ("159753", "commonly chosen"), ("123321", "commonly chosen"),
    ])
    func guessablePINsAreRefusedWithWhy(_ text: String, _ reason: String) throws {
        let pin = try PIN(text)
        let error = try #require(throws: PINError.self) { try pin.checkStrength() }
        guard case .weak(let why) = error else { Issue.record("expected .weak, got \(error)"); return }
        #expect(why.contains(reason))
        #expect(error.message.contains(why))
    }

    @Test(arguments: ["270419", "918273", "503816", "124578"])
    func ordinaryPINsAreStrongEnough(_ text: String) throws {
        try PIN(text).checkStrength()
    }

    @Test func aPINNeverShowsInText() throws {
        let pin = try PIN("270419")
        #expect(!"\(pin)".contains("270419") && !String(reflecting: pin).contains("270419"))
    }
}
