import Foundation
import Testing
import TestFixtures

/// With `KEYSTORE_AGENT` set, signing as an identity the agent does not hold (issue 41, 7.4): without a PIN to
/// fall back on, one line that names the step (`keystore login --agent --name NAME`), exit 9; with a PIN, the
/// vault signs without a warning on every call, since an identity not handed to the agent is no fault.
@Suite(.offThePool) struct AgentMissingIdentityCLITests {
    @Test func anIdentityTheAgentLacksNamesTheStepOnce() throws {
        let agent = try AgentHome()
        try agent.startInForeground()
        let golden = KeystoreHome.golden
        let sign = ["sign", "--name", golden.name, "--hex", "00"]
        let expected = try agent.keystore().run(sign + ["--pin-stdin"], stdin: Array("270419\n".utf8))
        try #require(expected.status == 0)

        let lacking = try agent.keystore(agent: agent.socket).run(sign)
        #expect(lacking.status == 9 && lacking.stdout.isEmpty)
        #expect(lacking.stderrLines == ["keystore: The agent holds no key for \(golden.name) (\(golden.address)); "
            + "add it with 'keystore login --agent --name \(golden.name)'."], "\(lacking.stderr)")

        let withPIN = try agent.keystore(agent: agent.socket).run(sign + ["--pin-stdin"], stdin: Array("270419\n".utf8))
        #expect(withPIN.status == 0 && withPIN.stdout == expected.stdout)
        #expect(withPIN.stderr == expected.stderr, "\(withPIN.stderr)")
    }
}
