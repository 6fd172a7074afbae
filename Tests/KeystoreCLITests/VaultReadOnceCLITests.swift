import Foundation
import Testing
import TestFixtures

/// One vault read per command: a review reads the vault once, and approving it does not open the file again
/// unless it changed meanwhile. Counted with `strace -e trace=openat` (installed by .ci/run).
@Suite(.offThePool) struct VaultReadOnceCLITests {
    let home = try! KeystoreHome(inProcess: true)
    let golden = KeystoreHome.golden

    init() throws { try home.addGolden() }

    /// The `openat` calls of a run that name the golden vault (successful or not).
    func vaultOpens(_ arguments: [String], stdin: String = "", process: KeystoreProcess? = nil) throws -> (opens: Int, terminalOpens: Int, result: KeystoreProcess.Result) {
        let trace = home.path + "/strace.txt"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let prefix = ["/usr/bin/strace", "-f", "-qq", "-e", "trace=openat", "-o", trace]
        let result = try (process ?? home.keystore).run(arguments, stdin: Array(stdin.utf8), prefix: prefix)
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        return (lines.filter { $0.contains("/\(golden.name).vault\"") }.count, lines.filter { $0.contains("\"/dev/tty\"") }.count, result)
    }

    @Test func signTxWithAPINOpensTheVaultOnce() throws {
        let entry = try #require(Envelopes.loaded.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        let (opens, _, result) = try vaultOpens(["sign-tx", "--name", golden.name, "--network", "testnet", "--pin-stdin"],
                                             stdin: "\(golden.pin)\n\(entry.envelope)\n")
        #expect(result.status == 0 && result.stdout == entry.signed + "\n", "\(result.stderr)")
        #expect(opens == 1, "the vault was opened \(opens) times")
    }

    @Test func signTxWithASessionOpensTheVaultOnce() throws {
        var keystore = try home.keystoreWithRuntime()
        let login = try keystore.run(["login", "--session", "--name", golden.name, "--pin-stdin"], stdin: Array("\(golden.pin)\n".utf8))
        keystore.environment["KEYSTORE_SESSION"] = String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count))
            .trimmingCharacters(in: .newlines)
        defer { _ = try? keystore.run(["logout"]) }
        let entry = try #require(Envelopes.loaded.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        let (opens, terminalOpens, result) = try vaultOpens(["sign-tx", "--network", "testnet", entry.envelope], process: keystore)
        #expect(result.status == 0 && result.stdout == entry.signed + "\n", "\(result.stderr)")
        #expect(opens == 1, "the vault was opened \(opens) times")
        #expect(terminalOpens == 0, "a session's signature has nothing to ask, yet /dev/tty was opened")
        let sign = try vaultOpens(["sign", "--hex", "00"], process: keystore)
        #expect(sign.result.status == 0 && sign.opens == 1 && sign.terminalOpens == 0, "\(sign)")
    }
}
