import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// What keystore says, and in what shape: text from outside escaped, JSON that two readers would read differently, empty payloads, JSON on failure, messages that could mislead. Each test was written failing first (issue 11 and later).
@Suite(.offThePool) struct MessagesCLITests: CLIExpectations {
    // MARK: Control characters from untrusted text

    @Test func controlCharactersInAVaultAreEscaped() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let text = try goldenText(home)
        let evil = "\u{1b}]0;owned\u{07}\u{1b}[2J" + String(repeating: "A", count: 200)
        let escaped = evil.unicodeScalars.map { $0.value < 0x20 ? "\\u\(String(format: "%04x", $0.value))" : String($0) }.joined()
        try Self.resealed(text.replacingOccurrences(of: "\"argon2id13\"", with: "\"\(escaped)\""))
            .write(toFile: home.vaultPath(Self.golden.name), atomically: false, encoding: .utf8)
        for arguments in [["list"], ["address", "--name", Self.golden.name], ["login", "--name", Self.golden.name, "--pin-stdin"]] {
            let result = try home.run(arguments, stdin: Self.golden.pin + "\n")
            let output = result.stdoutBytes + result.stderrBytes
            #expect(!output.contains(0x1b) && !output.contains(0x07), "\(arguments): raw control characters reached the terminal")
            #expect((result.stdout + result.stderr).contains("\\x1b]0;owned\\x07"), "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains(String(repeating: "A", count: 65)), "untrusted text is capped")
        }
    }

    @Test func aRefusedNameIsEscaped() throws {
        let home = try KeystoreHome(inProcess: true)
        let result = try home.run(["address", "--name", "\u{1b}[31mred\u{9b}2J"])
        expectOneLine(result, status: 2, "'\\x1b[31mred\\xc2\\x9b2J' is not a valid identity name")
        #expect(!result.stderrBytes.contains(0x1b))
    }

    // MARK: Files that two JSON readers would read differently

    @Test(arguments: [
        ("duplicate publicKey", "\"publicKey\" : ", "\"publicKey\" : \"GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ\",\n  \"publicKey\" : ", "the key 'publicKey' appears twice"),
        ("version 1.0", "\"version\" : 1", "\"version\" : 1.0", "integer"),
        ("opsLimit 2e0", "\"opsLimit\" : 2", "\"opsLimit\" : 2e0", "integer"),
    ])
    func ambiguousJSONIsRefused(_ name: String, _ old: String, _ new: String, _ message: String) throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let text = try goldenText(home)
        try #require(text.contains(old))
        try text.replacingOccurrences(of: old, with: new).write(toFile: home.vaultPath(Self.golden.name), atomically: false, encoding: .utf8)
        let result = try home.run(["login", "--name", Self.golden.name, "--pin-stdin"], stdin: Self.golden.pin + "\n")
        expectOneLine(result, status: 7, message)
    }

    @Test func aSessionFileWithADuplicateKeyIsRefused() throws {
        let (home, process, token) = try goldenSession()
        let directory = home.runtime + "/keystore"
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".session") })
        let path = "\(directory)/\(file)"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // A reader that takes the last of two keys sees identity 'other'; keystore must not take the first.
        try text.replacingOccurrences(of: "}\n", with: ",\"name\":\"other\"}\n").write(toFile: path, atomically: false, encoding: .utf8)
        expectOneLine(try signWith(process, token: token), status: 9, "session")
    }

    // MARK: Empty payloads

    @Test func anEmptyPayloadFromStandardInputOrAFileIsRefused() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let empty = home.path + "/../empty-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        defer { unlink(empty) }
        for arguments in [["sign"], ["sign", "--file", empty], ["sign-message"], ["sign-message", "--file", empty]] {
            let result = try home.run(arguments + ["--name", Self.golden.name, "--pin-fd", "3"], files: [3: Self.golden.pin + "\n"])
            expectOneLine(result, status: 2, "empty")
            #expect(result.stdout.isEmpty)
        }
        for arguments in [["sign", "--hex", ""], ["sign", "--base64", ""], ["sign-message", ""]] {
            let result = try home.run(arguments + ["--name", Self.golden.name, "--pin-fd", "3"], files: [3: Self.golden.pin + "\n"])
            #expect(result.status == 0 && result.stdout.count == 89, "\(arguments): \(result.stderr)")
        }
    }

    // MARK: JSON on failure

    @Test func jsonFailuresAreOneObjectOnStandardOutput() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let cases: [([String], String, Int32, String)] = [
            (["login", "--json", "--name", Self.golden.name, "--pin-stdin"], "503816\n", 3, "incorrect-pin"),
            (["address", "--json", "--name", "nobody"], "", 5, "not-found"),
            (["address", "--json", "--name", "BAD"], "", 2, "invalid-input"),
            (["sign", "--json", "--nonsense"], "", 64, "usage"),
        ]
        for (arguments, stdin, status, kind) in cases {
            let result = try home.run(arguments, stdin: stdin)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            struct Failure: Decodable {
                struct Body: Decodable { let code: Int32; let kind: String; let message: String }
                let error: Body
            }
            let failure = try JSONDecoder().decode(Failure.self, from: Data(result.stdoutBytes))
            #expect(failure.error.code == status && failure.error.kind == kind && !failure.error.message.isEmpty)
            #expect(result.stdout.split(separator: "\n").count == 1)
        }
    }

    @Test func verifyJSONSaysInvalidOnceWithExit1() throws {
        let signature = String(repeating: "A", count: 86) + "=="
        let result = try KeystoreProcess(runsInProcess: true).run(["verify", "--json", "--address", Self.golden.address, "--signature", signature, "hi"])
        #expect(result.status == 1)
        #expect(result.stdout == "{\"address\":\"\(Self.golden.address)\",\"valid\":false}\n", "\(result.stdout)")
    }

    // MARK: Messages that mislead

    @Test func aVersionWrittenAsTextIsNotCalledInvalidJSON() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let text = try goldenText(home)
        try text.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : \"1\"")
            .write(toFile: home.vaultPath(Self.golden.name), atomically: false, encoding: .utf8)
        let result = try home.run(["address", "--name", Self.golden.name])
        expectOneLine(result, status: 7, "version")
        #expect(!result.stderr.contains("not valid JSON"))
    }

    @Test func aHugeVaultIsReportedAtItsSize() throws {
        let home = try KeystoreHome(inProcess: true)
        let path = home.vaultPath("huge")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        truncate(path, 100_000_000)
        let result = try home.run(["address", "--name", "huge"])
        expectOneLine(result, status: 7, "100000000 bytes")
    }

    @Test func deriveDoesNotSuggestAnOptionItLacks() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addFixture("golden-mnemonic")
        try home.addGolden()
        let result = try home.run(["derive", "--account", "2", "--add", Self.golden.name, "--name", "golden-mnemonic", "--pin-stdin"],
                                  stdin: "503816\n")
        expectOneLine(result, status: 6, "already exists")
        #expect(!result.stderr.contains("--replace"))
    }

    @Test func aSessionLoginIsNotAWarning() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let login = try home.keystoreWithRuntime().run(["login", "--session", "--name", Self.golden.name, "--pin-stdin"],
                                                         stdin: Array("\(Self.golden.pin)\n".utf8))
        #expect(login.status == 0 && login.stderr.contains("signed in as") && !login.stderr.contains("warning"), "\(login.stderr)")
    }

    @Test func logoutWithAGarbageTokenStillUnsetsIt() throws {
        let home = try KeystoreHome(inProcess: true)
        var process = try home.keystoreWithRuntime()
        process.environment["KEYSTORE_SESSION"] = "garbage"
        let result = try process.run(["logout"])
        #expect(result.status == 9 && result.stdout == "unset KEYSTORE_SESSION\n", "\(result.stdout)|\(result.stderr)")
    }

    /// `mainnet` and `pubnet` work, so the help and the unknown-network hint name them (issue 28, 9.13).
    @Test func everyNetworkNameThatWorksIsInTheHelp() throws {
        for command in ["sign-tx", "show-tx", "sign-auth", "web-auth"] {
            let help = try KeystoreProcess(runsInProcess: true).run([command, "--help"]).stdout
            #expect(help.contains("mainnet") && help.contains("pubnet"), "\(command): \(help)")
        }
        let unknown = try KeystoreProcess(runsInProcess: true).run(["show-tx", "--network", "mars", "AAAA"])
        #expect(unknown.status == 2 && unknown.stderr.contains("mainnet"), "\(unknown.stderr)")
    }

    /// A long reason from libcurl is cut in its middle: its end, what went wrong, stays (issue 28, 9.10).
    @Test func aServerErrorKeepsItsEnd() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["web-auth", "http://127.0.0.1:\(closedLoopbackPort())", "--name", Self.golden.name])
        expectOneLine(result, status: 13, "Couldn't connect to server.")
    }
}
