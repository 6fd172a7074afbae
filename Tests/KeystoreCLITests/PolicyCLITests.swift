import Foundation
import Testing
import TestFixtures
@testable import KeystoreCLI

/// `keystore policy check`: what an agent with a policy would answer, without a key or an agent.
@Suite struct PolicyCLITests {
    struct Envelope: Decodable { let name, envelope: String }
    struct File: Decodable { let envelopes: [Envelope]; let signer: Signer }
    struct Signer: Decodable { let address: String }

    @Test func eachRequestIsAnsweredWithItsReason() throws {
        let file = try Fixtures.load(File.self, "tx-envelopes.json")
        let small = try #require(file.envelopes.first { $0.name == "payment 0 (testnet)" })  // 1 XLM
        let large = try #require(file.envelopes.first { $0.name == "payment 12 (testnet)" })  // 13 XLM
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/home", withIntermediateDirectories: true)
        let policy = directory.path + "/policy.json"
        func write(_ text: String, mode: mode_t = 0o600) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: policy))
            chmod(policy, mode)
        }
        try write("""
            {"version": 1, "rules": [{"name": "payments", "callers": [{"executable": "/usr/local/bin/payout-bot"}], "networks": ["testnet"],
              "kinds": ["transaction"], "operations": ["payment"], "limits": [{"asset": "native", "perRequest": "5"}]}]}
            """)
        let arguments = ["policy", "check", "--policy", policy, "--identity", file.signer.address, "--network", "testnet",
                         "--home", directory.path + "/home"]
        let checked = try KeystoreInProcess().run(arguments + ["--caller", "/usr/local/bin/payout-bot", small.envelope, large.envelope])
        #expect(checked.status == 16)
        let lines = checked.stdout.split(separator: "\n")
        #expect(lines.first == "signed (rule payments)")
        #expect(lines.last?.hasPrefix("refused: rule payments: over 5 XLM per request: this one 13.") == true)
        #expect(checked.stderr == "keystore: The policy would not sign every request.\n")
        // Another caller: no rule.
        let stranger = try KeystoreInProcess().run(arguments + ["--caller", "/tmp/payout-bot", small.envelope])
        #expect(stranger.status == 16)
        #expect(stranger.stdout.hasPrefix("refused: no rule allows transaction requests for \(file.signer.address) from /tmp/payout-bot on testnet"))
        #expect(try KeystoreInProcess().run(arguments + ["--caller", "/usr/local/bin/payout-bot", small.envelope]).status == 0)
        // A file another user could write is not read; one that is not a policy says where.
        try write("{}", mode: 0o666)
        let loose = try KeystoreInProcess().run(arguments + [small.envelope])
        #expect(loose.status == 8)
        #expect(loose.stderr.contains("is not a regular file of yours that no one else can write"))
        try write(#"{"version": 1, "rules": [{"name": "r", "kinds": ["transaction"], "limits": [{"asset": "native", "perRequest": "-1"}]}]}"#)
        let bad = try KeystoreInProcess().run(arguments + [small.envelope])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("rules[0].limits[0].perRequest"))
    }
}
