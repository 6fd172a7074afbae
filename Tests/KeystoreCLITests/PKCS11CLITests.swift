import Foundation
import Testing
import TestFixtures
import SoftwareToken
import StellarKeystore
import StellarKeys

/// `keystore` with identities whose key is in a PKCS#11 token, as a user or a script sees it, against a private
/// SoftHSM2 token per test (its own `SOFTHSM2_CONF`), checked with OpenSC's `pkcs11-tool` where an independent
/// look is needed.
@Suite(.offThePool, .enabled(if: SoftwareToken.isInstalled, "softhsm2 or opensc is not installed"))
final class PKCS11CLITests {
    let home = try! KeystoreHome()
    let token: SoftwareToken
    let pin = "4711-token"

    init() throws {
        token = try SoftwareToken(label: "keystore-test", pin: pin)
        _ = try home.keystoreWithRuntime()
    }

    deinit { token.remove() }

    var keystore: KeystoreProcess {
        var process = home.keystore
        process.environment["XDG_RUNTIME_DIR"] = home.runtime
        for (key, value) in token.environment { process.environment[key] = value }
        return process
    }

    func run(_ arguments: [String], stdin: String = "", agent: String? = nil) throws -> KeystoreProcess.Result {
        var process = keystore
        process.environment["KEYSTORE_AGENT"] = agent
        return try process.run(arguments, stdin: Array(stdin.utf8))
    }

