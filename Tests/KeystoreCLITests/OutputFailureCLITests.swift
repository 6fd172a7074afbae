import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// Output that could not be written (a full disk, a file-size limit, a closed pipe with SIGPIPE ignored) is exit
/// 11 with one line, never exit 0: `export --force > backup && remove` must not lose the key.
@Suite(.offThePool) struct OutputFailureCLITests {
    let home = try! KeystoreHome()
    let golden = KeystoreHome.golden
    static let toFull = ["sh", "-c", "exec \"$0\" \"$@\" > /dev/full"]
    /// Standard output is a file no byte may be added to (EFBIG, with SIGXFSZ ignored by keystore itself);
    /// standard error goes through a pipe, which the limit does not touch.
    static func toLimitedFile(_ path: String) -> [String] {
        ["bash", "-c", "set -o pipefail; ( ulimit -f 0; exec \"$0\" \"$@\" 2>&1 > '\(path)' ) | cat >&2"]
    }

    init() throws {
        try home.addGolden()
    }

    func expectLost(_ result: KeystoreProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 11, "exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderrLines.last?.hasPrefix("keystore: Could not write to standard output") == true, "\(result.stderr)",
                sourceLocation: sourceLocation)
        #expect(!result.stderr.contains(golden.seed), sourceLocation: sourceLocation)
    }

    @Test func anExportThatCouldNotBeWrittenIsNotASuccess() throws {
        let vaults = home.vaults()
        let full = try home.run(["export", "--force", "--name", golden.name, "--pin-stdin"], stdin: golden.pin + "\n", prefix: Self.toFull)
        expectLost(full)
        #expect(full.stderr.contains("No space left"))
        #expect(home.vaults() == vaults)
        // (A file-size limit stops the wrong-PIN count from being written, so a PIN is never tried under one.)
        let limited = try home.run(["address", "--name", golden.name], prefix: Self.toLimitedFile(home.path + "/address"))
        expectLost(limited)
        #expect(limited.stderr.contains("File too large"), "\(limited.stderr)")
    }

    @Test func signaturesThatCouldNotBeWrittenAreNotASuccess() throws {
        let payment = try #require(Envelopes.loaded.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        expectLost(try home.run(["sign-tx", "--name", golden.name, "--network", "testnet", "--quiet", "--pin-stdin"],
                                stdin: "\(golden.pin)\n\(payment.envelope)\n", prefix: Self.toFull))
        expectLost(try home.run(["sign-message", "hi", "--name", golden.name, "--pin-stdin"], stdin: golden.pin + "\n", prefix: Self.toFull))
        expectLost(try home.run(["sign", "--hex", "c0ffee", "--name", golden.name, "--pin-stdin", "--json"], stdin: golden.pin + "\n",
                                prefix: Self.toFull))
        expectLost(try home.run(["address", "--name", golden.name], prefix: Self.toFull))
    }

    /// With SIGPIPE ignored (as Python's subprocess and many daemons leave it), a batch whose reader is gone stops
    /// at the first EPIPE instead of signing the rest of its input for nobody.
    @Test func aBatchStopsAtAClosedPipe() throws {
        let requests = String(repeating: #"{"message":"hi"}"# + "\n", count: 50_000)
        let closedPipe = ["bash", "-c", "trap '' PIPE; \"$0\" \"$@\" | exec 0<&-; exit ${PIPESTATUS[0]}"]
        let result = try home.run(["sign-message", "--batch", "--name", golden.name, "--pin-stdin"],
                                  stdin: "\(golden.pin)\n" + requests, prefix: closedPipe)
        expectLost(result)
        #expect(result.stderr.contains("Broken pipe"), "\(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
    }
}
