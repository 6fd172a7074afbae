import Foundation
import Testing
import TestFixtures

/// `sign-tx` and `show-tx` for a co-signer: the golden identity is B, a signer of the fixtures' account A (master,
/// B and C weighted 1, medium threshold 2). The payment signed by A and C already meets A's threshold, so B's
/// signature would be extra (tx_bad_auth_extra).
@Suite(.offThePool) struct CoSignerCLITests {
    let home = try! KeystoreHome(inProcess: true)
    let fixtures = Multisig.loaded
    let network = ["--network", "testnet"]

    func accountFile(_ name: String) throws -> [String] {
        let path = home.path + "/\(name).json"
        try fixtures.accounts[name]!.write(to: URL(fileURLWithPath: path))
        return ["--account-file", path]
    }

    /// The payment signed by A and C.
    func signedByAAndC() throws -> String {
        let copies = fixtures.named("payment").copies
        let combined = try home.run(["combine-tx"] + network, stdin: copies[0].envelope + "\n" + copies[2].envelope + "\n")
        #expect(combined.status == 0, "\(combined.stderr)")
        return combined.stdout.trimmingCharacters(in: .newlines)
    }

    /// Without --trim it signs, and says the real reason its signature is extra: a signer of A, whose threshold is
    /// met without it; it is not told it has no part in the transaction.
    @Test func aCoSignerIsToldItsSignatureIsExtraAndWhy() throws {
        try home.addGolden()
        let b = KeystoreHome.golden.address, a = fixtures.keys["A"]!
        let result = try home.run(["sign-tx", "--name", KeystoreHome.golden.name, "--pin-stdin"] + network + (try accountFile("A"))
                                  + [try signedByAAndC()], stdin: "\(KeystoreHome.golden.pin)\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("is neither the source"), "\(result.stderr)")
        #expect(result.stderr.contains("!! \(b)'s signature would not be used: \(b) is a signer of \(a), whose threshold is met without it"),
                "\(result.stderr)")
        #expect(result.stderr.contains("with \(b)'s signature: weight 3 of 2: enough without it, so it would be extra"), "\(result.stderr)")
    }

    /// With --trim, a signature that would be trimmed is never made: one line, exit 2, before the PIN (a wrong PIN
    /// would be exit 3, and counted), for an envelope and for a SEP-7 request alike.
    @Test func withTrimAnExtraSignatureIsRefusedBeforeThePIN() throws {
        try home.addGolden()
        let b = KeystoreHome.golden.address, a = fixtures.keys["A"]!
        let envelope = try signedByAAndC()
        let accounts = try accountFile("A")
        let request = try home.run(["share-tx"] + network + [envelope])
        #expect(request.status == 0, "\(request.stderr)")
        let before = home.snapshot()
        for input in [envelope, request.stdout.trimmingCharacters(in: .newlines)] {
            let refused = try home.run(["sign-tx", "--name", KeystoreHome.golden.name, "--pin-stdin", "--trim"] + network + accounts + [input],
                                       stdin: "000000\n")
            #expect(refused.status == 2 && refused.stdout.isEmpty && refused.stderrLines.count == 1, "\(refused.stderr)")
            #expect(refused.stderr == "keystore: \(b)'s signature would be removed as extra: \(b) is a signer of \(a), "
                    + "whose threshold is met without it; nothing was signed. The transaction needs no signature of this key: pass it on as it is.\n",
                    "\(refused.stderr)")
        }
        #expect(home.snapshot() == before, "no PIN was tried")
    }

    /// show-tx names the signer whose key made an unused signature, and its role: C, a signer of A, not A's own.
    @Test func showTxNamesTheSignerOfAnUnusedSignature() throws {
        let c = fixtures.keys["C"]!, a = fixtures.keys["A"]!
        let shown = try home.run(["show-tx"] + network + (try accountFile("A")) + [fixtures.named("payment").combined])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("is by \(c), a signer of \(a), but not used: the threshold of \(a) was met before it was reached"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("is \(a)'s, but not used"), "\(shown.stdout)")
    }
}
