import Foundation
import Glibc
import Testing
import TestFixtures

/// `agent start --socket DIR/agent.sock` with `DIR` open to others (issue 41, 7.3): one message, in the foreground
/// and detached alike, that names the directory as the agent's socket's and the fix (`chmod 700 DIR`); not the
/// session directory, not "remove it", not `XDG_RUNTIME_DIR` (which `--socket` overrides), not "Nothing was sent".
@Suite(.offThePool) struct AgentSocketDirectoryCLITests {
    @Test func aSocketDirectoryOpenToOthersNamesTheFix() throws {
        let home = try KeystoreHome()
        let directory = home.path + "/shared"
        try #require(mkdir(directory, 0o755) == 0 && chmod(directory, 0o755) == 0)
        let keystore = try home.keystoreWithRuntime()
        let socket = directory + "/agent.sock"
        let foreground = try keystore.run(["agent", "start", "--foreground", "--socket", socket], timeout: 20)
        let detached = try keystore.run(["agent", "start", "--socket", socket], timeout: 20)
        let expected = "keystore: The agent's socket directory \(directory) is not private to you (owner uid \(geteuid()), mode 0755); "
            + "make it private (chmod 700 \(directory))."
        for result in [foreground, detached] {
            #expect(result.status == 8 && result.stdout.isEmpty, "\(result.status) \(result.stdout)")
            #expect(result.stderrLines == [Substring(expected)], "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
