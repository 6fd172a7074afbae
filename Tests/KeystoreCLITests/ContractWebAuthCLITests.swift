import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestFixtures

/// The SEP-45 server of Tests/Interop/sep45-server.py, built from stellar-sdk's own SEP-45 pieces, on 127.0.0.1.
/// It plays the contract account too: `accountKey` is the key it accepts, as the account convention or as the
/// smart account signer External(`verifier`, key) under `contextRules`.
final class SEP45Server: InteropServer, @unchecked Sendable {
    init(clientDomainKey: String, accountKey: String, verifier: String, contextRules: String) throws {
        try super.init(script: "sep45-server.py", arguments: ["--client-domain-key", clientDomainKey, "--account-key", accountKey,
                                                              "--verifier", verifier, "--context-rules", contextRules])
    }

    func setMode(_ mode: String) throws { _ = try get("/_control/mode?set=\(mode)") }

    /// The requests to /auth since the mode was set.
    func log() throws -> [[String: Any]] { try log(at: "/_control/log") }

    var posts: [[String: Any]] { get throws { try log().filter { $0["method"] as? String == "POST" } } }

    /// The web-auth contract and the server's key, as its stellar.toml gives them.
    func identity() throws -> (contract: String, server: String) {
        let object = try JSONSerialization.jsonObject(with: try get("/_control/contract")) as! [String: String]
        return (object["contract"]!, object["server"]!)
    }

    /// The server both SEP-45 interop suites share the set-up of: the golden identity's key is the contract
    /// account's, as the account convention or under context rule 0.
    static func forTheGoldenAccount() throws -> SEP45Server {
        try SEP45Server(clientDomainKey: ContractWebAuthInteropCLITests.clientDomainKey, accountKey: KeystoreHome.golden.address,
                        verifier: ContractWebAuthInteropCLITests.fixtures.verifier, contextRules: "0")
    }
}

/// `keystore web-auth --account C…` against a SEP-45 server made of stellar-sdk's code: the golden identity's key is
/// the contract account's signer. One server for the suite.
@Suite(.offThePool, .serialized, .interopServer { try SEP45Server.forTheGoldenAccount() })
final class ContractWebAuthInteropCLITests {
    static let fixtures = try! ContractWebAuthChallengeFixtures.load()
    static let account = fixtures.cases[0].clientAccount
    static let clientDomainKey = WebAuthInteropCLITests.clientDomainKey
    let server: SEP45Server
    let home: KeystoreHome
    let golden = KeystoreHome.golden

    init() throws {
        server = try InteropServer.ofThisSuite()
        try server.setMode("valid")  // as a new server is: honest challenges, an empty log
        home = try KeystoreHome(inProcess: true)
        try home.addGolden()
    }

