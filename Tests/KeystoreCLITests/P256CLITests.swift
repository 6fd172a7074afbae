import Foundation
import Testing
import TestFixtures
import PythonCryptography
import SoftwareTPM
import StellarKeys
import StellarKeystore

/// `keystore` with a NIST P-256 key resident in the suite's swtpm (`signup --tpm --p256`), as a smart account's
/// signer: every signature the TPM made is checked by the reference of OpenZeppelin's verifiers
/// (fixtures/make-webauthn.py, Python `cryptography`), never by keystore itself. Serialized: the tests share the
/// TPM's dictionary-attack counter, and each that adds failures clears them.
@Suite(.offThePool, .serialized, .softwareTPM, .enabled(if: SoftwareTPM.isInstalled, "swtpm or tpm2-tools is not installed"))
final class P256CLITests {
    let home = try! KeystoreHome()
    let pin = "270419"
    var swtpm: SoftwareTPM { SoftwareTPM.current! }

    var keystore: KeystoreProcess {
        var process = home.keystore
        process.environment["KEYSTORE_TPM_TCTI"] = swtpm.tcti
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        return process
    }

    func run(_ arguments: [String], stdin: String = "", tpm: String? = nil, agent: String? = nil) throws -> KeystoreProcess.Result {
        var process = keystore
        if let tpm { process.environment["KEYSTORE_TPM_TCTI"] = tpm }
        process.environment["KEYSTORE_AGENT"] = agent
        return try process.run(arguments, stdin: Array(stdin.utf8))
    }

    init() throws {
        _ = try home.keystoreWithRuntime()
    }

