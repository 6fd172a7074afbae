import Foundation
import Testing
import TestFixtures

/// fixtures/multisig.json (stellar-sdk 16.1.1, fixtures/make-multisig.py), as the CLI tests read it.
struct Multisig {
    struct Copy: Decodable { let envelope: String }
    struct Case: Decodable { let name, hash, combined: String; let trimmed: String?; let copies: [Copy]; let accountFiles: [String] }
    let keys: [String: String]
    let cases: [Case]
    let tamperedCopy: String
    let accounts: [String: Data]

    static let loaded: Multisig = {
        let data = try! Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("multisig.json"))
        struct Parts: Decodable { let keys: [String: String]; let cases: [Case]; let tamperedCopy: String }
        let parts = try! JSONDecoder().decode(Parts.self, from: data)
        let raw = try! JSONSerialization.jsonObject(with: data) as! [String: Any]
        let accounts = (raw["accounts"] as! [String: Any]).mapValues { try! JSONSerialization.data(withJSONObject: $0) }
        return Multisig(keys: parts.keys, cases: parts.cases, tamperedCopy: parts.tamperedCopy, accounts: accounts)
    }()

    func named(_ name: String) -> Case { cases.first { $0.name == name }! }
}

/// `combine-tx`, and the thresholds of `show-tx`, `sign-tx` and `combine-tx` with `--account-file`, end to end.
/// The golden vault's key is the signer B of the fixtures' accounts.
@Suite(.offThePool) struct MultisigCLITests {
    let home = try! KeystoreHome(inProcess: true)
    let fixtures = Multisig.loaded
    let network = ["--network", "testnet"]

    /// Writes `text` to a file in the home, and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        let path = home.path + "/" + name
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    func accountFile(_ name: String) throws -> [String] {
        let path = home.path + "/\(name).json"
        try fixtures.accounts[name]!.write(to: URL(fileURLWithPath: path))
        return ["--account-file", path]
    }

    func copies(_ name: String) throws -> [String] {
        try fixtures.named(name).copies.enumerated().map { try file("\(name).\($0.offset + 1).xdr", $0.element.envelope + "\n") }
    }

    @Test func combinesFilesAndLinesAsStellarSDKSignsInTurn() throws {
        for name in ["payment", "set_options", "fee_bump", "signed_payload"] {
            let testCase = fixtures.named(name)
            let result = try home.run(["combine-tx"] + network + (try copies(name)))
            #expect(result.status == 0 && result.stdout == testCase.combined + "\n", "\(name): \(result.stderr)")
            // No identity, no --signer: every signature kept, each listed as not checked with its hint.
            #expect(result.stderrLines.count == result.stderrLines.filter { $0.contains("not checked: signature ") && $0.contains("no known signer has its hint") }.count, "\(result.stderr)")
            let lines = testCase.copies.map(\.envelope).joined(separator: "\n") + "\n"
            let piped = try home.run(["combine-tx"] + network, stdin: "\n" + lines)
            #expect(piped.status == 0 && piped.stdout == testCase.combined + "\n" && piped.stderr.contains("of \"line 2\""), "\(piped.stderr)")
        }
    }

    @Test func aCopyOfAnotherTransactionExits2NamingIt() throws {
        let payment = try copies("payment")
        let other = try file("other.xdr", fixtures.named("set_options").combined)
        let result = try home.run(["combine-tx"] + network + [payment[0], other, payment[1]])
        #expect(result.status == 2 && result.stderrLines.count == 1 && result.stdout.isEmpty, "\(result.stderr)")
        #expect(result.stderr.contains("The copy \(other) is another transaction"), "\(result.stderr)")
        let lines = try home.run(["combine-tx"] + network, stdin: fixtures.named("payment").combined + "\n" + fixtures.named("set_options").combined + "\n")
        #expect(lines.status == 2 && lines.stderr.contains("The copy \"line 2\" is another transaction"), "\(lines.stderr)")
        // On another network, every copy's hash differs from the fixture's, but they still agree with each other.
        let public_ = try home.run(["combine-tx", "--network", "public"] + payment)
        #expect(public_.status == 0 && public_.stdout == fixtures.named("payment").combined + "\n")
        // A line that is not an envelope is named too.
        let bad = try home.run(["combine-tx"] + network, stdin: fixtures.named("payment").combined + "\nAAAA\n")
        #expect(bad.status == 2 && bad.stderr.hasPrefix("keystore: line 2: The transaction envelope is not valid XDR"), "\(bad.stderr)")
    }

