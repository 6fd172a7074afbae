import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// fixtures/tx-envelopes.json (stellar-sdk), as the CLI tests read it.
struct Envelopes: Decodable {
    struct Entry: Decodable { let name, network, passphrase, envelope, signed, hash: String; let alreadySigned: Bool }
    struct Full: Decodable { let envelope: String }
    let envelopes: [Entry]
    let full: Full

    static let loaded = try! JSONDecoder().decode(
        Envelopes.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("tx-envelopes.json")))
}

/// `keystore sign-tx` and `show-tx` end to end. The golden vault holds the key stellar-sdk signed the fixtures
/// with, so every signed envelope must be stellar-sdk's, byte for byte.
@Suite(.offThePool) struct TransactionCLITests {
    let home = try! KeystoreHome(inProcess: true)
    let name = KeystoreHome.golden.name
    static let envelopes = Envelopes.loaded.envelopes

    init() throws {
        try home.addGolden()
    }

    func fixture(_ prefix: String) throws -> Envelopes.Entry {
        try #require(Self.envelopes.first { $0.name.hasPrefix(prefix) }, "no fixture \(prefix)")
    }

    @Test func signsWithThePINShowingTheSummaryFirst() throws {
        let payment = try fixture("payment_native (testnet")
        let result = try home.run(["sign-tx", "--name", name, "--network", "testnet", "--pin-stdin"],
                                  stdin: "\(KeystoreHome.golden.pin)\n\(payment.envelope)\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == payment.signed + "\n")
        #expect(result.stderr.contains("Transaction on testnet") && result.stderr.contains("hash        \(payment.hash)"))
        #expect(result.stderr.contains("1. payment") && result.stderr.contains("amount            100.0000001"))
        // Who signs, named before the key is used.
        #expect(result.stderr.contains("  signer      \(name) (\(KeystoreHome.golden.address))"), "\(result.stderr)")
        // --quiet: nothing on stderr; --file: the same bytes.
        let file = home.path + "/envelope.txt"
        try (payment.envelope + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        let quiet = try home.run(["sign-tx", "--name", name, "--network", "testnet", "--file", file, "--quiet", "--pin-stdin"],
                                 stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout == payment.signed + "\n", "\(quiet.stderr)")
    }

    @Test func signsWithASessionAndTheNetworkFromTheEnvironment() throws {
        var keystore = try home.keystoreWithRuntime()
        let login = try keystore.run(["login", "--session", "--name", name, "--pin-stdin"], stdin: Array("\(KeystoreHome.golden.pin)\n".utf8))
        keystore.environment["KEYSTORE_SESSION"] = String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count))
            .trimmingCharacters(in: .newlines)
        defer { _ = try? keystore.run(["logout"]) }
        for prefix in ["v0 payment_native (public", "fee bump of invoke_with_auth (public", "restore_footprint (public"] {
            let entry = try fixture(prefix)
            var process = keystore
            process.environment["STELLAR_NETWORK"] = "public"
            let result = try process.run(["sign-tx", entry.envelope])
            #expect(result.status == 0 && result.stdout == entry.signed + "\n", "\(prefix): \(result.stderr)")
            // The session's identity is named as the signer.
            #expect(result.stderr.contains("  signer      \(name) (\(KeystoreHome.golden.address))"), "\(result.stderr)")
        }
        // --json: the envelope, hash, network, signer and summary.
        let entry = try fixture("create_account (testnet")
        var process = keystore
        process.environment["STELLAR_NETWORK_PASSPHRASE"] = entry.passphrase
        let json = try process.run(["sign-tx", "--json", "--quiet", entry.envelope])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: Any], "\(json.stderr)")
        #expect(object["envelope"] as? String == entry.signed && object["hash"] as? String == entry.hash)
        #expect(object["network"] as? String == "testnet" && object["signer"] as? String == KeystoreHome.golden.address)
        let summary = try #require(object["summary"] as? [String: Any])
        #expect((summary["operations"] as? [[String: Any]])?.first?["type"] as? String == "create_account")
    }

    @Test func theNetworkIsNeverGuessed() throws {
        let entry = try fixture("payment_native (testnet")
        let missing = try home.run(["sign-tx", "--name", name, "--pin-stdin", entry.envelope], stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(missing.status == 64 && missing.stderrLines.count == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("public (or mainnet, pubnet), testnet or futurenet") && missing.stdout.isEmpty)
        let unknown = try home.run(["show-tx", "--network", "mainnet-ish", entry.envelope])
        #expect(unknown.status == 2 && unknown.stderr.contains("Unknown network"))
        // The same envelope hashes differently on another network: the signature would be worthless there.
        let other = try home.run(["show-tx", "--network", "public", "--json", entry.envelope])
        let object = try JSONSerialization.jsonObject(with: Data(other.stdoutBytes)) as? [String: Any]
        #expect(object?["hash"] as? String != entry.hash && object?["network"] as? String == "public")
    }

    @Test func anEnvelopeAlreadySignedByThisKeyIsPrintedUnchanged() throws {
        let entry = try #require(Self.envelopes.first { $0.alreadySigned })
        let result = try home.run(["sign-tx", "--name", name, "--network", entry.network, "--pin-stdin", entry.envelope],
                                  stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(result.status == 0 && result.stdout == entry.envelope + "\n")
        #expect(result.stderr.contains("already holds a valid signature"))
        let full = try home.run(["sign-tx", "--name", name, "--network", "testnet", "--quiet", "--pin-stdin", Envelopes.loaded.full.envelope],
                                stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(full.status == 2 && full.stderrLines == ["keystore: The envelope already has 20 signatures, the most XDR allows; nothing was signed."])
    }

    @Test func badEnvelopesAreOneLineAndExitTwoBeforeAnyPIN() throws {
        let whole = Array(try #require(Data(base64Encoded: try fixture("invoke_every_scval (testnet").envelope)))
        var cases: [(String, String)] = [("not base64", "%%%%"), ("empty", ""), ("trailing", Data(whole + [0, 0, 0, 0]).base64EncodedString())]
        for length in stride(from: 0, to: whole.count, by: max(whole.count / 12, 1)) {
            cases.append(("truncated at \(length)", Data(whole[..<length]).base64EncodedString()))
        }
        var flipped = whole
        flipped[3] = 9
        cases.append(("unknown envelope type", Data(flipped).base64EncodedString()))
        for (label, text) in cases {
            // No PIN on standard input: had one been asked for, the error would be about the PIN.
            let result = try home.run(["sign-tx", "--name", name, "--network", "testnet", "--file", "/dev/stdin"], stdin: text)
            #expect(result.status == 2, "\(label): \(result.stderr)")
            #expect(result.stderrLines.count == 1 && result.stdout.isEmpty, "\(label): \(result.stderr)")
        }
    }

    @Test func tenThousandNestedVectorsAreExitTwoNotACrash() throws {
        func u32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        var bytes = u32(2) + u32(0) + [UInt8](repeating: 7, count: 32) + u32(100) + u32(0) + u32(1) + u32(0) + u32(0)
        bytes += u32(1) + u32(0) + u32(24) + u32(0) + u32(1) + [UInt8](repeating: 9, count: 32) + u32(1) + Array("f".utf8) + [0, 0, 0] + u32(1)
        for _ in 0..<10_000 { bytes += u32(16) + u32(1) + u32(1) }
        bytes += u32(1) + u32(0) + u32(0) + u32(0)
        for command in [["show-tx"], ["sign-tx", "--name", name, "--quiet"]] {
            let result = try home.run(command + ["--network", "testnet"], stdin: Data(bytes).base64EncodedString())
            #expect(result.status == 2 && result.stderrLines.count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("nested at most 200 deep"))
        }
        var batch = try home.keystoreWithRuntime()
        batch.environment["STELLAR_NETWORK"] = "testnet"
        let answered = try batch.run(["sign-tx", "--batch", "--name", name, "--pin-stdin"],
                                     stdin: Array("\(KeystoreHome.golden.pin)\n{\"id\":1,\"envelope\":\"\(Data(bytes).base64EncodedString())\"}\n".utf8))
        #expect(answered.status == 2 && answered.stdout.contains("nested at most 200 deep"), "\(answered.stderr)")
    }

    @Test func aBatchOfTenThousandSignsEachLikeStellarSDK() throws {
        let testnet = Self.envelopes.filter { $0.network == "testnet" }
        var requests = ""
        for index in 0..<10_000 {
            requests += "{\"id\":\(index),\"envelope\":\"\(testnet[index % testnet.count].envelope)\"}\n"
        }
        let result = try home.run(["sign-tx", "--batch", "--network", "testnet", "--name", name, "--pin-stdin"],
                                  stdin: "\(KeystoreHome.golden.pin)\n" + requests, timeout: nil)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 10_000)
        var mismatches = 0
        for (index, line) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let expected = testnet[index % testnet.count]
            if object?["id"] as? Int != index || object?["envelope"] as? String != expected.signed || object?["hash"] as? String != expected.hash {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
        // A bad request gets its error line, in order, and the exit code says some failed.
        let mixed = try home.run(["sign-tx", "--batch", "--network", "testnet", "--name", name, "--pin-stdin"],
                                 stdin: "\(KeystoreHome.golden.pin)\n{\"id\":\"a\",\"envelope\":\"AAAA\"}\n{\"id\":\"b\",\"message\":\"x\"}\n{\"id\":\"c\",\"envelope\":\"\(testnet[0].envelope)\"}\n")
        let answers = mixed.stdout.split(separator: "\n").map(String.init)
        #expect(mixed.status == 2 && answers.count == 3)
        #expect(answers[0].hasPrefix(#"{"error":"The transaction envelope is not valid XDR"#) && answers[0].hasSuffix(#""id":"a"}"#))
        #expect(answers[1] == #"{"error":"give exactly one envelope","id":"b"}"#)
        #expect(answers[2].contains(testnet[0].signed))
    }

    /// The README's multi-signature recipe: two identities sign in turn, each adding its own signature.
    @Test func twoIdentitiesSignInTurn() throws {
        let second = try home.run(["signup", "--name", "cosigner", "--kdf", "interactive", "--pin-stdin"], stdin: "918273\n")
        let cosigner = second.stdout.trimmingCharacters(in: .newlines)
        let entry = try fixture("six operations (testnet")
        let first = try home.run(["sign-tx", "--name", name, "--network", "testnet", "--quiet", "--pin-stdin", entry.envelope],
                                 stdin: "\(KeystoreHome.golden.pin)\n")
        let both = try home.run(["sign-tx", "--name", "cosigner", "--network", "testnet", "--pin-stdin"],
                                stdin: "918273\n" + first.stdout)
        #expect(both.status == 0 && both.stderr.contains("signatures  1 already"), "\(both.stderr)")
        let envelope = try TransactionEnvelope(base64: both.stdout)
        #expect(envelope.signatures.count == 2)
        let hash = envelope.hash(on: .testnet)
        #expect(envelope.isSigned(by: try PublicKey(accountID: KeystoreHome.golden.address), hash: hash))
        #expect(envelope.isSigned(by: try PublicKey(accountID: cosigner), hash: hash))
        #expect(both.stdout.hasPrefix(String(first.stdout.dropLast().prefix(100))))
    }

    @Test func showTxNeedsNoKey() throws {
        let entry = try fixture("create_claimable_balance (public")
        let empty = try KeystoreHome(inProcess: true)
        let result = try empty.run(["show-tx", "--network", "public"], stdin: entry.envelope)
        #expect(result.status == 0 && result.stdout.contains("create_claimable_balance") && result.stdout.contains(entry.hash))
        #expect(result.stdout.components(separatedBy: "claimant").count == 3, "both claimants")
    }
}
