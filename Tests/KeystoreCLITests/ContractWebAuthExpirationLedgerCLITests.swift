import Foundation
import Testing
import TestFixtures

/// `keystore web-auth --account C…` against stellar-sdk's own SEP-45 challenge builder, unchanged (the server's mode
/// "stock": build_challenge_authorization_entries on a stand-in RPC at ledger 1000000), which leaves the client's
/// entries at expiration ledger 0 and signs the server's through 1000180. The server then checks, as the host's
/// simulation would, that the client's signature is not expired, and logs the ledger it was signed through.
@Suite(.offThePool, .serialized, .interopServer { try SEP45Server.forTheGoldenAccount() })
final class ContractWebAuthExpirationLedgerCLITests {
    static let account = ContractWebAuthInteropCLITests.account
    static let serverLedger = 1_000_180
    let server: SEP45Server
    let home: KeystoreHome
    let golden = KeystoreHome.golden

    init() throws {
        server = try InteropServer.ofThisSuite()  // one for the suite
        try server.setMode("stock")  // which also empties its log
        home = try KeystoreHome(inProcess: true)
        try home.addGolden()
    }

    func signIn(_ extra: [String] = [], stdin: String? = nil) throws -> KeystoreProcess.Result {
        try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name, "--pin-stdin"] + extra,
                     stdin: stdin ?? golden.pin + "\n")
    }

    @Test func aStockChallengeSignsInThroughTheServersOwnLedger() throws {
        let result = try signIn()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try jwtClaims(result.stdout.trimmingCharacters(in: .newlines))["sub"] as? String == Self.account)
        #expect(result.stderr.contains(
            "  expires     after ledger \(Self.serverLedger), with the server's own signature (the challenge left it to the client)\n"),
                "\(result.stderr)")
        let post = try #require(try server.posts.last)
        #expect(post["accepted"] as? Bool == true && post["expiration"] as? Int == Self.serverLedger, "\(post)")
    }

    @Test func aGivenExpirationLedgerIsSignedShownAndAccepted() throws {
        let result = try signIn(["--expiration-ledger", "1000005"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("  expires     after ledger 1000005, as given\n"), "\(result.stderr)")
        let post = try #require(try server.posts.last)
        #expect(post["accepted"] as? Bool == true && post["expiration"] as? Int == 1_000_005, "\(post)")
    }

    /// keystore cannot know the current ledger: a ledger already past is signed as given, and the server refuses it.
    @Test func aLedgerAlreadyPastIsRefusedByTheServer() throws {
        let result = try signIn(["--expiration-ledger", "999999"])
        #expect(result.status == 13 && result.stderr.contains("expired at ledger 999999"), "\(result.stderr)")
    }

    /// A signature valid after the server's own would outlive the sign-in: refused before the PIN, nothing posted.
    @Test func aLedgerAfterTheServersIsRefusedBeforeThePIN() throws {
        let before = home.snapshot()
        let result = try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name,
                                   "--expiration-ledger", String(Self.serverLedger + 1)])
        #expect(result.status == 2 && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("from 1 to \(Self.serverLedger)") && result.stderr.contains("Give --expiration-ledger \(Self.serverLedger) or less"),
                "\(result.stderr)")
        #expect(try server.posts.isEmpty)
        #expect(home.snapshot() == before)
    }

    @Test func theClientDomainsEntryIsSignedThroughTheSameLedger() throws {
        let signup = try home.run(["signup", "--import", "--name", "client-domain", "--pin-stdin", "--kdf", "interactive"],
                                  stdin: ContractWebAuthInteropCLITests.fixtures.clientDomainSeed + "\n135792\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let result = try signIn(["--client-domain", "http://localhost:\(server.port)", "--client-domain-name", "client-domain"],
                                stdin: golden.pin + "\n135792\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("  client      \"localhost\" (\(ContractWebAuthInteropCLITests.clientDomainKey)), after ledger \(Self.serverLedger)\n"),
                "\(result.stderr)")
        #expect(try server.posts.last?["accepted"] as? Bool == true)
    }

    /// `--challenge --account`: a stock challenge fetched by a script is signed through the given ledger, and the
    /// server accepts what the script posts.
    @Test func aStockChallengeGivenOfflineIsSignedThroughTheGivenLedger() throws {
        let (contract, serverKey) = try server.identity()
        let answer = try JSONSerialization.jsonObject(with: try server.get("/auth?account=\(Self.account)&home_domain=127.0.0.1")) as! [String: Any]
        let result = try home.run(["web-auth", "--challenge", answer["authorization_entries"] as! String, "--account", Self.account,
                                   "--server-key", serverKey, "--web-auth-contract", contract, "--home-domain", "127.0.0.1",
                                   "--web-auth-domain", "127.0.0.1:\(server.port)", "--network", "testnet", "--expiration-ledger", "1000010",
                                   "--name", golden.name, "--pin-stdin"], stdin: golden.pin + "\n")
        #expect(result.status == 0 && result.stderr.contains("  expires     after ledger 1000010, as given\n"), "\(result.stderr)")
        let body = try JSONSerialization.data(withJSONObject: ["authorization_entries": result.stdout.trimmingCharacters(in: .newlines)])
        let posted = try server.post("/auth", json: body)
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
        #expect(try server.posts.last?["expiration"] as? Int == 1_000_010)
    }

    @Test func theExpirationLedgerIsForAContractAccountOnly() throws {
        let result = try home.run(["web-auth", server.url, "--name", golden.name, "--expiration-ledger", "1000005"])
        #expect(result.status == 64 && result.stderr.contains("--expiration-ledger are for a contract account"), "\(result.stderr)")
    }
}
