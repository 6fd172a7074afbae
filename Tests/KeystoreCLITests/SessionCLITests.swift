import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// Signed-in sessions driven as a script drives them: `eval "$(keystore login --session)"`, then signing with
/// only `KEYSTORE_SESSION` in the environment.
@Suite(.offThePool) struct SessionCLITests {
    let home: KeystoreHome
    let runtime: String

    init() throws {
        home = try KeystoreHome(inProcess: true)
        runtime = home.runtime
        _ = try home.keystoreWithRuntime()
        try home.addGolden()
    }

    func keystore(session token: String? = nil) -> KeystoreProcess {
        var process = home.keystore
        process.environment["XDG_RUNTIME_DIR"] = runtime
        process.environment["KEYSTORE_SESSION"] = token
        return process
    }

    func login(ttl: String = "15m") throws -> String {
        let result = try keystore().run(["login", "--session", "--ttl", ttl, "--name", KeystoreHome.golden.name, "--pin-stdin"],
                                        stdin: Array("270419\n".utf8))
        try #require(result.status == 0, "\(result.stderr)")
        let prefix = "export KEYSTORE_SESSION="
        try #require(result.stdout.hasPrefix(prefix))
        return String(result.stdout.dropFirst(prefix.count)).trimmingCharacters(in: .newlines)
    }

    func sign(_ token: String?, _ extra: [String] = [], stdin: String = "") throws -> KeystoreProcess.Result {
        try keystore(session: token).run(["sign", "--hex", "00"] + extra, stdin: Array(stdin.utf8))
    }

    var sessionFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: runtime + "/keystore")) ?? []).filter { $0.hasSuffix(".session") }
    }

    @Test func loginSignWithoutPINLogoutThenSigningFails() throws {
        let token = try login()
        let signed = try sign(token)
        #expect(signed.status == 0 && signed.stderr.isEmpty)
        let signature = Array(Data(base64Encoded: signed.stdout.trimmingCharacters(in: .newlines))!)
        #expect(try PublicKey(accountID: KeystoreHome.golden.address).isValidSignature(signature, for: [0]))

        let batch = try keystore(session: token).run(["sign-message", "--batch"], stdin: Array(#"{"id":1,"message":"hi"}"#.utf8))
        #expect(batch.status == 0 && batch.stdout.contains("\"signature\""))
        let status = try keystore(session: token).run(["status"])
        #expect(status.status == 0 && status.stdout.contains(KeystoreHome.golden.address))

        let logout = try keystore(session: token).run(["logout"])
        #expect(logout.status == 0 && logout.stdout == "unset KEYSTORE_SESSION\n")
        #expect(sessionFiles.isEmpty)
        let after = try sign(token)
        #expect(after.status == 9 && after.stderr.contains("The session has ended"))
        #expect(try keystore(session: token).run(["status"]).status == 9)
    }

    @Test func anExpiredSessionFails() throws {
        let token = try login(ttl: "1s")
        usleep(1_500_000)
        let result = try sign(token)
        #expect(result.status == 9 && result.stderr == "keystore: The session has expired; run 'keystore login --session' again.\n")
        #expect(sessionFiles.isEmpty, "the expired session was deleted")
        // Its file gone, it is still expired, not "ended (logged out …)" (issue 28, 9.10); so is one whose file
        // the next login cleaned up.
        let again = try sign(token)
        #expect(again.status == 9 && again.stderr == result.stderr, "\(again.stderr)")
        let other = try login(ttl: "1s")
        usleep(1_500_000)
        _ = try login()
        let cleaned = try sign(other)
        #expect(cleaned.status == 9 && cleaned.stderr == result.stderr, "\(cleaned.stderr)")
        let status = try keystore(session: token).run(["status"])
        #expect(status.status == 9 && status.stderr.contains("expired"), "\(status.stderr)")
    }

    @Test func aTamperedSessionFileFails() throws {
        let token = try login()
        let path = runtime + "/keystore/" + sessionFiles[0]
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let range = try #require(text.range(of: "\"ciphertext\":\""))
        let index = range.upperBound
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let result = try sign(token)
        #expect(result.status == 9 && result.stderr.contains("forged"))
    }

    @Test func theSessionFileNeverHoldsTheSeed() throws {
        _ = try login()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: runtime + "/keystore/" + sessionFiles[0])))
        let seed = try KeyPair(secretSeed: KeystoreHome.golden.seed).seed.withUnsafeBytes { Array($0) }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!bytes.indices.contains { bytes[$0...].starts(with: seed) })
        #expect(!text.contains(KeystoreHome.golden.seed) && !text.contains(Hex.string(seed))
                && !text.contains(Data(seed).base64EncodedString()))
    }

    @Test func badTokensFailWithCodeNineAndNoPrompt() throws {
        let token = try login()
        let wrongKey = String(token.prefix(38)) + String(repeating: "0", count: 64)
        let cases: [(String, String)] = [
            ("not-a-token", "not a session token"),
            (wrongKey, "forged"),
            ("kss1-" + String(repeating: "0", count: 32) + "-" + String(repeating: "0", count: 64), "has ended"),
        ]
        for (bad, message) in cases {
            let result = try sign(bad)
            #expect(result.status == 9 && result.stderr.contains(message) && result.stderrLines.count == 1, "\(bad): \(result.stderr)")
        }
        let otherName = try sign(token, ["--name", "someone"])
        #expect(otherName.status == 9 && otherName.stderr.contains("belongs to identity '\(KeystoreHome.golden.name)'"))
    }

    @Test func aDeadSessionFallsBackToAPINGivenByTheScript() throws {
        let result = try sign("not-a-token", ["--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "270419\n")
        #expect(result.status == 0 && result.stderr.contains("Using the PIN instead"))
    }

    @Test func removingAnIdentityEndsItsSessions() throws {
        let token = try login()
        let removed = try keystore(session: token).run(["remove", "--force", "--name", KeystoreHome.golden.name])
        #expect(removed.status == 0 && sessionFiles.isEmpty)
        #expect(try sign(token).status == 9)
    }

    @Test(arguments: ["0", "25h", "abc", "15x", "-5m"])
    func anInvalidTTLIsAUsageError(_ ttl: String) throws {
        let result = try keystore().run(["login", "--session", "--ttl", ttl, "--pin-stdin"], stdin: Array("270419\n".utf8))
        #expect(result.status == 64)
    }
}
