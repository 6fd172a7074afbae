import Foundation
import Testing

/// `keystore sign-auth --preimage` end to end: the signature is stellar-sdk's (fixtures/auth-preimages.json),
/// every check runs before a PIN is asked, and failures print one line and nothing on standard output.
@Suite struct SignAuthCLITests {
    struct Case: Decodable { let name, network, preimage, hash, signature: String }
    struct File: Decodable { let signer: String; let cases: [Case] }
    static let file = try! JSONDecoder().decode(File.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("auth-preimages.json")))
    static let golden = KeystoreHome.golden

    func home() throws -> KeystoreHome {
        let home = try KeystoreHome()
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
            let run = try home.run(["sign-auth", "--preimage", "--name", Self.golden.name, "--network", fixture.network,
                                    "--pin-stdin", fixture.preimage], stdin: Self.golden.pin + "\n")
            #expect(run.status == 0, "\(fixture.name): \(run.stderr)")
            #expect(run.stdout == base64(fixture.signature) + "\n", "\(fixture.name)")
            #expect(run.stderr.hasPrefix("Authorization on \(fixture.network) ("), "\(run.stderr)")
            #expect(run.stderr.contains("  signer      \(Self.golden.name) (\(Self.golden.address))"))
            #expect(run.stderr.contains("  hash        \(fixture.hash)"))
            #expect(run.stderr.contains("  invokes     "))
        }
    }

    /// With --pin-stdin and the preimage on standard input, the PIN is the first line; --json names the fields
    /// as SEP-43 does; --quiet leaves standard error empty.
    @Test func standardInputJSONAndQuiet() throws {
        let home = try home()
        let fixture = Self.file.cases[1]
        let run = try home.run(["sign-auth", "--preimage", "--name", Self.golden.name, "--network", fixture.network,
                                "--pin-stdin", "--json", "--quiet"], stdin: Self.golden.pin + "\n" + fixture.preimage + "\n")
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
            (["--network", "testnet", testnet.preimage], 64, "not built yet; give --preimage"),
        ]
        for (arguments, status, words) in refusals {
            let run = try home.run(["sign-auth", "--name", Self.golden.name] + arguments)
            #expect(run.status == status, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty && run.stderrLines.count == 1 && run.stderr.contains(words), "\(arguments): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: home.vaultPath(Self.golden.name))) == before)
    }
}