    func signIn(_ extra: [String] = [], stdin: String? = nil) throws -> KeystoreProcess.Result {
        try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name, "--pin-stdin"] + extra,
                     stdin: stdin ?? golden.pin + "\n")
    }

    @Test func aContractAccountSignInGetsATokenTheServerAccepted() throws {
        let result = try signIn()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try jwtClaims(result.stdout.trimmingCharacters(in: .newlines))["sub"] as? String == Self.account)
        let log = try server.log()
        #expect(log.count == 2 && log[0]["account"] as? String == Self.account && log[0]["home_domain"] as? String == "127.0.0.1")
        #expect(log.last?["accepted"] as? Bool == true, "\(log)")
        let contract = try server.identity().contract
        #expect(result.stderr.hasPrefix("Sign in to \"127.0.0.1\" as \(Self.account)\n  signer      \(golden.name) (\(golden.address)), on behalf of \(Self.account)\n"),
                "\(result.stderr)")
        #expect(result.stderr.contains("  contract    \(contract), web_auth_verify only\n"))
        #expect(result.stderr.contains("  server      \(try server.identity().server) (\"127.0.0.1:\(server.port)\")\n"))
    }

    /// As an OpenZeppelin smart account's External(verifier, key) signer: the server, playing the account, reads
    /// the AuthPayload and checks the signature over the payload bound to the rule ids. Rule ids it does not hold
    /// are signed as asked, and refused by the server.
    @Test func aSmartAccountSignerGetsATokenForItsRulesOnly() throws {
        let result = try signIn(["--verifier", Self.fixtures.verifier, "--context-rules", "0"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try server.posts.last?["accepted"] as? Bool == true)
        #expect(result.stderr.contains(Self.fixtures.verifier))

        try server.setMode("valid")
        let other = try signIn(["--verifier", Self.fixtures.verifier, "--context-rules", "1"])
        #expect(other.status == 13 && other.stderr.contains("context rules [1], not [0]"), "\(other.stderr)")
        #expect(try server.posts.count == 1)
    }

    @Test func jsonAddsTheClaimsMarkedUnverifiedAndTheSigner() throws {
        let result = try signIn(["--json", "--quiet"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(object["account"] as? String == Self.account && object["signer"] as? String == golden.address)
        #expect((object["claims"] as? [String: Any])?["sub"] as? String == Self.account)
        #expect(object["claimsVerified"] as? Bool == false)
    }

    static var hostileModes: [String] {
        fixtures.cases.filter { $0.rule != nil && $0.clientDomain == nil }.map(\.name)
    }

    /// No PIN can be had here (no terminal, no PIN option): a command that got as far as the PIN would fail with
    /// another code. Exit 12, no POST, and the vault as it was show the refusal came first.
    @Test(arguments: hostileModes)
    func aHostileChallengeIsRefusedBeforeThePINAndNothingIsPosted(_ mode: String) throws {
        try server.setMode(mode)
        let before = home.snapshot()
        let result = try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name])
        #expect(result.status == 12, "\(mode): \(result.stderr)")
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("keystore: The sign-in challenge was refused, nothing was signed: "),
                "\(mode): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try server.log().count == 1 && server.posts.isEmpty, "\(mode)")
        #expect(home.snapshot() == before)
    }

    func importClientDomain() throws {
        let signup = try home.run(["signup", "--import", "--name", "client-domain", "--pin-stdin", "--kdf", "interactive"],
                                  stdin: Self.fixtures.clientDomainSeed + "\n135792\n")
        try #require(signup.status == 0, "\(signup.stderr)")
    }

    @Test func theClientDomainSignsItsEntryToo() throws {
        try importClientDomain()
        try server.setMode("valid-client-domain")
        let result = try signIn(["--client-domain", "http://localhost:\(server.port)", "--client-domain-name", "client-domain"],
                                stdin: golden.pin + "\n135792\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try jwtClaims(result.stdout.trimmingCharacters(in: .newlines))["client_domain"] as? String == "localhost")
        #expect(try server.log().first?["client_domain"] as? String == "localhost")
        #expect(result.stderr.contains("  client      \"localhost\" (\(Self.clientDomainKey)), after ledger"), "\(result.stderr)")
    }

    @Test(arguments: fixtures.cases.filter { $0.rule != nil && $0.clientDomain != nil }.map(\.name))
    func aHostileClientDomainChallengeIsRefusedBeforeAnyPIN(_ mode: String) throws {
        try importClientDomain()
        try server.setMode(mode)
        let result = try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name,
                                   "--client-domain", "http://localhost:\(server.port)", "--client-domain-name", "client-domain"])
        #expect(result.status == 12 && result.stderrLines.count == 1, "\(mode): \(result.stderr)")
        #expect(try server.posts.isEmpty, "\(mode)")
    }

    /// `--challenge --account`: a script with its own HTTP client fetches, keystore checks and signs, the script posts.
    @Test func entriesGivenOfflineAreSignedAsTheServerAccepts() throws {
        let (contract, serverKey) = try server.identity()
        let answer = try JSONSerialization.jsonObject(with: try server.get("/auth?account=\(Self.account)&home_domain=127.0.0.1")) as! [String: Any]
        let result = try home.run(["web-auth", "--challenge", answer["authorization_entries"] as! String, "--account", Self.account,
                                   "--server-key", serverKey, "--web-auth-contract", contract, "--home-domain", "127.0.0.1",
                                   "--web-auth-domain", "127.0.0.1:\(server.port)", "--network", "testnet",
                                   "--name", golden.name, "--pin-stdin"], stdin: golden.pin + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let body = try JSONSerialization.data(withJSONObject: ["authorization_entries": result.stdout.trimmingCharacters(in: .newlines)])
        let posted = try server.post("/auth", json: body)
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
    }

    /// A `G…` account is SEP-10's: refused (exit 2) before the server is asked anything.
    @Test func anAccountThatIsNotAContractIsRefusedBeforeAnyRequest() throws {
        let result = try home.run(["web-auth", server.url, "--account", golden.address, "--name", golden.name])
        #expect(result.status == 2 && result.stderr.contains("is not a contract (C…) address"), "\(result.stderr)")
        #expect(result.stderr.contains("a G… or M… account signs in without --account (SEP-10)"))
        #expect(try server.log().isEmpty)
    }

    /// A V1 challenge (ADDRESS credentials, which bind no address): refused before the PIN and the POST unless
    /// accepted with --allow-v1, then signed as the server accepts.
    @Test func aV1ChallengeIsSignedOnlyWithAllowV1() throws {
        try server.setMode("valid-v1")
        let refused = try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name])
        #expect(refused.status == 2 && refused.stderr.contains("binds no address"), "\(refused.stderr)")
        #expect(try server.posts.isEmpty)
        let result = try signIn(["--allow-v1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try server.posts.last?["accepted"] as? Bool == true)
        #expect(result.stderr.contains("  !! this is a V1 payload: the signature binds no address"), "\(result.stderr)")
    }

    @Test func aRedirectToAnotherHostIsNotFollowed() throws {
        try server.setMode("redirect-elsewhere")
        let result = try home.run(["web-auth", server.url, "--account", Self.account, "--name", golden.name])
        #expect(result.status == 13 && result.stderr.contains("another scheme, host or port; it was not followed"), "\(result.stderr)")
        #expect(try server.log().count == 1)
    }
}

