import Foundation
import Testing
import TestFixtures

/// `keystore sign-auth` end to end, on envelopes and on bare preimages: the output is stellar-sdk's
/// (fixtures/auth-preimages.json), every check runs before a PIN is asked, and failures print one line and
/// nothing on standard output.
@Suite(.offThePool) struct SignAuthCLITests {
    struct Case: Decodable { let name, network, preimage, hash, signature: String }
    struct Envelope: Decodable { let name, network, envelope: String; let expiration: UInt32; let refusal, signed, signedNonStrict: String? }
    struct File: Decodable { let signer: String; let cases: [Case]; let envelopes: [Envelope] }
    static let file = try! JSONDecoder().decode(File.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("auth-preimages.json")))
    static let golden = KeystoreHome.golden

    func home() throws -> KeystoreHome {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        return home
    }

    func base64(_ hex: String) -> String {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return Data(bytes).base64EncodedString()
    }

    @Test func signaturesAreStellarSDKsAndTheTreeIsShownFirst() throws {
        let home = try home()
        #expect(Self.file.signer == Self.golden.address)
        for fixture in Self.file.cases {
            let v1 = fixture.name.hasPrefix("v1") ? ["--allow-v1"] : []
            let run = try home.run(["sign-auth", "--preimage", "--name", Self.golden.name, "--network", fixture.network,
                                    "--pin-stdin", fixture.preimage] + v1, stdin: Self.golden.pin + "\n")
            #expect(run.status == 0, "\(fixture.name): \(run.stderr)")
            #expect(run.stdout == base64(fixture.signature) + "\n", "\(fixture.name)")
            #expect(run.stderr.hasPrefix("Authorization on \(fixture.network) ("), "\(run.stderr)")
            #expect(run.stderr.contains("  signer      \(Self.golden.name) (\(Self.golden.address))"))
            #expect(run.stderr.contains("  hash        \(fixture.hash)"))
            #expect(run.stderr.contains("  invokes     "))
            // A V1 preimage binds no address: its summary says so first.
            #expect(run.stderr.contains("  !! this is a V1 payload") == fixture.name.hasPrefix("v1"), "\(fixture.name)")
        }
    }

    /// Issue 30, item 2: a V1 entry or preimage binds no address, so it is refused without --allow-v1, before any
    /// PIN, with the flag in the one-line error; a V2 one needs nothing. (Failed first: V1 was signed silently.)
    @Test func v1NeedsConsent() throws {
        let home = try home()
        let before = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name)))
        let v1 = try #require(Self.file.cases.first { $0.name.hasPrefix("v1") && $0.network == "testnet" })
        let preimage = try home.run(["sign-auth", "--preimage", "--name", Self.golden.name, "--network", "testnet", v1.preimage])
        #expect(preimage.status == 2 && preimage.stdout.isEmpty && preimage.stderrLines.count == 1, "\(preimage.stderr)")
        #expect(preimage.stderr.contains("V1 payload, which binds no address") && preimage.stderr.contains("--allow-v1"), "\(preimage.stderr)")
        let mixed = try envelope("mixed v1")
        let entries = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "2000000",
                                    "--pin-stdin", mixed.envelope], stdin: Self.golden.pin + "\n")
        #expect(entries.status == 2 && entries.stdout.isEmpty && entries.stderr.contains("Authorization 1 is a V1 payload"), "\(entries.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name))) == before)
        let v2 = try envelope("v2")
        let bound = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "2000000",
                                  "--pin-stdin", "--quiet", v2.envelope], stdin: Self.golden.pin + "\n")
        #expect(bound.status == 0 && bound.stdout == v2.signed! + "\n", "\(bound.stderr)")
    }

    /// With --pin-stdin and the preimage on standard input, the PIN is the first line; --json names the fields
    /// as SEP-43 does; --quiet leaves standard error empty.
    @Test func standardInputJSONAndQuiet() throws {
        let home = try home()
        let fixture = Self.file.cases[1]
        let run = try home.run(["sign-auth", "--preimage", "--name", Self.golden.name, "--network", fixture.network,
                                "--pin-stdin", "--json", "--quiet", "--allow-v1"], stdin: Self.golden.pin + "\n" + fixture.preimage + "\n")
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [String: String]
        #expect(object == ["signedAuthEntry": base64(fixture.signature), "signerAddress": Self.golden.address])
    }

    /// Refusals come before any PIN is asked: here none could be (no terminal, no --pin-stdin), so a PIN error
    /// would show the check ran too late. The vault is untouched.
    @Test func badInputIsRefusedBeforeThePIN() throws {
        let home = try home()
        let before = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name)))
        let testnet = try #require(Self.file.cases.first { $0.network == "testnet" })
        let refusals: [([String], Int32, String)] = [
            (["--preimage", "--network", "public", testnet.preimage], 2, "for another network than public"),
            (["--preimage", "--network", "testnet", "AAAACA=="], 2, "not a Soroban authorization"),
            (["--preimage", "--network", "testnet", "%%%"], 2, "not base64"),
            (["--preimage", testnet.preimage], 64, "No network was given"),
            (["--preimage", "--network", "testnet", "--expiration-ledger", "9", testnet.preimage], 64, "carries its own expiration"),
        ]
        for (arguments, status, words) in refusals {
            let run = try home.run(["sign-auth", "--name", Self.golden.name] + arguments)
            #expect(run.status == status, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty && run.stderrLines.count == 1 && run.stderr.contains(words), "\(arguments): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name))) == before)
    }

    func envelope(_ name: String) throws -> Envelope { try #require(Self.file.envelopes.first { $0.name == name }) }

    /// Each envelope stellar-sdk signed comes out byte for byte as its `authorize_entry` made it; the summary
    /// (the transaction, then what is signed and what is left) comes first.
    @Test func envelopesAreSignedAsStellarSDKSignsThem() throws {
        let home = try home()
        for fixture in Self.file.envelopes where fixture.signed != nil {
            let run = try home.run(["sign-auth", "--name", Self.golden.name, "--network", fixture.network, "--expiration-ledger",
                                    String(fixture.expiration), "--pin-stdin", "--allow-v1"], stdin: Self.golden.pin + "\n" + fixture.envelope + "\n")
            #expect(run.status == 0, "\(fixture.name): \(run.stderr)")
            #expect(run.stdout == fixture.signed! + "\n", "\(fixture.name)")
            #expect(run.stderr.hasPrefix("Transaction on testnet"), "\(run.stderr)")
            #expect(run.stderr.contains("  signer      \(Self.golden.name) (\(Self.golden.address)), for its authorization entries"))
            #expect(run.stderr.contains("  signs       authorization 1, valid through ledger \(fixture.expiration)")
                    || run.stderr.contains("  signs       authorization 2, valid through ledger \(fixture.expiration)"))
            #expect(!run.stderr.contains("neither the source"), "an authorization is not an envelope signature")
        }
        let mixed = try envelope("mixed v1")
        let json = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger",
                                 String(mixed.expiration), "--pin-stdin", "--allow-v1", "--json", "--quiet", mixed.envelope], stdin: Self.golden.pin + "\n")
        #expect(json.status == 0 && json.stderr.isEmpty, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: Any])
        #expect(object["envelope"] as? String == mixed.signed && object["signed"] as? [Int] == [1])
        #expect((object["leftAlone"] as? [[String: Any]])?.compactMap { $0["number"] as? Int } == [2, 3])
    }

    /// A non-strict entry is refused unless allowed; an envelope with envelope signatures or with no entry for the
    /// key is refused; a missing expiration is a usage error. All before a PIN is asked, the vault untouched.
    @Test func envelopeRefusalsComeBeforeThePIN() throws {
        let home = try home()
        let before = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name)))
        let loose = try envelope("non-strict"), none = try envelope("none for the key"), presigned = try envelope("already signed")
        let refusals: [([String], Int32, String)] = [
            (["--expiration-ledger", "2000000", loose.envelope], 2, "Authorization 1 is not strict"),
            (["--expiration-ledger", "2000000", none.envelope], 2, "it asks for G"),
            (["--expiration-ledger", "2000000", presigned.envelope], 2, "already carries 1 signature"),
            ([none.envelope], 64, "--expiration-ledger is required"),
        ]
        for (arguments, status, words) in refusals {
            let run = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet"] + arguments)
            #expect(run.status == status, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty && run.stderrLines.count == 1 && run.stderr.contains(words), "\(arguments): \(run.stderr)")
        }
        // A script is told the flag that allows it (issue 28, 9.10).
        let scripted = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "2000000",
                                     "--pin-stdin", loose.envelope], stdin: Self.golden.pin + "\n")
        #expect(scripted.status == 2 && scripted.stderrLines.count == 1 && scripted.stderr.contains("--allow-non-strict"), "\(scripted.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name))) == before)
        let allowed = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "2000000",
                                    "--allow-non-strict", "--allow-v1", "--pin-stdin", "--quiet", loose.envelope], stdin: Self.golden.pin + "\n")
        #expect(allowed.status == 0 && allowed.stdout == loose.signedNonStrict! + "\n", "\(allowed.stderr)")
    }

    /// The person about to type the PIN is asked about a non-strict entry, after the summary: "yes" signs it
    /// (byte for byte as stellar-sdk allowed), anything else refuses before the PIN is asked.
    @Test func aPersonAtTheTerminalIsAskedAboutANonStrictEntry() throws {
        let home = try home()
        let loose = try envelope("non-strict")
        let arguments = ["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "2000000", loose.envelope]

        let yes = try PseudoTerminal()
        let signing = try home.keystore.start(arguments, terminal: yes.path)
        yes.waitFor("Type yes to sign it anyway: ")
        #expect(yes.screen.contains("NOT STRICT"), "the summary came after the question: \(yes.screen)")
        // One question names both risks of this entry: not strict, and V1.
        #expect(yes.screen.contains("V1 payload"), "\(yes.screen)")
        yes.type("yes")
        yes.waitFor("PIN")
        yes.type(Self.golden.pin)
        let signed = try signing.wait(timeout: 60)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stdout == loose.signedNonStrict! + "\n")

        let no = try PseudoTerminal()
        let refusing = try home.keystore.start(arguments, terminal: no.path)
        no.waitFor("Type yes to sign it anyway: ")
        no.type("y")
        let refused = try refusing.wait(timeout: 60)
        #expect(refused.status == 2 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(!no.screen.contains("PIN"), "a PIN was asked after the refusal: \(no.screen)")
    }

    /// Issue 30, item 3: as an OpenZeppelin smart account's External signer, the envelope comes out as the
    /// reference of fixtures/make-smart-accounts.py made it (fixtures/smart-account-envelopes.json), alone and
    /// beside a cosigner; the summary names the rules; a wrong number of rules is refused before the PIN.
    @Test func asASmartAccountsSigner() throws {
        struct File: Decodable { let smartAccount, verifier, envelope, signed, cosignedEnvelope, cosigned: String; let expiration: UInt32 }
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("smart-account-envelopes.json")))
        let home = try home()
        func sign(_ envelope: String, rules: String = "0,3") throws -> KeystoreProcess.Result {
            try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", String(file.expiration),
                          "--account", file.smartAccount, "--verifier", file.verifier, "--context-rules", rules, "--pin-stdin", envelope],
                         stdin: Self.golden.pin + "\n")
        }
        let alone = try sign(file.envelope)
        #expect(alone.status == 0 && alone.stdout == file.signed + "\n", "\(alone.stderr)")
        #expect(alone.stderr.contains("for rules 0, 3: the signature is valid only for these rules"), "\(alone.stderr)")
        let cosigned = try sign(file.cosignedEnvelope)
        #expect(cosigned.status == 0 && cosigned.stdout == file.cosigned + "\n", "\(cosigned.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name)))
        let wrong = try sign(file.envelope, rules: "0")
        #expect(wrong.status == 2 && wrong.stdout.isEmpty && wrong.stderrLines.count == 1 && wrong.stderr.contains("2 authorization context(s)"),
                "\(wrong.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name))) == before)
        let usage = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "1",
                                  "--verifier", file.verifier, "--context-rules", "0", file.envelope])
        #expect(usage.status == 64 && usage.stderr.contains("--verifier needs --account"), "\(usage.stderr)")
        // A verifier that is not a contract is bad input, exit 2 (the review found exit 8 "system").
        let gVerifier = try home.run(["sign-auth", "--name", Self.golden.name, "--network", "testnet", "--expiration-ledger", "1",
                                      "--account", file.smartAccount, "--verifier", Self.golden.address, "--context-rules", "0,3", file.envelope])
        #expect(gVerifier.status == 2 && gVerifier.stderrLines.count == 1, "\(gVerifier.stderr)")
    }
}
