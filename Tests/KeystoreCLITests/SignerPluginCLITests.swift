import Foundation
import Testing
import TestFixtures

/// `stellar-signer-keystore`: keystore under the name stellar-cli's proposed signer plugins run
/// (`add-signer-plugins` branch, docs/STELLAR-CLI.md). The harness does what that branch's host does: spawn the
/// binary by that name with no arguments, write one JSON request, close standard input, wait, read standard output
/// (standard error is left to the user).
@Suite(.offThePool) struct SignerPluginCLITests {
    struct Preimages: Decodable {
        struct Case: Decodable { let name, network, preimage, hash, signature: String; let nonce: Int64; let expiration: UInt32 }
        let cases: [Case]
    }
    static let preimages = try! JSONDecoder().decode(Preimages.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("auth-preimages.json")))
    static let golden = KeystoreHome.golden
    static let passphrases = ["testnet": "Test SDF Network ; September 2015", "public": "Public Global Stellar Network ; September 2015"]

    /// A directory with `stellar-signer-keystore`, a symlink to the built binary, and the golden identity in a
    /// session: the plugin is spawned with `KEYSTORE_SESSION` set, as a user's shell would have it.
    final class Host {
        let home: KeystoreHome
        let link: String
        var plugin: KeystoreProcess
        init() throws {
            home = try KeystoreHome()
            try home.addGolden()
            link = home.path + "-plugin"
            try FileManager.default.createDirectory(atPath: link, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: link + "/stellar-signer-keystore", withDestinationPath: KeystoreProcess.binary)
            plugin = try home.keystoreWithRuntime()
            let login = try plugin.run(["login", "--session", "--name", SignerPluginCLITests.golden.name, "--pin-stdin"],
                                       stdin: Array("\(SignerPluginCLITests.golden.pin)\n".utf8))
            try #require(login.status == 0, "\(login.stderr)")
            plugin.environment["KEYSTORE_SESSION"] = String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count))
                .trimmingCharacters(in: .newlines)
            plugin.program = link + "/stellar-signer-keystore"
        }
        deinit { try? FileManager.default.removeItem(atPath: link) }

        func send(_ request: [String: Any], arguments: [String] = []) throws -> KeystoreProcess.Result {
            try plugin.run(arguments, stdin: Array(try JSONSerialization.data(withJSONObject: request)))
        }
    }

    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    /// The request stellar-cli's host writes for an entry, from a fixture preimage's parts.
    /// The host builds V1 preimages only, which keystore signs when the user said so (`allow-v1`).
    static func authRequest(_ fixture: Preimages.Case, name: String = golden.name, allowV1: Bool = true) throws -> [String: Any] {
        let preimage = try #require(Data(base64Encoded: fixture.preimage))
        let golden = try #require(Data(base64Encoded: "AAAAAAAAAADXWpgBgrEKt9VL/tPJZAc6DuFy89qmIyWvAhpo9wdRGg=="))  // SCAddress of the golden G…
        return ["mode": "sign_auth", "payload": fixture.hash, "network_passphrase": passphrases[fixture.network]!,
                "address": golden.base64EncodedString(), "nonce": fixture.nonce, "signature_expiration_ledger": fixture.expiration,
                "root_invocation": preimage.dropFirst(48).base64EncodedString(),
                "args": allowV1 ? ["name": name, "allow-v1": "yes"] : ["name": name]]
    }

    @Test func signAuthAnswersTheSignatureValueStellarSDKsSignatureIsIn() throws {
        let host = try Host()
        for fixture in Self.preimages.cases where fixture.name.hasPrefix("v1") {
            let run = try host.send(try Self.authRequest(fixture))
            #expect(run.status == 0, "\(fixture.name): \(run.stderr)")
            // Vec[Map{"public_key": Bytes(32), "signature": Bytes(64)}], written out from Stellar-contract.x.
            let key = Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
            var expected: [UInt8] = [0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 2]
            expected += [0, 0, 0, 15, 0, 0, 0, 10] + Array("public_key".utf8) + [0, 0] + [0, 0, 0, 13, 0, 0, 0, 32] + key
            expected += [0, 0, 0, 15, 0, 0, 0, 9] + Array("signature".utf8) + [0, 0, 0] + [0, 0, 0, 13, 0, 0, 0, 64] + Self.bytes(fixture.signature)
            #expect(run.stdout == Data(expected).base64EncodedString() + "\n", "\(fixture.name)")
            #expect(run.stderr.hasPrefix("Authorization on "), "\(run.stderr)")
        }
    }

    @Test func signTxAnswersStellarSDKsDecoratedSignature() throws {
        let host = try Host()
        let fixture = try #require(Envelopes.loaded.envelopes.first { $0.network == "testnet" && !$0.alreadySigned })
        let signed = try #require(Data(base64Encoded: fixture.signed))
        let run = try host.send(["mode": "sign_tx", "tx_env_xdr": fixture.envelope, "tx_hash": fixture.hash,
                                 "network_passphrase": fixture.passphrase, "args": ["name": Self.golden.name]])
        #expect(run.status == 0, "\(run.stderr)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [String])
        // stellar-sdk appended the same DecoratedSignature: the last 72 bytes of its signed envelope.
        #expect(answer == [signed.suffix(72).base64EncodedString()])
        #expect(run.stderr.hasPrefix("Transaction on testnet"), "\(run.stderr)")
    }

    /// Each refusal is one line on standard error, a non-zero exit, nothing on standard output.
    @Test func refusals() throws {
        let host = try Host()
        let fixture = try #require(Self.preimages.cases.first { $0.name == "v1 sep41 transfer" })
        var wrongHash = try Self.authRequest(fixture)
        wrongHash["payload"] = String(repeating: "0", count: 64)
        var otherAddress = try Self.authRequest(fixture)
        otherAddress["address"] = Data([0, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 4, count: 32)).base64EncodedString()
        var otherNetwork = try Self.authRequest(fixture)
        otherNetwork["network_passphrase"] = Self.passphrases["public"]!
        var secretArgument = try Self.authRequest(fixture)
        secretArgument["args"] = ["secret": "S…"]
        // A seed pasted as the identity's name is refused without being echoed.
        let seedAsName = try Self.authRequest(fixture, name: Self.golden.seed)
        // Issue 30, item 2: without the user's word, a V1 preimage is not signed. (Failed first: it was.)
        let v1Unasked = try Self.authRequest(fixture, allowV1: false)
        var unknownMode = try Self.authRequest(fixture)
        unknownMode["mode"] = "sign_everything"
        var noNonce = try Self.authRequest(fixture)
        noNonce.removeValue(forKey: "nonce")
        let envelope = try #require(Envelopes.loaded.envelopes.first { $0.network == "testnet" && !$0.alreadySigned })
        let cases: [([String: Any], String)] = [
            (wrongHash, "not the hash of what it asks to sign"),
            (otherAddress, "another address's signature"),
            (otherNetwork, "not the hash of what it asks to sign"),
            (secretArgument, "Unknown plugin argument 'secret'"),
            (seedAsName, "looks like a secret"),
            (unknownMode, "Unknown mode"),
            (v1Unasked, "which binds no address"),
            (noNonce, "has no nonce"),
            (["mode": "sign_tx", "tx_env_xdr": envelope.envelope, "tx_hash": String(repeating: "a", count: 64),
              "network_passphrase": envelope.passphrase], "not the hash"),
        ]
        for (request, words) in cases {
            let run = try host.send(request)
            #expect(run.status == 2 && run.stdout.isEmpty, "\(words): \(run.stdout) \(run.stderr)")
            #expect(run.stderrLines.count == 1 && run.stderr.contains(words), "\(run.stderr)")
            #expect(!run.stderr.contains(Self.golden.seed))
        }
        let notJSON = try host.plugin.run([], stdin: Array("sign please".utf8))
        #expect(notJSON.status == 2 && notJSON.stderr.contains("not a JSON object"))
        let withArguments = try host.plugin.run(["sign-tx"], stdin: [])
        #expect(withArguments.status == 2 && withArguments.stderr.contains("takes no arguments"))
        // Without a session and with no terminal to type a PIN on, nothing can be signed: one line, no hang.
        var noSession = host.plugin
        noSession.environment["KEYSTORE_SESSION"] = nil
        let run = try noSession.run([], stdin: Array(try JSONSerialization.data(withJSONObject: try Self.authRequest(fixture))))
        #expect(run.status != 0 && run.stdout.isEmpty && run.stderrLines.last?.hasPrefix("keystore: ") == true, "\(run.stderr)")
    }

    /// With no session and no terminal, the error names what works for a plugin (a session or the agent), not
    /// options it does not take (issue 28, 9.2).
    @Test func withoutASessionOrATerminalTheErrorSaysWhatWorks() throws {
        let host = try Host()
        let fixture = try #require(Self.preimages.cases.first { $0.name == "v1 sep41 transfer" })
        var noSession = host.plugin
        noSession.environment["KEYSTORE_SESSION"] = nil
        noSession.environment["KEYSTORE_AGENT"] = nil
        let run = try noSession.run([], stdin: Array(try JSONSerialization.data(withJSONObject: try Self.authRequest(fixture))))
        #expect(run.status == 9 && run.stdout.isEmpty, "exit \(run.status): \(run.stderr)")
        let error = run.stderrLines.last.map(String.init) ?? ""
        #expect(error.hasPrefix("keystore: ") && error.contains(#"eval "$(keystore login --session)""#) && error.contains("agent"), "\(run.stderr)")
        #expect(!error.contains("--pin-stdin") && !error.contains("--pin-file") && !error.contains("--pin-fd"), "\(run.stderr)")
    }

    /// The request is read strictly, as every JSON from outside is: a key given twice is refused, not read as its
    /// first (Foundation) or its last (Python) value (issue 28, 10.1).
    @Test func aRequestWithARepeatedKeyIsRefused() throws {
        let host = try Host()
        let fixture = try #require(Self.preimages.cases.first { $0.name == "v1 sep41 transfer" })
        let request = try Self.authRequest(fixture)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: request, options: .sortedKeys), as: UTF8.self)
        #expect(try host.plugin.run([], stdin: Array(text.utf8)).status == 0, "the request itself signs")
        for (key, second) in [("payload", #""0000""#), ("mode", #""sign_tx""#), ("args", #"{"name":"other"}"#)] {
            let repeated = String(text.dropLast()) + #","\#(key)":\#(second)}"#
            let run = try host.plugin.run([], stdin: Array(repeated.utf8))
            #expect(run.status == 2 && run.stdout.isEmpty, "\(key): exit \(run.status): \(run.stdout) \(run.stderr)")
            #expect(run.stderrLines.count == 1 && run.stderr.contains("'\(key)' appears twice"), "\(run.stderr)")
        }
        let nested = text.replacingOccurrences(of: #""args":{"#, with: #""args":{"name":"other","#)
        try #require(nested != text)
        let run = try host.plugin.run([], stdin: Array(nested.utf8))
        #expect(run.status == 2 && run.stderr.contains("'name' appears twice"), "\(run.stderr)")
    }
}
