import Foundation
import Testing
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// What the CLI suites that pin defects share: the golden vaults, process prefixes that limit a run, and the one
/// line every failure must be. (These suites were issue 11's single "hardening" file; they are grouped by
/// subject now, and the simplest of such cases are data, in fixtures/cli/cases.)
protocol CLIExpectations {}

extension CLIExpectations {
    static var golden: (name: String, pin: String, address: String, seed: String) { KeystoreHome.golden }
    static var moderate: (name: String, pin: String) { (name: "golden-moderate", pin: "918273") }
    static var limitMemory: [String] { ["sh", "-c", "ulimit -v 200000; exec \"$0\" \"$@\""] }
    /// No file may grow: the limit is set for keystore alone, whose output goes through a pipe (not limited) to
    /// the test's files.
    static var noFileWrites: [String] { ["bash", "-c", "set -o pipefail; ( ulimit -f 0; exec \"$0\" \"$@\" 2>&1 ) | cat >&2"] }

    /// The golden vault's text edited by `edit`, with its check digest recomputed so that only the edit is wrong.
    static func resealed(_ text: String) throws -> String {
        var file = try JSONDecoder().decode(Vault.File.self, from: Data(text.utf8))
        let old = file.check
        file.check = file.expectedCheck
        return text.replacingOccurrences(of: old, with: file.check)
    }

    func goldenText(_ home: KeystoreHome) throws -> String {
        try String(contentsOfFile: home.vaultPath(Self.golden.name), encoding: .utf8)
    }

    func expectOneLine(_ result: KeystoreProcess.Result, status: Int32, _ message: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status, "exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("keystore: "), "\(result.stderr)",
                sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(result.stderr)", sourceLocation: sourceLocation)
    }


    func startSession(_ process: KeystoreProcess, name: String = Self.golden.name, pin: String = Self.golden.pin) throws -> String {
        let login = try process.run(["login", "--session", "--name", name, "--pin-stdin"], stdin: Array("\(pin)\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
        return String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count)).trimmingCharacters(in: .newlines)
    }

    /// A home with the golden identity, `keystore` with a runtime directory of its own, and a session token.
    func goldenSession() throws -> (home: KeystoreHome, process: KeystoreProcess, token: String) {
        let home = try KeystoreHome()
        try home.addGolden()
        let process = try home.keystoreWithRuntime()
        return (home, process, try startSession(process))
    }

    func signWith(_ process: KeystoreProcess, token: String) throws -> KeystoreProcess.Result {
        var process = process
        process.environment["KEYSTORE_SESSION"] = token
        return try process.run(["sign", "--hex", "00"])
    }
}
