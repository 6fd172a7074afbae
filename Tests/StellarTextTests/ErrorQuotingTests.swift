import Testing
@testable import StellarText

/// Text from outside in an error is shown character by character the way a summary shows it (issue 41, 7.8): a
/// control as `\xNN`, and what a terminal would not show as itself (a bidi override, a zero-width joiner, a
/// combining mark) as `\u{XXXX}`, never raw.
@Suite struct ErrorQuotingTests {
    @Test func aBidiOverrideInAnErrorIsShownAsItsCodePoint() {
        let shown = TerminalText.escaped("si\u{202E}srengis")
        #expect(shown == "si\\u{202E}srengis", "\(shown)")
        #expect(!shown.unicodeScalars.contains("\u{202E}"))
    }

    @Test func invisibleCharactersAreShownAsCodePointsAndControlsAsBytes() {
        #expect(TerminalText.escaped("a\u{200D}b\u{00AD}c\u{1B}d") == "a\\u{200D}b\\u{AD}c\\x1bd")
        // What a terminal shows as itself stays as it is.
        #expect(TerminalText.escaped("Здравствуйте → €") == "Здравствуйте → €")
        #expect(!TerminalText.isPlain("a\u{202E}b"))
    }

    /// A repeated JSON key (an account file's, a batch request's) is named in the error with its override escaped.
    @Test func aRepeatedJSONKeyWithABidiOverrideIsEscaped() {
        let json = Array(#"{"a\#u{202E}b":1,"a\#u{202E}b":2}"#.utf8)
        #expect {
            _ = try StrictJSON.parse(json, integersOnly: false)
        } throws: { error in
            let reason = (error as? StrictJSON.Violation)?.reason ?? ""
            return reason.contains("a\\u{202E}b") && !reason.unicodeScalars.contains("\u{202E}")
        }
    }
}
