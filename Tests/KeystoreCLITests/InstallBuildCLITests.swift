import Foundation
import Testing
import SoftwareToken
import StellarKeystore
import TestFixtures

extension PackageTests {
    /// The binary people run: each signing command's text and `--json` output, with each key source (the PIN, a
    /// session, the agent, a token), and the commands that need no key, run by the install build (the README's
    /// install block, the one release build the package's tests make) beside the debug build the rest of the
    /// suite runs. Both must exit alike and print the same bytes: a defect that shows only under `-O` (`sign-tx
    /// --json` once read a summary freed with its review, and crashed) fails here.
    ///
    /// Nested in `PackageTests`, so serialized with the tests that make that build; `async`, so that a test waiting
    /// for its processes holds no thread of the pool while its time limit runs.
    @Suite struct InstallBuild {
        static let golden = KeystoreHome.golden
        let home = try! KeystoreHome()

        init() throws {
            try home.addGolden()
            _ = try home.keystoreWithRuntime()
        }

        /// The README's install block run once in the package's copy; the binary it installs.
        static func installed() async throws -> String {
            let binary = try ReleaseCopy.home + "/.local/bin/keystore"
            if FileManager.default.isExecutableFile(atPath: binary) { return binary }
            let run = try await ReleaseCopy.bash(try ReadmeTests.block(containing: "install -D -s"))
            try #require(run.status == 0, "\(run.stdout)\n\(run.stderr)")
            return binary
        }

        /// `text` with the clock's reading in a refusal ("it is now 2026-11-28T07:33:50Z") left out: the two builds
        /// run one after the other and may read it a second apart (a loaded CI machine did).
        static func withoutTheClock(_ text: String) -> String {
            text.replacing(/it is now \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/, with: "it is now (the clock)")
        }

        /// One command line, with what it reads.
        struct Call: CustomStringConvertible {
            let arguments: [String]
            var stdin = ""
            var files: [Int32: String] = [:]
            var description: String { arguments.joined(separator: " ") }
        }