    /// `signup --tpm --p256`: the public key it prints.
    func signUp(_ name: String = "p256") throws -> String {
        let signup = try run(["signup", "--name", name, "--tpm", "--p256", "--allow-open-lockout", "--pin-stdin"], stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        // swtpm's lockout authorization is empty: said, as for every binding allowed on it.
        #expect(signup.stderr.contains("lockout authorization is not set"), "\(signup.stderr)")
        return signup.stdout.trimmingCharacters(in: .newlines)
    }

    func vaultBytes(_ name: String = "p256") throws -> Data { try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(name))) }

    struct Preimages: Decodable {
        struct Case: Decodable { let name, network, preimage: String }
        let cases: [Case]
    }

    /// A V2 preimage and as many rule ids as it has contexts (found by asking: the review names the count).
    func preimage() throws -> (preimage: String, rules: String) {
        let fixtures = try JSONDecoder().decode(Preimages.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("auth-preimages.json")))
        let found = try #require(fixtures.cases.first { $0.name == "v2 sep41 transfer" })
        return (found.preimage, "0")
    }

    /// The digest the summary says is signed: the smart account's, SHA-256 of the hash and the rule ids.
    func digest(in summary: String) throws -> String {
        let line = try #require(summary.split(separator: "\n").first { $0.hasPrefix("  signs ") }, "\(summary)")
        return String(try #require(line.split(separator: " ").dropFirst().first?.split(separator: ",").first))
    }

    @Test func theKeyIsMadeInTheTPMAndItsVaultHoldsNoSecret() throws {
        let key = try signUp()
        #expect(key.count == 130 && key.hasPrefix("04"), "\(key)")
        let vault = try #require(try JSONSerialization.jsonObject(with: vaultBytes()) as? [String: Any])
        #expect(vault["version"] as? Int == 5 && vault["publicKey"] == nil && vault["cipher"] == nil && vault["tpm"] != nil)
        #expect((vault["p256PublicKey"] as? String).flatMap(Base64.decode).map(Hex.string) == key)
        #expect(try run(["list"]).stdout == "p256\t\(key)\ttpm-p256\n")
    }

    @Test(arguments: [("webauthn", "verify"), ("secp256r1", "verify-secp256r1")])
    func everySignaturePassesTheVerifiersReference(_ form: String, _ check: String) throws {
        let key = try signUp()
        let (preimage, rules) = try preimage()
        let signed = try run(["sign-auth", "--name", "p256", "--preimage", "--context-rules", rules, "--signature-form", form,
                              "--network", "testnet", "--pin-stdin", preimage], stdin: "\(pin)\n")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stderr.contains("P-256 key \(key)"), "\(signed.stderr)")
        let signature = try #require(Base64.decode(signed.stdout.trimmingCharacters(in: .newlines)))
        let digest = try digest(in: signed.stderr)
        let script = KeystoreHome.fixtures.appendingPathComponent("make-webauthn.py").path
        let verified = try PythonCryptography.runScript(script, [check, key, digest, Hex.string(signature)])
        #expect(verified.status == 0, "\(verified.output)")
        // The reference can refuse: another digest does not pass.
        let other = String(digest.reversed())
        #expect(try PythonCryptography.runScript(script, [check, key, other, Hex.string(signature)]).status == 1)
    }

    @Test func aSmartAccountsEntriesAreSignedWithTheKeyInTheCredential() throws {
        let key = try signUp()
        struct Envelope: Decodable { let smartAccount, verifier, envelope, network: String; let rules: [UInt32]; let expiration: UInt32 }
        let fixture = try JSONDecoder().decode(Envelope.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("smart-account-envelopes.json")))
        let signed = try run(["sign-auth", "--name", "p256", "--account", fixture.smartAccount, "--verifier", fixture.verifier,
                              "--context-rules", fixture.rules.map(String.init).joined(separator: ","), "--network", fixture.network,
                              "--expiration-ledger", String(fixture.expiration), "--pin-stdin", fixture.envelope], stdin: "\(pin)\n")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stderr.contains("signer      p256 (P-256 key \(key)), for \(fixture.smartAccount)"), "\(signed.stderr)")
        let envelope = try #require(Base64.decode(signed.stdout.trimmingCharacters(in: .newlines)))
        let point = try #require(Hex.bytes(key))
        #expect(envelope.count > point.count && (0...(envelope.count - point.count)).contains { Array(envelope[$0..<$0 + point.count]) == point })
    }

    @Test func whatOnlyAStellarKeyDoesIsRefusedBeforeThePIN() throws {
        _ = try signUp()
        let before = try vaultBytes()
        // A SEP-10 sign-in, checked offline: the key has no account to sign in as, and is refused before the challenge.
        let webAuth = ["web-auth", "--challenge", "--server-key", KeystoreHome.golden.address, "--home-domain", "example.com",
                       "--web-auth-domain", "example.com", "--network", "testnet", "AAAA"]
        for arguments in [["sign", "--hex", "00"], ["sign-message", "hi"], ["export", "--force"], ["change-pin"], ["login", "--session"],
                          ["unbind"], ["address"], ["derive", "--account", "1"], webAuth] {
            // No PIN on standard input: a command that asked for one would fail otherwise.
            let refused = try run(arguments + ["--name", "p256"])
            #expect(refused.status == 2, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("P-256") && refused.stderr.split(separator: "\n").count == 1, "\(arguments): \(refused.stderr)")
        }
        #expect(try vaultBytes() == before)
    }

    /// Removed without its PIN, the key is named in the report as the key it was (it has no address).
    @Test func removedByForceItIsNamedAsItsKey() throws {
        let key = try signUp()
        let removed = try run(["remove", "--force", "--name", "p256"])
        #expect(removed.status == 0 && removed.stdout == "Removed p256 (P-256 key \(key))\n", "\(removed.stdout) \(removed.stderr)")
        #expect(try run(["list"]).stdout.isEmpty)
    }

    @Test func aWrongPINIsCountedByTheTPMAndLosesNothing() throws {
        _ = try signUp()
        let before = try vaultBytes()
        let (preimage, rules) = try preimage()
        let wrong = try run(["sign-auth", "--name", "p256", "--preimage", "--context-rules", rules, "--network", "testnet", "--pin-stdin", preimage],
                            stdin: "111111\n")
        #expect(wrong.status == 3, "\(wrong.stderr)")
        #expect(wrong.stdout.isEmpty && wrong.stderr.split(separator: "\n").last?.contains("PIN") == true, "\(wrong.stderr)")
        #expect(try vaultBytes() == before)
        try swtpm.clearLockout()
    }

    @Test func anotherTPMCannotUseTheKey() throws {
        _ = try signUp()
        let other = try SoftwareTPM()
        defer { other.stop() }
        let (preimage, rules) = try preimage()
        let refused = try run(["sign-auth", "--name", "p256", "--preimage", "--context-rules", rules, "--network", "testnet", "--pin-stdin", preimage],
                              stdin: "\(pin)\n", tpm: other.tcti)
        #expect(refused.status == 7 && refused.stdout.isEmpty, "\(refused.stderr)")
    }

    @Test func loginTriesThePINInTheTPMAndTheAgentHoldsTheKey() throws {
        let key = try signUp()
        let login = try run(["login", "--name", "p256", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(login.status == 0 && login.stdout == key + "\n", "\(login.stderr)")
        let socket = home.runtime + "/keystore/agent.sock"
        let agent = try keystore.start(["agent", "start", "--foreground"])
        defer { kill(agent.pid, SIGTERM); _ = try? agent.wait(timeout: 20) }
        for _ in 0..<500 { guard !(try AgentClient.isListening(at: socket)) else { break }; usleep(10_000) }
        let handed = try run(["login", "--agent", "--name", "p256", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(handed.status == 0 && handed.stdout == key + "\n", "\(handed.stderr)")
        let listed = try run(["agent", "list"], agent: socket)
        // Listed by its name in the protocol, p256: and its hex (shortened on a terminal's line).
        #expect(listed.stdout.contains("p256:\(key.prefix(20))"), "\(listed.stdout)\(listed.stderr)")
        // No PIN given: the agent signs, in the form asked, and the reference verifier accepts it.
        let (preimage, rules) = try preimage()
        let signed = try run(["sign-auth", "--name", "p256", "--preimage", "--context-rules", rules, "--signature-form", "secp256r1",
                              "--network", "testnet", preimage], agent: socket)
        #expect(signed.status == 0, "\(signed.stderr)")
        let signature = try #require(Base64.decode(signed.stdout.trimmingCharacters(in: .newlines)))
        let script = KeystoreHome.fixtures.appendingPathComponent("make-webauthn.py").path
        let verified = try PythonCryptography.runScript(script, ["verify-secp256r1", key, try digest(in: signed.stderr), Hex.string(signature)])
        #expect(verified.status == 0, "\(verified.output)")
        // What only an Ed25519 key signs is refused by the agent's review too.
        let payload = try run(["sign", "--name", "p256", "--hex", "00"], agent: socket)
        #expect(payload.status == 2 && payload.stderr.contains("P-256"), "\(payload.stderr)")
        let wrong = try run(["login", "--agent", "--name", "p256", "--pin-stdin"], stdin: "111111\n")
        #expect(wrong.status != 0 && wrong.stderr.split(separator: "\n").count == 1, "\(wrong.stderr)")
        try swtpm.clearLockout()
    }
}