/// What needs no server: the stellar-sdk fixtures signed offline, and arguments refused by their shape.
@Suite(.offThePool) struct ContractWebAuthCLITests {
    static let fixtures = try! ContractWebAuthChallengeFixtures.load()

    func offline(_ fixture: ContractWebAuthChallengeFixtures.Case, _ extra: [String] = [], stdin: String = "") throws -> KeystoreProcess.Result {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        return try home.run(["web-auth", "--challenge", fixture.challenge, "--account", fixture.clientAccount, "--server-key", fixture.serverKey,
                             "--web-auth-contract", fixture.webAuthContract, "--home-domain", fixture.homeDomain,
                             "--web-auth-domain", fixture.webAuthDomain, "--network", "testnet", "--name", KeystoreHome.golden.name] + extra,
                            stdin: stdin)
    }

    /// The golden identity's key is the fixtures' client key: what keystore signs is byte for byte the list
    /// stellar-sdk's authorize_entry made, for the account convention and for a smart account's signer.
    @Test(arguments: ["valid", "valid-v1", "valid-server-first"])
    func anHonestChallengeIsSignedAsStellarSDKSignsIt(_ name: String) throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == name })
        let plain = try offline(fixture, ["--allow-v1", "--pin-stdin", "--quiet"], stdin: KeystoreHome.golden.pin + "\n")
        #expect(plain.status == 0 && plain.stdout == fixture.signed!.entries + "\n", "\(plain.stderr)")
        let smart = try offline(fixture, ["--allow-v1", "--verifier", Self.fixtures.verifier, "--context-rules", "0", "--pin-stdin", "--quiet"],
                                stdin: KeystoreHome.golden.pin + "\n")
        #expect(smart.status == 0 && smart.stdout == fixture.signedSmartAccount!.entries + "\n", "\(smart.stderr)")
    }

    /// A V1 entry binds no address (CAP-71-02): without --allow-v1, and with nobody at a terminal to say yes, it is
    /// refused before the PIN (none is given here: a command that asked for one would fail otherwise).
    @Test func aV1ChallengeNeedsAllowV1() throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == "valid-v1" })
        let result = try offline(fixture)
        #expect(result.status == 2 && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("V1 payload, which binds no address") && result.stderr.contains("--allow-v1"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// The person about to type the PIN is asked about a V1 challenge, after the summary: "yes" signs it (byte for
    /// byte as stellar-sdk does), anything else refuses before the PIN is asked.
    @Test func aPersonAtTheTerminalIsAskedAboutAV1Challenge() throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == "valid-v1" })
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let arguments = ["web-auth", "--challenge", fixture.challenge, "--account", fixture.clientAccount, "--server-key", fixture.serverKey,
                         "--web-auth-contract", fixture.webAuthContract, "--home-domain", fixture.homeDomain,
                         "--web-auth-domain", fixture.webAuthDomain, "--network", "testnet", "--name", KeystoreHome.golden.name]
        let yes = try PseudoTerminal()
        let signing = try home.keystore.start(arguments, terminal: yes.path)
        yes.waitFor("Type yes to sign it anyway: ")
        #expect(yes.screen.contains("Sign in to \"anchor.example\" as \(fixture.clientAccount)"), "the summary came after the question: \(yes.screen)")
        yes.type("yes")
        yes.waitFor("PIN")
        yes.type(KeystoreHome.golden.pin)
        let signed = try signing.wait(timeout: 60)
        #expect(signed.status == 0 && signed.stdout == fixture.signed!.entries + "\n", "\(signed.stderr)")

        let no = try PseudoTerminal()
        let refusing = try home.keystore.start(arguments, terminal: no.path)
        no.waitFor("Type yes to sign it anyway: ")
        no.type("y")
        let refused = try refusing.wait(timeout: 60)
        #expect(refused.status == 2 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(!no.screen.contains("PIN"), "a PIN was asked after the refusal: \(no.screen)")
    }

    /// `web_auth_verify` is one authorization context: two rule ids are refused before the PIN.
    @Test func aSmartAccountSignerGivesOneRulePerContext() throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == "valid" })
        let result = try offline(fixture, ["--verifier", Self.fixtures.verifier, "--context-rules", "0,1"])
        #expect(result.status == 2 && result.stderrLines.count == 1 && result.stdout.isEmpty, "\(result.stderr)")
    }

    /// Each rule but the network passphrase's, which is about the service's answer: offline there is none.
    @Test(arguments: fixtures.cases.filter { $0.rule != nil && $0.clientDomain == nil && $0.rule != "network" }.map(\.name))
    func aHostileChallengeGivenOfflineIsRefusedBeforeThePIN(_ name: String) throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == name })
        let result = try offline(fixture, ["--json"])
        #expect(result.status == 12, "\(name): \(result.stdout)")
        #expect(result.stdout.contains("\"kind\":\"challenge-refused\""), "\(name): \(result.stdout)")
    }

    @Test(arguments: [(["--verifier", "CA"], "--verifier and --context-rules go together"),
                      (["--context-rules", "0"], "--verifier and --context-rules go together"),
                      (["--verifier", "CA", "--context-rules", "x"], "--context-rules takes rule ids"),
                      (["--web-auth-contract", "CA"], "--web-auth-contract is for --challenge with --account")])
    func argumentsOfTheWrongShapeAreUsageErrors(_ extra: [String], _ said: String) throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["web-auth", "http://127.0.0.1:1", "--account", Self.fixtures.cases[0].clientAccount,
                                   "--name", KeystoreHome.golden.name] + extra)
        #expect(result.status == 64 && result.stderr.contains(said), "\(result.stderr)")
    }
}