        /// Runs each call with the debug build and with the install build, with the same environment: the install
        /// build's status and output must be the debug build's, a success must print something, and `--json`
        /// must print one JSON value.
        /// `named`: the binary run under another name (the signer plugin's), through a link beside each build.
        func expectBothBuildsAgree(_ calls: [Call], environment: [String: String?] = [:], succeed: Bool? = true,
                                   named: String? = nil) async throws {
            let installed = try await Self.installed()
            for call in calls {
                var debug = home.keystore
                debug.environment["XDG_RUNTIME_DIR"] = home.runtime
                for (key, value) in environment { debug.environment[key] = value }
                var release = debug
                release.program = installed
                if let named {
                    let links = home.path + "/links"
                    if !FileManager.default.fileExists(atPath: links + "/" + named) {
                        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
                        try FileManager.default.createSymbolicLink(atPath: links + "/" + named, withDestinationPath: KeystoreProcess.binary)
                    }
                    debug.program = links + "/" + named
                    release.program = URL(fileURLWithPath: installed).deletingLastPathComponent().appendingPathComponent(named).path
                }
                let files = call.files.mapValues { Array($0.utf8) }
                let expected = try await debug.run(call.arguments, stdin: Array(call.stdin.utf8), files: files)
                let result = try await release.run(call.arguments, stdin: Array(call.stdin.utf8), files: files)
                #expect(result.status == expected.status, "\(call): install build exit \(result.status), debug \(expected.status): \(result.stderr)")
                #expect(Self.withoutTheClock(result.stdout) == Self.withoutTheClock(expected.stdout),
                        "\(call): install build printed \(result.stdout), debug \(expected.stdout)")
                #expect(Self.withoutTheClock(result.stderr) == Self.withoutTheClock(expected.stderr),
                        "\(call): install build said \(result.stderr), debug \(expected.stderr)")
                if succeed == true {
                    #expect(result.status == 0 && !result.stdout.isEmpty, "\(call): \(result.stderr)")
                } else if succeed == false {
                    #expect(result.status != 0 && result.stdout.isEmpty == !call.arguments.contains("--json"), "\(call): \(result.stdout)")
                }
                if succeed == true && call.arguments.contains("--json") && !call.arguments.contains("--batch") {
                    #expect((try? JSONSerialization.jsonObject(with: Data(result.stdoutBytes))) != nil, "\(call): \(result.stdout)")
                }
            }
        }

        /// Every signing command, in text and in JSON (with `extra` added to each); `entries`: the authorization
        /// entries of the fixtures' envelope too, which are the golden key's only.
        static func signingCalls(_ extra: [String], files: [Int32: String] = [:], entries: Bool = true) throws -> [Call] {
            let transactions = Envelopes.loaded.envelopes
            let tx = try #require(transactions.first { $0.name.hasPrefix("payment_native (testnet") })
            let auth = try #require(SignAuthCLITests.file.envelopes.first { $0.name == "v2" })
            let preimage = try #require(SignAuthCLITests.file.cases.first { $0.name.hasPrefix("v2") })
            let request = try #require(try SEP7Fixtures.load().cases.first { $0.name == "plain" })
            let testnet = ["--network", "testnet"]
            var calls: [[String]] = [
                ["sign", "--hex", "00112233"],
                ["sign-message", "héllo"],
                ["sign-tx", "--quiet"] + testnet + [tx.envelope],
                ["sign-tx", "--quiet"] + testnet + [request.uri],
                ["sign-auth", "--quiet", "--network", preimage.network, "--preimage", preimage.preimage],
            ]
            if entries { calls.append(["sign-auth", "--quiet", "--network", auth.network, "--expiration-ledger", "\(auth.expiration)", auth.envelope]) }
            calls += calls.map { $0 + ["--json"] }
            var all = calls.map { Call(arguments: $0 + extra, files: files) }
            all.append(Call(arguments: ["sign", "--batch"] + extra, stdin: "{\"id\":1,\"hex\":\"00\"}\n{\"id\":2,\"message\":\"hi\"}\n", files: files))
            all.append(Call(arguments: ["sign-tx", "--batch"] + testnet + extra, stdin: "{\"id\":1,\"envelope\":\"\(tx.envelope)\"}\n", files: files))
            return all
        }

        var name: [String] { ["--name", Self.golden.name] }

        @Test(.timeLimit(.minutes(20)))
        func withThePIN() async throws {
            let pin = ["--pin-fd", "3"]
            let logins = [["login"], ["login", "--json"]].map { Call(arguments: $0 + name + pin, files: [3: Self.golden.pin + "\n"]) }
            try await expectBothBuildsAgree(try Self.signingCalls(name + pin, files: [3: Self.golden.pin + "\n"]) + logins)
            // The summary on standard error too (no --quiet), and sign-tx with an account file: its thresholds.
            let file = home.path + "/A.json"
            try #require(Multisig.loaded.accounts["A"]).write(to: URL(fileURLWithPath: file))
            let unsigned = Multisig.loaded.named("payment").copies[0].envelope
            try await expectBothBuildsAgree([
                Call(arguments: ["sign-tx", "--network", "testnet", "--account-file", file, unsigned] + name, stdin: Self.golden.pin + "\n"),
                Call(arguments: ["sign-tx", "--network", "testnet", "--account-file", file, "--json", unsigned] + name, stdin: Self.golden.pin + "\n"),
            ].map { Call(arguments: $0.arguments + ["--pin-stdin"], stdin: $0.stdin) })
        }

        @Test(.timeLimit(.minutes(20)))
        func withASession() async throws {
            let login = try await home.keystoreWithRuntime().run(["login", "--session", "--pin-stdin"] + name, stdin: Array("\(Self.golden.pin)\n".utf8))
            try #require(login.status == 0, "\(login.stderr)")
            let token = String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count)).trimmingCharacters(in: .newlines)
            defer { _ = try? home.keystoreWithRuntime().run(["logout"]) }
            try await expectBothBuildsAgree(try Self.signingCalls(name) + [Call(arguments: ["status"]), Call(arguments: ["status", "--json"])],
                                      environment: ["KEYSTORE_SESSION": token])
            // stellar-cli's signer plugin: the same binary under the name stellar-cli runs.
            let tx = try #require(Envelopes.loaded.envelopes.first { $0.network == "testnet" && !$0.alreadySigned })
            let request = try JSONSerialization.data(withJSONObject: ["mode": "sign_tx", "tx_env_xdr": tx.envelope, "tx_hash": tx.hash,
                                                                      "network_passphrase": tx.passphrase, "args": ["name": Self.golden.name]])
            try await expectBothBuildsAgree([Call(arguments: [], stdin: String(decoding: request, as: UTF8.self))],
                                            environment: ["KEYSTORE_SESSION": token], named: "stellar-signer-keystore")
        }

        /// A SEP-7 request whose origin is checked and whose callback gets the signed envelope, printed as JSON: the
        /// POST went out before `sign-tx --json` crashed. Its server is started and waited for synchronously, so it
        /// runs off the pool, with no time limit.
        @Test(.offThePool)
        func aSEP7RequestPostedToItsCallback() async throws {
            let installed = try await Self.installed()
            let server = try SEP7Server()
            let uri = try server.request("valid")
            let arguments = ["sign-tx", "--pin-stdin", "--allow-local-origin", "--network", "testnet", "--submit-callback", "--json", "--quiet", uri] + name
            var release = home.keystore
            release.program = installed
            let expected = try await home.keystore.run(arguments, stdin: Array("\(Self.golden.pin)\n".utf8))
            let result = try await release.run(arguments, stdin: Array("\(Self.golden.pin)\n".utf8))
            let signed = try server.signed("valid")
            #expect(expected.status == 0 && result.status == 0, "install build \(result.status): \(result.stderr); debug: \(expected.stderr)")
            #expect(result.stdout == expected.stdout && result.stdout.contains(signed), "\(result.stdout)")
            let posts = try server.posts()
            #expect(posts.count == 2 && posts.allSatisfy { $0["valid"] as? Bool == true }, "\(posts)")
        }

        /// The commands that write: the same seed imported, opened, its PIN changed, exported, listed and removed,
        /// by each build in a keystore of its own.
        @Test(.timeLimit(.minutes(20)))
        func theWritingCommands() async throws {
            let installed = try await Self.installed()
            let golden = Self.golden
            let steps: [Call] = [
                Call(arguments: ["signup", "--import", "--name", "w", "--kdf", "interactive", "--pin-stdin", "--json"], stdin: "\(golden.seed)\n270419\n"),
                Call(arguments: ["login", "--name", "w", "--pin-stdin", "--json"], stdin: "270419\n"),
                Call(arguments: ["change-pin", "--name", "w", "--pin-stdin", "--new-pin-fd", "4", "--kdf", "interactive", "--json"],
                     stdin: "270419\n", files: [4: "503816\n"]),
                Call(arguments: ["export", "--name", "w", "--force", "--pin-stdin", "--json"], stdin: "503816\n"),
                Call(arguments: ["list", "--json"]),
                Call(arguments: ["remove", "--name", "w", "--pin-stdin", "--json"], stdin: "503816\n"),
                Call(arguments: ["list"]),
            ]
            let (debugHome, releaseHome) = (try KeystoreHome(), try KeystoreHome())
            var release = releaseHome.keystore
            release.program = installed
            // Each keystore's own directory, the one difference allowed.
            func same(_ text: String, in home: KeystoreHome) -> String { text.replacingOccurrences(of: home.path, with: "$HOME") }
            for step in steps {
                let files = step.files.mapValues { Array($0.utf8) }
                let expected = try await debugHome.keystore.run(step.arguments, stdin: Array(step.stdin.utf8), files: files)
                let result = try await release.run(step.arguments, stdin: Array(step.stdin.utf8), files: files)
                #expect(expected.status == 0, "\(step): \(expected.stderr)")
                #expect(result.status == expected.status && same(result.stdout, in: releaseHome) == same(expected.stdout, in: debugHome)
                        && same(result.stderr, in: releaseHome) == same(expected.stderr, in: debugHome),
                        "\(step): install build \(result.status) \(result.stdout) \(result.stderr); debug \(expected.stdout) \(expected.stderr)")
            }
        }

        /// The agent is the install build's too: it is a binary people run.
        @Test(.timeLimit(.minutes(20)))
        func throughTheAgent() async throws {
            var keystore = try home.keystoreWithRuntime()
            keystore.program = try await Self.installed()
            let socket = home.runtime + "/keystore/agent.sock"
            let agent = try keystore.start(["agent", "start", "--foreground"])
            defer {
                kill(agent.pid, SIGTERM)
                _ = try? agent.wait(timeout: 20)
            }
            for _ in 0..<500 where !((try? AgentClient.isListening(at: socket)) ?? false) { try await Task.sleep(for: .milliseconds(10)) }
            let add = try await keystore.run(["login", "--agent", "--pin-stdin"] + name, stdin: Array("\(Self.golden.pin)\n".utf8))
            try #require(add.status == 0, "\(add.stderr)")
            // sign-auth of a V1 preimage is refused by an agent started without --allow-v1; the V2 ones are signed.
            try await expectBothBuildsAgree(try Self.signingCalls(name), environment: ["KEYSTORE_AGENT": socket])
            try await expectBothBuildsAgree([Call(arguments: ["agent", "list"]), Call(arguments: ["agent", "list", "--json"])],
                                      environment: ["KEYSTORE_AGENT": socket])
        }

        @Test(.enabled(if: SoftwareToken.isInstalled, "softhsm2 is not installed"), .timeLimit(.minutes(20)))
        func withATokenKey() async throws {
            let token = try SoftwareToken(label: "keystore-install", pin: "4711-token")
            defer { token.remove() }
            let environment = token.environment.mapValues { Optional($0) }
            var keystore = try home.keystoreWithRuntime()
            for (key, value) in token.environment { keystore.environment[key] = value }
            let signup = try await keystore.run(["signup", "--name", "hsm", "--pkcs11", token.modulePath, "--pin-stdin"], stdin: Array("4711-token\n".utf8))
            try #require(signup.status == 0, "\(signup.stderr)")
            // A token key signs what a seed signs (the fixtures' authorization entries are the golden key's).
            let calls = try Self.signingCalls(["--name", "hsm", "--pin-fd", "3"], files: [3: "4711-token\n"], entries: false)
            try await expectBothBuildsAgree(calls, environment: environment)
        }

        /// The commands that need no key (or only the vault's public part), in text and JSON.
        @Test(.timeLimit(.minutes(20)))
        func withoutAKey() async throws {
            let tx = try #require(Envelopes.loaded.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
            let multisig = Multisig.loaded.named("payment")
            let file = home.path + "/A.json"
            try #require(Multisig.loaded.accounts["A"]).write(to: URL(fileURLWithPath: file))
            let copies = try multisig.copies.enumerated().map { copy in
                let path = home.path + "/payment.\(copy.offset).xdr"
                try (copy.element.envelope + "\n").write(toFile: path, atomically: false, encoding: .utf8)
                return path
            }
            let signed = try #require(try await home.keystore.run(["sign", "--hex", "00", "--pin-stdin"] + name, stdin: Array("\(Self.golden.pin)\n".utf8)).stdout
                .split(separator: "\n").first.map(String.init))
            var calls: [[String]] = [
                ["list"], ["address"] + name,
                ["show-tx", "--network", "testnet", tx.envelope],
                ["show-tx", "--network", "testnet", "--account-file", file, multisig.combined],
                ["combine-tx", "--network", "testnet"] + copies,
                ["share-tx", "--network", "testnet", tx.envelope],
                ["verify", "--raw", "--address", Self.golden.address, "--signature", signed, "--hex", "00"],
                ["strkey", "decode", Self.golden.address],
            ]
            calls += calls.map { $0 + ["--json"] }
            try await expectBothBuildsAgree(calls.map { Call(arguments: $0) })
            // A refusal is one line and the same exit from both.
            let challenge = try #require(try WebAuthChallengeFixtures.load().cases.first { $0.name == "valid" })
            let refused = [Call(arguments: ["sign-tx", "--network", "testnet", "--json", "AAAA"] + name),
                           Call(arguments: ["verify", "--address", Self.golden.address, "--signature", signed, "--hex", "00", "--json"]),
                           // Offline, checked before any PIN: its time bounds lie in 2027.
                           Call(arguments: ["web-auth", "--challenge", "--server-key", challenge.serverKey, "--home-domain", challenge.homeDomain,
                                            "--web-auth-domain", challenge.webAuthDomain, "--network", "testnet", "--json"] + name,
                                stdin: challenge.challenge)]
            try await expectBothBuildsAgree(refused, succeed: false)
            // --trim: whatever the account file makes of the golden key's signature, both builds say the same.
            try await expectBothBuildsAgree([Call(arguments: ["sign-tx", "--network", "testnet", "--account-file", file, "--trim",
                                                              "--pin-stdin", multisig.combined] + name, stdin: Self.golden.pin + "\n")],
                                            succeed: nil)
        }
    }
}
