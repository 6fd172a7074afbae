import Foundation
import Testing
import TestFixtures
import StellarKeystore
import StellarKeys
import StellarTransactions

/// `agent start --policy`: a window survives the agent's kill -9, since it is kept beside the vaults.
@Suite struct AgentPolicyCLITests {
    struct Envelope: Decodable { let name, envelope, passphrase: String }
    struct File: Decodable { let envelopes: [Envelope] }

    static func signTransaction(_ socket: String, _ envelope: Envelope) throws -> String {
        do {
            _ = try AgentClient(socketPath: socket).call(.signTransaction, [("xdr", .string(envelope.envelope)),
                                                                            ("networkPassphrase", .string(envelope.passphrase))])
            return "signed"
        } catch AgentError.refusedByPolicy(let reason) {
            return reason
        }
    }

    @Test func aKilledAgentKeepsWhatItsRulesSpent() throws {
        let envelopes = try Fixtures.load(File.self, "tx-envelopes.json").envelopes
        // Valid for ten minutes from now: the windowed rule sets expiresWithin.
        let payments = try ["payment 0 (testnet)", "payment 12 (testnet)", "payment 24 (testnet)"].map { name in
            let payment = try #require(envelopes.first { $0.name == name })
            return Envelope(name: name, envelope: Fixtures.expiring(payment.envelope, at: UInt64(time(nil)) + 600), passphrase: payment.passphrase)
        }
        // What the first two move, fee included: the cap.
        let moved = try payments.map { try #require(Outflow(of: try TransactionEnvelope(base64: $0.envelope)).amounts["native"]) }
        let cap = moved[0] + moved[1]
        let units = "\(cap / 10_000_000).\(String(repeating: "0", count: 7 - String(cap % 10_000_000).count))\(cap % 10_000_000)"
        let home = try AgentHome()
        let policy = home.home.path + "/policy.json"
        try Data("""
            {"version": 1, "rules": [{"name": "payments", "networks": ["testnet"], "kinds": ["transaction"], "operations": ["payment"],
              "limits": [{"asset": "native", "perWindow": "\(units)", "window": "24h"}], "expiresWithin": "1h"}]}
            """.utf8).write(to: URL(fileURLWithPath: policy))
        chmod(policy, 0o600)
        var agent = try home.startInForeground(["--policy", policy])
        try home.addGolden()
        #expect(try Self.signTransaction(home.socket, payments[0]) == "signed")
        _ = try home.stop(agent, with: SIGKILL)

        agent = try home.startInForeground(["--policy", policy])
        try home.addGolden()
        let refused = try Self.signTransaction(home.socket, payments[2])
        #expect(refused.contains("rule payments: over") && refused.contains("per 24h"), "\(refused)")
        #expect(try Self.signTransaction(home.socket, payments[1]) == "signed")
        let status = try home.keystore().run(["agent", "status"], timeout: 20)
        #expect(status.stdout.contains("rule payments: "), "\(status.stdout)")
        _ = try home.stop(agent)
    }

    /// A rule naming an executable no file is at is refused by `agent start` on its terminal, before it detaches:
    /// one line naming the field, exit 2, no agent left running.
    @Test func aPolicyNamingAMissingExecutableIsRefusedBeforeTheAgentStarts() throws {
        let home = try AgentHome()
        let policy = home.home.path + "/policy.json"
        try Data("""
            {"version": 1, "rules": [{"name": "raw", "kinds": ["payload"], "callers": [{"executable": "\(home.home.path)/gone"}]}]}
            """.utf8).write(to: URL(fileURLWithPath: policy))
        chmod(policy, 0o600)
        let start = try home.keystore().run(["agent", "start", "--policy", policy], timeout: 20)
        #expect(start.status == 2, "\(start.stderr)")
        #expect(start.stderr == "keystore: The policy is refused: rules[0].callers[0].executable: no file is at \(home.home.path)/gone.\n", "\(start.stderr)")
        #expect(home.runtimeContents.isEmpty)
    }
}
