import Foundation
import Testing
import TestFixtures

/// A network passphrase read from a request is cut in the one-line error like every value read from outside
/// (found by issue 32's outside review; the test failed on fd0e85e).
@Suite(.offThePool) struct LongNetworkPassphraseCLITests {
    let home = try! KeystoreHome(inProcess: true)

    /// The envelope of fixtures/sep7.json's `plain` request (stellar-sdk 16.1.1), percent-encoded as a request
    /// carries it.
    static func plainEnvelope() throws -> String {
        let data = try Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("sep7.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]])
        let plain = try #require(cases.first { $0["name"] as? String == "plain" })
        let envelope = try #require(plain["envelope"] as? String)
        return envelope.replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F")
            .replacingOccurrences(of: "=", with: "%3D")
    }

    /// A request's `network_passphrase` is read up to the request's 1 MiB and, when it is not the network given,
    /// put whole into the one-line error (`networkMismatch`, through `StellarNetwork.shown`): a planted field floods
    /// the screen, which TerminalText's `valueLimit` exists to stop ("a value is cut … so that a planted field
    /// cannot flood the screen"); msg (300) and chain (200, elided with its hash) are bounded, this is not.
    @Test func aRequestsHugeNetworkPassphraseDoesNotFloodTheError() throws {
        let uri = "web+stellar:tx?xdr=" + (try Self.plainEnvelope()) + "&network_passphrase=" + String(repeating: "A", count: 50_000)
        let result = try home.run(["sign-tx", "--network", "testnet", uri])
        #expect(result.status == 2 && result.stdout.isEmpty, "\(result.status)")
        #expect(result.stderrLines.count == 1, "\(result.stderrLines.count) lines")
        #expect(result.stderr.count < 2_000, "an error of \(result.stderr.count) characters")
        // With no network given, the refusal (no terminal to consent on) names the request's network the same way.
        try home.addGolden()
        let unconfirmed = try home.run(["sign-tx", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: KeystoreHome.golden.pin + "\n" + uri + "\n")
        #expect(unconfirmed.status == 64 && unconfirmed.stdout.isEmpty, "\(unconfirmed.status)")
        #expect(unconfirmed.stderr.count < 2_000, "an error of \(unconfirmed.stderr.count) characters")
    }
}
