import Testing
@testable import StellarKeys
@testable import StellarKeystore

/// What a token's errors say about what came from outside (issue 41, 7.8).
@Suite struct TokenMessageTests {
    /// A key ID is argument text like any other: a long one is cut to 64 hex digits in its middle, and the message
    /// says how long it was, rather than echoing 600 hex digits.
    @Test func aLongKeyIDIsCutAndSaysSo() {
        let id = [UInt8](repeating: 0xAB, count: 300)
        let message = TokenError.noKeyNamed(label: nil, id: id).message
        #expect(!message.contains(String(repeating: "ab", count: 33)), "\(message)")
        #expect(message.contains("…") && message.contains("300 bytes"), "\(message)")
        #expect(message.count < 200, "\(message)")
        // A short one is shown whole.
        #expect(TokenError.keyNotFound(id: [0xA1, 0xB2]).message.contains("ID a1b2:"))
    }

    /// An empty token PIN is told the token PIN's rule, not the vault PIN's 6 digits.
    @Test func anEmptyTokenPINIsToldTheTokenRule() {
        #expect {
            var none: [UInt8] = []
            _ = try PIN(token: SecureBytes(consuming: &none))
        } throws: { error in
            let message = (error as? PINError)?.message ?? ""
            return message.contains("4 to 64") && !message.contains("6 digits")
        }
    }
}