    func signUp(_ name: String = "hsm", _ extra: [String] = []) throws -> String {
        let signup = try run(["signup", "--name", name, "--pkcs11", token.modulePath, "--pin-stdin"] + extra, stdin: "\(pin)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        return signup.stdout.trimmingCharacters(in: .newlines)
    }

    func vaultBytes(_ name: String = "hsm") throws -> Data { try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(name))) }

    /// What pkcs11-tool lists of the token's objects, logged in.
    func objects() throws -> String {
        try token.pkcs11Tool(["--list-objects"])
    }

    /// pkcs11-tool's own Ed25519 signature of `message` by the key with `id`.
    func toolSignature(_ message: [UInt8], id: String) throws -> [UInt8] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-pkcs11-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let input = scratch.appendingPathComponent("in"), output = scratch.appendingPathComponent("out")
        try Data(message).write(to: input)
        _ = try token.pkcs11Tool(["--sign", "--mechanism", "EDDSA", "--id", id, "-i", input.path, "-o", output.path])
        return Array(try Data(contentsOf: output))
    }

    @Test func signupMakesAKeyInTheTokenAndTheVaultHoldsNoSecret() throws {
        let address = try signUp()
        let publicKey = try PublicKey(accountID: address)
        // The token made it: never extractable, sensitive, its public key the address.
        let listed = try objects()
        #expect(listed.contains("never extractable") && listed.contains("sensitive"), "\(listed)")
        #expect(listed.lowercased().contains(Hex.string(publicKey.rawRepresentation)), "\(listed)")
        let vault = try #require(try JSONSerialization.jsonObject(with: vaultBytes()) as? [String: Any])
        #expect(vault["version"] as? Int == 4 && vault["kdf"] == nil && vault["cipher"] == nil)
        let pkcs11 = try #require(vault["pkcs11"] as? [String: Any])
        // The module's file, every link followed: the file that was checked and loaded.
        let moduleFile = URL(fileURLWithPath: token.modulePath).resolvingSymlinksInPath().path
        #expect(pkcs11["module"] as? String == moduleFile && pkcs11["tokenLabel"] as? String == "keystore-test"
                && pkcs11["keyLabel"] as? String == "hsm")
        let list = try run(["list"])
        #expect(list.stdout == "hsm\t\(address)\tpkcs11\n")
        // No backup can hold it, and list says so rather than asking for one.
        #expect(list.stderr == "keystore: in no backup, as no backup can hold a key that never leaves its hardware: hsm (add a second signer, or keep the token's own backup)\n", "\(list.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try run(["list", "--json"]).stdoutBytes)) as? [String: Any])
        let entry = try #require((json["identities"] as? [[String: Any]])?.first)
        #expect(entry["keySource"] as? String == "pkcs11")
    }

    @Test func everySignatureIsTheTokensAndVerifies() throws {
        let address = try signUp()
        let publicKey = try PublicKey(accountID: address)
        let sign = try run(["sign", "--name", "hsm", "--pin-stdin", "--hex", "00ff"], stdin: "\(pin)\n")
        #expect(sign.status == 0, "\(sign.stderr)")
        let signature = try #require(Base64.decode(sign.stdout.trimmingCharacters(in: .newlines)))
        #expect(publicKey.isValidSignature(signature, for: [0x00, 0xFF]))
        // The same key, asked by an independent client, gives the same bytes (Ed25519 is deterministic).
        let vault = try JSONSerialization.jsonObject(with: vaultBytes()) as? [String: Any]
        let keyIDText = try #require((vault?["pkcs11"] as? [String: Any])?["keyId"] as? String)
        let keyID = try #require(Base64.decode(keyIDText))
        #expect(try toolSignature([0x00, 0xFF], id: Hex.string(keyID)) == signature)
        let message = try run(["sign-message", "--name", "hsm", "--pin-stdin", "hello"], stdin: "\(pin)\n")
        #expect(message.status == 0, "\(message.stderr)")
        let messageSignature = try #require(Base64.decode(message.stdout.trimmingCharacters(in: .newlines)))
        #expect(publicKey.isValidMessageSignature(messageSignature, for: Array("hello".utf8)))
    }

    @Test func aTransactionIsSignedThroughTheReview() throws {
        let address = try signUp()
        struct Envelopes: Decodable {
            struct Entry: Decodable { let envelope, passphrase: String }
            let envelopes: [Entry]
        }
        let envelopes = try JSONDecoder().decode(Envelopes.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("tx-envelopes.json")))
        let entry = envelopes.envelopes[0]
        let signed = try run(["sign-tx", "--name", "hsm", "--pin-stdin", "--network-passphrase", entry.passphrase],
                             stdin: "\(pin)\n\(entry.envelope)\n")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stderr.contains("signer      hsm (\(address))"), "\(signed.stderr)")
        // The token's signature is in the envelope, as the review counts it.
        let shown = try run(["show-tx", "--network-passphrase", entry.passphrase, signed.stdout.trimmingCharacters(in: .newlines)])
        #expect(shown.status == 0 && shown.stdout.contains("signatures  1 already"), "\(shown.stdout)\(shown.stderr)")
    }

    @Test func aWrongPINIsTheTokensAndLosesNothing() throws {
        _ = try signUp()
        let before = try vaultBytes()
        let wrong = try run(["sign", "--name", "hsm", "--pin-stdin", "--hex", "00"], stdin: "0000-wrong\n")
        #expect(wrong.status == 3, "\(wrong.stderr)")
        #expect(wrong.stderr.split(separator: "\n").count == 1 && wrong.stderr.contains("keystore-test"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("0000-wrong"))
        #expect(try vaultBytes() == before)
    }

    @Test func whatCannotApplyToATokenIsSaidBeforeAnyPIN() throws {
        _ = try signUp()
        let before = try vaultBytes()
        for (arguments, words) in [(["export", "--force"], "cannot be exported"), (["change-pin"], "its tools change it"),
                                   (["bind", "--tpm"], "a TPM adds nothing"), (["unbind"], "a TPM adds nothing"),
                                   (["upgrade"], "no cost to raise"), (["login", "--session"], "a session cannot hold"),
                                   (["derive", "--account", "1"], "no recovery phrase to derive others from")] {
            // No PIN on standard input: a command that asked for one would fail otherwise.
            let refused = try run(arguments + ["--name", "hsm"])
            #expect(refused.status == 2, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains(words) && refused.stderr.split(separator: "\n").count == 1, "\(arguments): \(refused.stderr)")
        }
        #expect(try vaultBytes() == before)
    }

    @Test func anExistingKeyIsFoundByLabelAndShownFirst() throws {
        _ = try token.pkcs11Tool(["--keypairgen", "--key-type", "EC:edwards25519", "--label", "made-elsewhere", "--id", "a1b2"])
        let signup = try run(["signup", "--name", "other", "--pkcs11", token.modulePath, "--existing", "--key-label", "made-elsewhere", "--pin-stdin"],
                             stdin: "\(pin)\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        let publicKey = try PublicKey(accountID: address)
        #expect(signup.stderr.contains("found key \"made-elsewhere\" (id a1b2)") && signup.stderr.contains(address), "\(signup.stderr)")
        #expect(try objects().lowercased().contains(Hex.string(publicKey.rawRepresentation)))
        let missing = try run(["signup", "--name", "third", "--pkcs11", token.modulePath, "--existing", "--key-label", "nothing-here", "--pin-stdin"],
                              stdin: "\(pin)\n")
        #expect(missing.status != 0 && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("third")))
    }

    @Test func aKeyDeletedBehindKeystoresBackIsAClearError() throws {
        _ = try signUp()
        let before = try vaultBytes()
        _ = try token.pkcs11Tool(["--delete-object", "--type", "privkey", "--label", "hsm"])
        let sign = try run(["sign", "--name", "hsm", "--pin-stdin", "--hex", "00"], stdin: "\(pin)\n")
        #expect(sign.status == 8, "\(sign.stderr)")
        #expect(sign.stderr.split(separator: "\n").count == 1 && sign.stderr.contains("key"), "\(sign.stderr)")
        #expect(try vaultBytes() == before)
    }

    @Test func aModuleThatIsNotPKCS11IsRefusedAndNothingIsRecorded() throws {
        for module in ["/usr/lib/x86_64-linux-gnu/libsodium.so.23", "/nonexistent/module.so", "relative/module.so"] {
            let signup = try run(["signup", "--name", "hsm", "--pkcs11", module, "--pin-stdin"], stdin: "\(pin)\n")
            #expect(signup.status == 2, "\(module): \(signup.stderr)")
            #expect(signup.stderr.split(separator: "\n").count == 1, "\(module): \(signup.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.vaultPath("hsm")))
    }

    @Test func theAgentHoldsATokenSessionAndSignsWithoutThePIN() throws {
        let address = try signUp()
        let publicKey = try PublicKey(accountID: address)
        let socket = home.runtime + "/keystore/agent.sock"
        let agent = try keystore.start(["agent", "start", "--foreground"])
        defer { kill(agent.pid, SIGTERM); _ = try? agent.wait(timeout: 20) }
        for _ in 0..<500 { guard !(try AgentClient.isListening(at: socket)) else { break }; usleep(10_000) }
        let login = try run(["login", "--agent", "--name", "hsm", "--pin-stdin"], stdin: "\(pin)\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("logged in to token \"keystore-test\""), "\(login.stderr)")
        // No PIN given: the agent signs.
        let sign = try run(["sign", "--name", "hsm", "--hex", "0102"], agent: socket)
        #expect(sign.status == 0, "\(sign.stderr)")
        let signature = try #require(Base64.decode(sign.stdout.trimmingCharacters(in: .newlines)))
        #expect(publicKey.isValidSignature(signature, for: [1, 2]))
        // The agent is logged in to the token already: a wrong PIN must still be the token's to refuse.
        let wrong = try run(["login", "--agent", "--name", "hsm", "--pin-stdin"], stdin: "0000-wrong\n")
        #expect(wrong.status != 0 && wrong.stderr.split(separator: "\n").count == 1 && wrong.stderr.contains("Incorrect PIN"), "\(wrong.stderr)")
        // That wrong PIN logged the agent's process out of the token: its held key says so, not that it was deleted.
        let after = try run(["sign", "--name", "hsm", "--hex", "0102"], agent: socket)
        #expect(after.status != 0 && after.stderr.contains("not logged in"), "\(after.stderr)")
    }

    /// A module that offers PKCS#11 3.0's C_GetInterface (OpenSC's pkcs11-spy, in front of SoftHSM2, which has only
    /// C_GetFunctionList) is reached through it: the spy's log shows the call, and the signatures verify.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: PKCS11CLITests.spy), "OpenSC's pkcs11-spy.so is not installed"))
    func aModuleWithCGetInterfaceIsReachedThroughIt() throws {
        let log = home.path + "/spy.log"
        var spied = keystore
        spied.environment["PKCS11SPY"] = token.modulePath
        spied.environment["PKCS11SPY_OUTPUT"] = log
        let signup = try spied.run(["signup", "--name", "spied", "--pkcs11", Self.spy, "--pin-stdin"], stdin: Array("\(pin)\n".utf8))
        #expect(signup.status == 0, "\(signup.stderr)")
        let publicKey = try PublicKey(accountID: signup.stdout.trimmingCharacters(in: .newlines))
        let sign = try spied.run(["sign", "--name", "spied", "--pin-stdin", "--hex", "0a0b"], stdin: Array("\(pin)\n".utf8))
        #expect(sign.status == 0, "\(sign.stderr)")
        #expect(publicKey.isValidSignature(try #require(Base64.decode(sign.stdout.trimmingCharacters(in: .newlines))), for: [0x0A, 0x0B]))
        let calls = try String(contentsOfFile: log, encoding: .utf8)
        #expect(calls.contains("C_GetInterface") && calls.contains("C_Sign"), "\(calls.prefix(2000))")
    }

    static let spy = "/usr/lib/x86_64-linux-gnu/pkcs11/pkcs11-spy.so"
}
