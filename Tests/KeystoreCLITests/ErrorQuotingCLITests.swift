import Foundation
import Testing
import TestFixtures

/// A path from the command line, named in an error, is shown as other text from outside is (issue 41, 7.8): an
/// escape sequence or a bidi override in it never reaches the terminal raw.
@Suite(.offThePool) struct ErrorQuotingCLITests {
    @Test func anUnreadableInputPathIsEscaped() throws {
        let home = try KeystoreHome(inProcess: true)
        let path = home.path + "/no\u{1B}[2J\u{202E}such"
        let result = try home.run(["show-tx", "--network", "testnet", "--file", path], timeout: 20)
        #expect(result.status == 2 && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(result.stderr)")
        #expect(result.stderr.contains("no\\x1b[2J\\u{202E}such"), "\(result.stderr)")
    }
}
