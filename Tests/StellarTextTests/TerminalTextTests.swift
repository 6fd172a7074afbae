import Testing
@testable import StellarText

/// Text from outside, made safe for a terminal: escaped, and cut where it is too long.
@Suite struct TerminalTextTests {
    /// A server's or libcurl's error says what went wrong at its end: a cut keeps the end, and the start, and says
    /// what it left out with "…" (issue 28, 9.10).
    @Test func aLongValueLosesItsMiddleNotItsEnd() {
        let reason = "Failed to connect to wallet.example.org port 443 after 3 ms: Couldn't connect to server"
        let shown = TerminalText.escaped(reason)
        #expect(shown.hasSuffix("Couldn't connect to server"), "\(shown)")
        #expect(shown.hasPrefix("Failed to connect to"), "\(shown)")
        #expect(shown.contains("…"), "\(shown)")
        #expect(shown.unicodeScalars.count == TerminalText.valueLimit + 1, "\(shown.unicodeScalars.count): \(shown)")
    }

    @Test func aValueWithinTheLimitIsShownWhole() {
        let text = String(repeating: "a", count: TerminalText.valueLimit)
        #expect(TerminalText.escaped(text) == text)
        #expect(TerminalText.escaped(text + "b", limit: nil) == text + "b")
    }

    /// The limit counts characters as they are, before escaping; an escape is never split by the cut.
    @Test func controlCharactersAreEscapedOnBothSidesOfTheCut() {
        let text = "\u{1b}[2J" + String(repeating: "x", count: 100) + "\u{07}"
        let shown = TerminalText.escaped(text, limit: 10)
        #expect(shown == "\\x1b[2Jx…xxxx\\x07", "\(shown)")
    }
}