    /// The golden identity is B: its hint on a signature that is not B's is dropped with a line; the others,
    /// whose signers are not known, are kept as not checked.
    @Test func aKnownSignersInvalidSignatureIsDropped() throws {
        try home.addGolden()
        let payment = try copies("payment")
        let tampered = try file("tampered.xdr", fixtures.tamperedCopy)
        let result = try home.run(["combine-tx"] + network + [payment[0], tampered, payment[1]])
        #expect(result.status == 0, "\(result.stderr)")
        let twoSigners = try home.run(["combine-tx"] + network + [payment[0], payment[1]])
        #expect(result.stdout == twoSigners.stdout && !result.stdout.isEmpty)
        #expect(result.stderr.contains("dropped signature 1 of \(tampered) (hint f707511a): not a valid signature of this transaction by \(fixtures.keys["B"]!)"),
                "\(result.stderr)")
        #expect(result.stderr.contains("not checked: signature 1 of \(payment[0]) (hint c9778737)"))
        #expect(!result.stderr.contains("not checked: signature 1 of \(payment[1])"), "B's valid signature is checked: \(result.stderr)")
        // --signer makes a key known without any identity; --json lists each part.
        let other = try KeystoreHome(inProcess: true)
        let json = try other.run(["combine-tx", "--json", "--signer", fixtures.keys["A"]!] + network + [payment[0], tampered])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: Any], "\(json.stderr)")
        #expect((object["dropped"] as? [Any])?.isEmpty == true && (object["notChecked"] as? [Any])?.count == 1)
        #expect(object["hash"] as? String == fixtures.named("payment").hash)
    }

    @Test func trimRemovesWhatTheNetworkWouldRefuse() throws {
        let testCase = fixtures.named("payment")
        let result = try home.run(["combine-tx", "--trim"] + network + (try accountFile("A")) + (try copies("payment")))
        #expect(result.status == 0 && result.stdout == testCase.trimmed! + "\n", "\(result.stderr)")
        #expect(result.stderr.contains("removed signature 3 (hint a3cf7633)"), "\(result.stderr)")
        #expect(result.stderr.contains("  authority   \(fixtures.keys["A"]!) as source, operation 1 (payment): medium threshold 2\n"))
        // Without the signers of every needed account, nothing is trimmed.
        let blind = try home.run(["combine-tx", "--trim"] + network + (try copies("payment")))
        #expect(blind.status == 2 && blind.stderrLines.count == 1 && blind.stdout.isEmpty, "\(blind.stderr)")
        #expect(blind.stderr.contains("cannot be told without the signers of \(fixtures.keys["A"]!)"))
    }

    @Test func showTxShowsTheThresholdsAndJSON() throws {
        let testCase = fixtures.named("set_options")
        let envelope = try file("tx.xdr", testCase.combined)
        let shown = try home.run(["show-tx"] + network + ["--file", envelope] + (try accountFile("A")) + (try accountFile("E")))
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("  authority   \(fixtures.keys["A"]!) as source, operation 1 (set_options), operation 3 (bump_sequence): high threshold 3\n"))
        #expect(shown.stdout.contains("(hash-x, weight 1); weight 3 of 3: enough"), "\(shown.stdout)")
        #expect(shown.stdout.contains("  authority   \(fixtures.keys["E"]!) as operation 2 (payment): medium threshold 2\n"))
        #expect(!shown.stdout.contains("tx_bad_auth_extra"), "every signature is used: \(shown.stdout)")
        let json = try home.run(["show-tx", "--json"] + network + ["--file", envelope] + (try accountFile("A")) + (try accountFile("E")))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: Any], "\(json.stderr)")
        let thresholds = try #require((object["summary"] as? [String: Any])?["thresholds"] as? [String: Any])
        let accounts = try #require(thresholds["accounts"] as? [[String: Any]])
        #expect(accounts.map { $0["threshold"] as? Int } == [3, 2] && accounts.map { $0["isMet"] as? Bool } == [true, true])
        // Without account files: each needed account is unknown.
        let unknown = try home.run(["show-tx"] + network + ["--file", envelope])
        #expect(unknown.status == 0 && unknown.stdout.contains("  authority   \(fixtures.keys["E"]!) as operation 2 (payment): unknown, no account JSON for it"),
                "\(unknown.stdout)")
        // A signature no needed account takes is a warning line.
        let merge = try home.run(["show-tx"] + network + [fixtures.named("account_merge_muxed").combined] + (try accountFile("A")))
        #expect(merge.stdout.contains("  !! signature 3 (hint ") && merge.stdout.contains("is accepted by no account this transaction needs"), "\(merge.stdout)")
        #expect(merge.stdout.contains("weight 2 of 3: 1 more needed"))
    }

    @Test func signTxSaysWhatItsSignatureBringsAndTrims() throws {
        try home.addGolden()
        let testCase = fixtures.named("payment")
        let first = testCase.copies[0].envelope
        let result = try home.run(["sign-tx", "--name", KeystoreHome.golden.name, "--pin-stdin"] + network + (try accountFile("A")) + [first],
                                  stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("weight 1 of 2: 1 more needed"))
        #expect(result.stderr.contains("with \(KeystoreHome.golden.address)'s signature: weight 2 of 2: enough"), "\(result.stderr)")
        // Signing the envelope A and C signed already (medium 2 met): the golden signature would come after the
        // threshold was met, so the network would refuse it, and --trim would take it out again: it is not made
        // (CoSignerCLITests says what is said).
        let ac = try home.run(["combine-tx"] + network + [try file("a.xdr", first), try file("c.xdr", testCase.copies[2].envelope)])
        let trimmed = try home.run(["sign-tx", "--name", KeystoreHome.golden.name, "--pin-stdin", "--trim"] + network + (try accountFile("A"))
                                   + [ac.stdout.trimmingCharacters(in: .newlines)], stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(trimmed.status == 2 && trimmed.stdout.isEmpty, "\(trimmed.stderr)")
        #expect(trimmed.stderr.contains("would be removed as extra"), "\(trimmed.stderr)")
        // --trim without the account: refused before any PIN is asked.
        let before = home.vaults()
        let refused = try home.run(["sign-tx", "--name", KeystoreHome.golden.name, "--pin-stdin", "--trim"] + network + [first],
                                   stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(refused.status == 2 && refused.stderrLines.count == 1 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(home.vaults() == before)
    }

    @Test func aBadAccountFileExits2InOneLine() throws {
        let g = fixtures.keys["G"]!
        let signer = #"{"key":"\#(g)","weight":1,"type":"ed25519_public_key"}"#
        let thresholds = #""thresholds":{"low_threshold":0,"med_threshold":0,"high_threshold":0}"#
        let bad = [
            (#"{"id":"\#(g)",\#(thresholds),"signers":[],"signers":[]}"#, "the key 'signers' appears twice"),
            (#"{"id":"\#(g)",\#(thresholds),"signers":[{"key":"\#(g)","weight":"1","type":"ed25519_public_key"}]}"#,
             "'signers[0].weight' is a string, not an integer"),
            (#"{"id":\#(1),\#(thresholds),"signers":[]}"#, "'id' is an integer, not a string"),
            (#"{"id":"\#(g)",\#(thresholds),"signers":[\#(Array(repeating: signer, count: 22).joined(separator: ","))]}"#, "it lists 22 signers; an account has at most 21 with its master key"),
        ]
        let envelope = fixtures.named("payment").combined
        for (json, reason) in bad {
            let path = try file("bad.json", json)
            for command in [["show-tx"], ["combine-tx"]] {
                let result = try home.run(command + network + ["--account-file", path] + (command == ["show-tx"] ? [envelope] : []),
                                          stdin: envelope + "\n")
                #expect(result.status == 2 && result.stderrLines.count == 1 && result.stdout.isEmpty, "\(command): \(result.stderr)")
                #expect(result.stderr.contains("The account JSON \(path) cannot be used: \(reason)."), "\(result.stderr)")
            }
        }
        // One account in two files: refused, whichever says what.
        let twice = try home.run(["show-tx"] + network + (try accountFile("A")) + ["--account-file", home.path + "/A.json", envelope])
        #expect(twice.status == 2 && twice.stderr.contains("already read from"), "\(twice.stderr)")
    }
}
