import Foundation
import Testing
import TestFixtures
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
@testable import StellarKeystoreAgent

/// Policies: the strict reading of the file, the decision on a request, and the windows kept beside the vaults.
@Suite struct AgentPolicyTests {
    static let payee = "GBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7DWXN"
    static let issuer = "GCFIOX77D2ZYIUKXPLGVV7XEAVCWK2G5PSE6BEEGHICVPPD26SPRPPVB"
    static let contract = "CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE"

    static func policy(_ text: String) throws -> AgentPolicy { try AgentPolicy(json: Array(text.utf8)) }

    /// The fault a file is refused for.
    static func refusal(_ text: String) -> PolicyError? {
        do {
            _ = try policy(text)
            return nil
        } catch {
            return error as? PolicyError
        }
    }

    /// Every operation type, for a rule whose test is about something else (a limited rule must list them).
    static let everyOperation = ", \"operations\": [" + Outflow.operationNames.map { "\"\($0)\"" }.joined(separator: ", ") + "]"

    /// A transaction rule named r with `members`, listing every operation unless `members` lists some.
    static func rule(_ members: String) -> String {
        let operations = members.contains("\"operations\"") ? "" : everyOperation
        return "{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\"]\(operations)\(members)}]}"
    }

    // MARK: Reading

    @Test func theDocumentedExamplesParse() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/examples").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("policy-") && $0.hasSuffix(".json") }
        #expect(names.count == 3)
        // AGENT.md shows each example: the same JSON as the file.
        let guide = try String(contentsOf: directory.deletingLastPathComponent().appendingPathComponent("AGENT.md"), encoding: .utf8)
        let shown = guide.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? NSDictionary }
        for name in names {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            let policy = try AgentPolicy(json: Array(data))
            #expect(!policy.rules.isEmpty, "\(name)")
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary)
            #expect(shown.contains(object), "AGENT.md does not show \(name) as it is")
        }
    }

    @Test func amountsAreDecimalStringsOfSevenDecimalsAtMost() {
        #expect(AgentPolicy.stroops("100") == 1_000_000_000)
        #expect(AgentPolicy.stroops("0.5") == 5_000_000)
        #expect(AgentPolicy.stroops("0.0000001") == 1)
        #expect(AgentPolicy.stroops("922337203685.4775807") == Int64.max)
        for bad in ["922337203685.4775808", "99999999999999999999", "-1", "1.", ".5", "0.00000001", "1e3", "", "1,5", " 1", "+1", "１"] {
            #expect(AgentPolicy.stroops(bad) == nil, "\(bad)")
        }
        #expect(AgentPolicy.units(965_000_000) == "96.5")
        #expect(AgentPolicy.units(1_000_000_000) == "100")
        #expect(AgentPolicy.seconds("24h") == 86_400)
        #expect(AgentPolicy.seconds("7d") == 604_800)
        for bad in ["0h", "367d", "1y", "h", "-1h", "1.5h", "99999999999999999999s"] { #expect(AgentPolicy.seconds(bad) == nil, "\(bad)") }
    }

    @Test func hostileFilesAreRefusedWithTheField() {
        // A key given twice: two readers could read two different policies.
        let twice = "{\"version\": 1,\n \"rules\": [{\"name\": \"a\",\n \"kinds\": [\"transaction\"], \"name\": \"b\"}]}"
        guard case .invalid(nil, let line?, let reason)? = Self.refusal(twice) else { Issue.record("a repeated key was taken"); return }
        #expect(line == 3)
        #expect(reason.contains("'name' appears twice"))
        let cases: [(String, String)] = [
            (Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"-5\", \"window\": \"24h\"}]"), "rules[0].limits[0].perWindow"),
            (Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"99999999999999999999\", \"window\": \"24h\"}]"), "rules[0].limits[0].perWindow"),
            (Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": 100, \"window\": \"24h\"}]"), "rules[0].limits[0].perWindow"),
            (Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"1.00000001\", \"window\": \"24h\"}]"), "rules[0].limits[0].perWindow"),
            (Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"100\"}]"), "rules[0].limits[0].window"),
            (Self.rule(", \"limits\": [{\"asset\": \"native\", \"perDay\": \"100\"}]"), "rules[0].limits[0].perDay"),
            (Self.rule(", \"limits\": [{\"asset\": \"DOGE\", \"perRequest\": \"1\"}]"), "rules[0].limits[0].asset"),
            (Self.rule(", \"spendCap\": \"100\""), "rules[0].spendCap"),
            (Self.rule(", \"identities\": []"), "rules[0].identities"),
            (Self.rule(", \"networks\": [\"moonnet\"]"), "rules[0].networks[0]"),
            (Self.rule(", \"operations\": [\"payment\", \"teleport\"]"), "rules[0].operations[1]"),
            (Self.rule(", \"destinations\": [\"GAAAA\"]"), "rules[0].destinations[0]"),
            (Self.rule(", \"destinations\": [42]"), "rules[0].destinations[0]"),
            (Self.rule(", \"destinations\": [{\"destination\": \"GAAAA\"}]"), "rules[0].destinations[0].destination"),
            (Self.rule(", \"destinations\": [{\"memoText\": \"a\"}]"), "rules[0].destinations[0].destination"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memo\": \"a\"}]"), "rules[0].destinations[0].memo"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoId\": 7731}]"), "rules[0].destinations[0].memoId"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoId\": \"-1\"}]"), "rules[0].destinations[0].memoId"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoId\": \"18446744073709551616\"}]"), "rules[0].destinations[0].memoId"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoText\": \"twenty-nine bytes of memo tex\"}]"), "rules[0].destinations[0].memoText"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoText\": \"\"}]"), "rules[0].destinations[0].memoText"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoText\": 5}]"), "rules[0].destinations[0].memoText"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoText\": \"a\", \"memoId\": \"1\"}]"), "rules[0].destinations[0]"),
            (Self.rule(", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoId\": \"1\"}, {\"destination\": \"\(Self.payee)\", \"memoId\": \"1\"}]"),
             "rules[0].destinations[1]"),
            (Self.rule(", \"destinations\": [\"\(Self.payee)\", {\"destination\": \"\(Self.payee)\"}]"), "rules[0].destinations[1]"),
            (Self.rule(", \"callers\": [{\"executable\": \"bot\"}]"), "rules[0].callers[0].executable"),
            (Self.rule(", \"callers\": [{\"executable\": \"/bin/bot\", \"uid\": -1}]"), "rules[0].callers[0].uid"),
            (Self.rule(", \"maxFee\": \"0.1\", \"expiresWithin\": \"400d\""), "rules[0].expiresWithin"),
            ("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\", \"telepathy\"]}]}", "rules[0].kinds[1]"),
            ("{\"version\": 1, \"rules\": [{\"name\": \"r\"}]}", "rules[0].kinds"),
            ("{\"version\": 1, \"rules\": []}", "rules"),
            ("{\"version\": 2, \"rules\": [{\"name\": \"r\", \"kinds\": [\"payload\"]}]}", "version"),
            ("{\"rules\": [{\"name\": \"r\", \"kinds\": [\"payload\"]}]}", "version"),
            ("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"payload\"]}, {\"name\": \"r\", \"kinds\": [\"message\"]}]}", "rules[1].name"),
            ("{\"version\": 1, \"rules\": [{\"name\": \"a b\", \"kinds\": [\"payload\"]}]}", "rules[0].name"),
        ]
        for (text, field) in cases {
            guard case .invalid(let named, _, _)? = Self.refusal(text) else { Issue.record("taken: \(text)"); continue }
            #expect(named == field, "\(text)")
        }
        #expect(Self.refusal(Self.rule(", \"maxFee\": \"0.1\"")) == nil)
        // A destination is a string, or an object with a memo (text of 1 to 28 bytes, or an id of 64 bits).
        #expect(Self.refusal(Self.rule(", \"destinations\": [\"\(Self.payee)\", {\"destination\": \"\(Self.payee)\", \"memoText\": \"twenty-eight bytes of memo..\"}, "
                                       + "{\"destination\": \"\(Self.payee)\", \"memoId\": \"18446744073709551615\"}, {\"destination\": \"\(Self.issuer)\"}]")) == nil)
    }

    /// Without `operations`, a rule that caps transactions would allow every operation that moves nothing:
    /// `setOptions` can add a signer. Listed by name, it is allowed. `contracts` too (a third review): it judges
    /// contract calls only, so without `operations` a classic `accountMerge` passed a rule read as "these calls".
    @Test func aRuleThatCapsTransactionsListsItsOperations() {
        for (members, field) in [(", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1\"}]", "limits"),
                                 (", \"destinations\": [\"\(Self.payee)\"]", "destinations"), (", \"assets\": [\"native\"]", "assets"),
                                 (", \"maxFee\": \"0.1\"", "maxFee"), (", \"contracts\": [{\"contract\": \"\(Self.contract)\"}]", "contracts")] {
            for kinds in ["\"transaction\"", "\"authEntry\", \"transaction\""] {
                let text = "{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\(kinds)]\(members)}]}"
                guard case .invalid("rules[0].operations", nil, let reason)? = Self.refusal(text) else { Issue.record("taken: \(text)"); continue }
                #expect(reason.contains("sets \(field)") && reason.contains("setOptions"), "\(reason)")
                #expect(PolicyError.invalid(field: "rules[0].operations", line: nil, reason).message.hasPrefix("The policy is refused: rules[0].operations: "))
            }
        }
        #expect(Self.refusal("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\"], \"operations\": [\"setOptions\"], \"maxFee\": \"0.1\"}]}") == nil)
        // What has no operations need not list them; a rule that caps nothing neither.
        #expect(Self.refusal("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"authEntry\"], \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1\"}]}]}") == nil)
        #expect(Self.refusal("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\"], \"expiresWithin\": \"5m\"}]}") == nil)
    }

    /// An authorization entry expires at a ledger, which the agent, offline, cannot place in time: entries signed
    /// over weeks could all be submitted in one day, past any per-window cap. So a window is refused in a rule for
    /// authorization entries, and `expiresWithin` (which it cannot check for them) in a rule for nothing else.
    @Test func aWindowCannotHoldAuthorizationEntries() {
        let window = ", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1\"}, {\"asset\": \"native\", \"perWindow\": \"100\", \"window\": \"24h\"}]"
        for kinds in ["\"authEntry\"", "\"transaction\", \"authEntry\""] {
            let text = "{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\(kinds)]\(Self.everyOperation)\(window), \"expiresWithin\": \"5m\"}]}"
            guard case .invalid("rules[0].limits[1].perWindow", nil, let reason)? = Self.refusal(text) else { Issue.record("taken: \(text)"); continue }
            #expect(reason.contains("authorization entries") && reason.contains("ledger"), "\(reason)")
        }
        let expiry = "{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"authEntry\"], \"expiresWithin\": \"5m\"}]}"
        guard case .invalid("rules[0].expiresWithin", nil, let reason)? = Self.refusal(expiry) else { Issue.record("taken: \(expiry)"); return }
        #expect(reason.contains("ledger"), "\(reason)")
        // Per request, an entry is capped; and a window holds a rule's transactions.
        #expect(Self.refusal("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"authEntry\"], \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1\"}]}]}") == nil)
        #expect(Self.refusal(Self.rule(window + ", \"expiresWithin\": \"5m\"")) == nil)
    }

    /// A window counts signing time: a transaction without a latest time could be signed one day and submitted with a
    /// month's others. A rule that sets a window for transactions sets expiresWithin, and its transactions then need
    /// a latest time.
    @Test func aWindowOnTransactionsNeedsALatestTime() throws {
        let window = ", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"100\", \"window\": \"24h\"}]"
        guard case .invalid("rules[0].expiresWithin", nil, let reason)? = Self.refusal(Self.rule(window)) else {
            Issue.record("a window without expiresWithin was taken")
            return
        }
        #expect(reason.contains("sets perWindow") && reason.contains("saved up"), "\(reason)")
        // Per request only, no latest time is needed.
        #expect(Self.refusal(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"100\"}]")) == nil)
        let policy = try Self.policy(Self.rule(window + ", \"expiresWithin\": \"1h\""))
        let unbounded = try Self.outflow(try #require(AgentPolicyFixtureTests.file.requests.first { $0.name == "payment-no-time-bounds" }).xdr)
        #expect(policy.decision(for: Self.request(unbounded), now: 1_700_000_000) { _, _, _ in 0 }
                == .refuse("rule r: a transaction must have a latest time (time bounds)"))
    }

    /// A raw payload can be a transaction's hash: a limit on a payload rule would promise what nothing checks.
    @Test func aPayloadRuleSetsNoLimits() {
        let fields = [(", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1\"}]", "limits"),
                      (", \"destinations\": [\"\(Self.payee)\"]", "destinations"), (", \"assets\": [\"native\"]", "assets"),
                      (", \"operations\": [\"payment\"]", "operations"), (", \"contracts\": [{\"contract\": \"\(Self.contract)\"}]", "contracts"),
                      (", \"maxFee\": \"0.1\"", "maxFee"), (", \"expiresWithin\": \"5m\"", "expiresWithin")]
        for (members, field) in fields {
            for kinds in ["\"payload\"", "\"payload\", \"transaction\""] {
                let text = "{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\(kinds)]\(members)}]}"
                guard case .invalid(let named, nil, let reason)? = Self.refusal(text) else { Issue.record("taken: \(text)"); continue }
                #expect(named == "rules[0].\(field)", "\(text)")
                #expect(reason.contains("a payload can be a transaction's hash"), "\(reason)")
            }
        }
        #expect(Self.refusal("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"payload\"], \"callers\": [{\"executable\": \"/bin/bot\"}]}]}") == nil)
    }

    @Test func aFileAnotherUserCouldWriteIsNotRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/policy.json"
        try Data(Self.rule("").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        #expect(try AgentPolicy(contentsOf: path).rules.count == 1)
        for mode: mode_t in [0o664, 0o646] {
            chmod(path, mode)
            #expect(throws: PolicyError.unsafeFile(path)) { try AgentPolicy(contentsOf: path) }
        }
        chmod(path, 0o600)
        symlink(path, directory + "/link.json")
        #expect(throws: PolicyError.unsafeFile(directory + "/link.json")) { try AgentPolicy(contentsOf: directory + "/link.json") }
        mkfifo(directory + "/fifo.json", 0o600)
        #expect(throws: PolicyError.unsafeFile(directory + "/fifo.json")) { try AgentPolicy(contentsOf: directory + "/fifo.json") }
    }

    // MARK: Deciding

    static let bot = PolicyRequest.Caller(executable: "/usr/local/bin/payout-bot", parents: ["/usr/bin/bash", "/usr/lib/systemd/systemd"], uid: 1000)

    static func outflow(_ text: String) throws -> Outflow {
        Outflow(of: try TransactionEnvelope(base64: text))
    }

    static func request(_ outflow: Outflow?, kind: AgentPolicy.Kind = .transaction, caller: PolicyRequest.Caller = bot,
                        network: StellarNetwork = .testnet) -> PolicyRequest {
        PolicyRequest(identityName: "payouts", identityAddress: "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR", caller: caller,
                      network: network, kind: kind, outflow: outflow)
    }

    /// The envelopes of fixtures/tx-envelopes.json that the fixture signer sends from: a 1 XLM payment, valid until
    /// 1,700,000,000 (a windowed rule sets expiresWithin; every clock of these tests is past it).
    static func signersPayment() throws -> Outflow {
        try outflow(Fixtures.expiring(try signersPaymentEnvelope(), at: 1_700_000_000))
    }

    /// That payment's envelope as the fixture file has it (base64, without time bounds).
    static func signersPaymentEnvelope() throws -> String {
        struct Envelope: Decodable { let name, envelope: String; let alreadySigned: Bool? }
        struct File: Decodable { let envelopes: [Envelope] }
        let file = try Fixtures.load(File.self, "tx-envelopes.json")
        return try #require(file.envelopes.first { $0.name.hasPrefix("payment") && $0.name.hasSuffix("(testnet)") }).envelope
    }

    /// With the files the agent read (`PolicyRequest.Caller.files`), a rule's executable and parents match by the
    /// file their paths name now, not by the path: a symbolic link listed matches the file it points to, and the
    /// listed path with another file behind it does not match, whatever path the caller reports.
    @Test func withTheFilesReadCallersMatchByFileNotPath() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let link = directory.path + "/sh"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/bin/sh")
        let policy = try Self.policy("""
            {"version": 1, "rules": [{"name": "linked", "kinds": ["message"], "callers": [{"executable": "\(link)", "parents": ["\(link)"]}]}]}
            """)
        let none: (String, String, Int) -> Int64 = { _, _, _ in 0 }
        let sh = try #require(ExecutableFile(path: "/bin/sh")), other = try #require(ExecutableFile(path: "/proc/self/exe"))
        func decision(_ executable: ExecutableFile?, parent: ExecutableFile?, path: String = "/usr/bin/sh") -> PolicyDecision {
            let caller = PolicyRequest.Caller(executable: path, parents: [path], files: (executable, [parent]))
            return policy.decision(for: Self.request(nil, kind: .message, caller: caller), now: 0, spent: none)
        }
        #expect(decision(sh, parent: sh) == .allow(PolicySpending(rule: "linked", amounts: [:])))
        // The listed path reported, another file run: refused.
        #expect(decision(other, parent: sh, path: link).reason?.hasPrefix("no rule allows") == true)
        #expect(decision(sh, parent: other, path: link).reason?.hasPrefix("no rule allows") == true)
        // A file that could not be read matches nothing.
        #expect(decision(nil, parent: sh, path: link).reason?.hasPrefix("no rule allows") == true)
        // Without files (`policy check --caller`), by path.
        let byPath = PolicyRequest.Caller(executable: link, parents: [link])
        #expect(policy.decision(for: Self.request(nil, kind: .message, caller: byPath), now: 0, spent: none) == .allow(PolicySpending(rule: "linked", amounts: [:])))
    }

    @Test func theFirstMatchingRuleDecidesAndNoneIsARefusal() throws {
        let policy = try Self.policy("""
            {"version": 1, "rules": [
              {"name": "signing-in", "kinds": ["message"], "callers": [{"executable": "/usr/bin/login-helper"}]},
              {"name": "payouts", "identities": ["payouts"], "kinds": ["transaction", "message"], "networks": ["testnet"],
               "callers": [{"executable": "/usr/local/bin/payout-bot", "parents": ["/usr/bin/bash"]}]}
            ]}
            """)
        let none: (String, String, Int) -> Int64 = { _, _, _ in 0 }
        #expect(policy.decision(for: Self.request(nil, kind: .message), now: 0, spent: none) == .allow(PolicySpending(rule: "payouts", amounts: [:])))
        // Another executable, another parent, another network, another kind: no rule.
        let stranger = PolicyRequest.Caller(executable: "/tmp/payout-bot", parents: ["/usr/bin/bash"])
        let orphan = PolicyRequest.Caller(executable: "/usr/local/bin/payout-bot", parents: ["/usr/bin/zsh"])
        for request in [Self.request(nil, kind: .message, caller: stranger), Self.request(nil, kind: .message, caller: orphan),
                        Self.request(nil, kind: .message, network: .public), Self.request(nil, kind: .payload)] {
            guard case .refuse(let reason) = policy.decision(for: request, now: 0, spent: none) else { Issue.record("allowed"); continue }
            #expect(reason.hasPrefix("no rule allows"))
        }
    }

    @Test func aWindowCapsWhatTheRuleSpendsAndSaysHowMuch() throws {
        let payment = try Self.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let cap = AgentPolicy.units(moved * 3)
        let policy = try Self.policy(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"\(cap)\", \"window\": \"24h\"}], \"expiresWithin\": \"24h\""))
        var spent: Int64 = 0
        func decide() -> PolicyDecision { policy.decision(for: Self.request(payment), now: 1_700_000_000) { _, _, _ in spent } }
        // The last stroop fits; one more does not.
        spent = moved * 2
        #expect(decide() == .allow(PolicySpending(rule: "r", amounts: ["native": moved])))
        spent = moved * 2 + 1
        #expect(decide() == .refuse("rule r: over \(cap) XLM per 24h: \(AgentPolicy.units(moved * 2 + 1)) spent, this one \(AgentPolicy.units(moved))"))
    }

    @Test func listsAndSofterLimits() throws {
        let payment = try Self.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let destination = try #require(payment.destinations.first)
        let none: (String, String, Int) -> Int64 = { _, _, _ in 0 }
        func decision(_ members: String) throws -> PolicyDecision {
            try Self.policy(Self.rule(members)).decision(for: Self.request(payment), now: 0, spent: none)
        }
        #expect(try decision(", \"destinations\": [\"\(Self.payee)\"]") == .refuse("rule r: destination \(destination) is not allowed"))
        #expect(try decision(", \"destinations\": [\"\(destination)\"]") == .allow(PolicySpending(rule: "r", amounts: [:])))
        #expect(try decision(", \"operations\": [\"createAccount\"]") == .refuse("rule r: operation payment is not allowed"))
        #expect(try decision(", \"assets\": [\"USD:\(Self.issuer)\"]") == .refuse("rule r: asset XLM is not allowed"))
        #expect(try decision(", \"maxFee\": \"0.000001\"") == .refuse("rule r: fees over 0.000001 XLM: this one \(AgentPolicy.units(payment.fee))"))
        #expect(try decision(", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"\(AgentPolicy.units(moved - 1))\", \"ask\": true}]")
                == .ask("rule r: over \(AgentPolicy.units(moved - 1)) XLM per request: this one \(AgentPolicy.units(moved))", PolicySpending(rule: "r", amounts: [:])))
        // A hard limit refuses even when a softer one would ask.
        guard case .refuse = try decision(", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"0.0000001\", \"ask\": true}, "
                                          + "{\"asset\": \"native\", \"perRequest\": \"0.0000002\"}]") else { Issue.record("not refused"); return }
        // Time bounds: required, and not too far ahead.
        if let bounds = payment.timeBounds, bounds.max != 0 {
            let policy = try Self.policy(Self.rule(", \"expiresWithin\": \"5m\""))
            #expect(policy.decision(for: Self.request(payment), now: Int64(bounds.max) - 300, spent: none) == .allow(PolicySpending(rule: "r", amounts: [:])))
            guard case .refuse = policy.decision(for: Self.request(payment), now: Int64(bounds.max) - 301, spent: none) else { Issue.record("too far ahead"); return }
        } else {
            #expect(try decision(", \"expiresWithin\": \"5m\"") == .refuse("rule r: a transaction must have a latest time (time bounds)"))
        }
    }

    @Test func whatCannotBeCountedIsRefusedUnderACap() throws {
        struct Envelope: Decodable { let name, envelope: String }
        struct File: Decodable { let envelopes: [Envelope] }
        let merge = try #require(try Fixtures.load(File.self, "tx-envelopes.json").envelopes.first { $0.name == "account_merge (testnet, memo id, v2)" })
        let outflow = try Self.outflow(merge.envelope)
        let none: (String, String, Int) -> Int64 = { _, _, _ in 0 }
        let capped = try Self.policy(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1\"}]"))
        #expect(capped.decision(for: Self.request(outflow), now: 0, spent: none)
                == .refuse("rule r: what this request moves cannot be counted (accountMerge moves the account's whole balance)"))
        // A rule with no cap and no list lets it through: its operations decide.
        #expect(try Self.policy(Self.rule("")).decision(for: Self.request(outflow), now: 0, spent: none) == .allow(PolicySpending(rule: "r", amounts: [:])))
    }

    // MARK: Windows

    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds: Int64 = 1_800_000_000
        var now: Int64 { lock.withLock { seconds } }
        func advance(_ by: Int64) { lock.withLock { seconds += by } }
    }

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("windows-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func windowsHoldAcrossARestartAndRollWithTheClock() throws {
        let payment = try Self.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let policy = try Self.policy(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"\(AgentPolicy.units(moved * 2))\", \"window\": \"1h\"}], \"expiresWithin\": \"24h\""))
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let first = PolicyWindows(directory: directory, policy: policy, now: { clock.now })
        guard case .allow = try first.decide(Self.request(payment)).decision else { Issue.record("refused"); return }
        clock.advance(1800)
        guard case .allow = try first.decide(Self.request(payment)).decision else { Issue.record("refused"); return }
        // Another agent on the same directory (a restart) sees both.
        let second = PolicyWindows(directory: directory, policy: policy, now: { clock.now })
        guard case .refuse = try second.decision(for: Self.request(payment)) else { Issue.record("the window was lost"); return }
        #expect(try second.windows().map(\.spent) == [moved * 2])
        // An hour after the first, it has left the window.
        clock.advance(1800)
        guard case (.allow, let recorded?) = try second.decide(Self.request(payment)) else { Issue.record("the window did not roll"); return }
        // A signature that was not made is taken back.
        try second.takeBack(recorded)
        #expect(try second.windows().map(\.spent) == [moved])
        var info = stat()
        #expect(stat(directory + "/.policy-windows", &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    /// A busy rule's file stays small (each request reads and writes it whole): a thousand signatures a second
    /// apart in an hour's window are kept as one record per 256th of the hour, and what is counted is never less
    /// than the exact sum of the signatures still inside the window, nor more than one slice's worth above it.
    @Test func aBusyWindowIsKeptInSlicesAndNeverCountsLess() throws {
        let payment = try Self.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let policy = try Self.policy(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"\(AgentPolicy.units(moved * 10_000))\", \"window\": \"1h\"}], \"expiresWithin\": \"24h\""))
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let start: Int64 = clock.now
        let windows = PolicyWindows(directory: directory, policy: policy, now: { clock.now })
        for _ in 0..<1000 {
            guard case .allow = try windows.decide(Self.request(payment)).decision else { Issue.record("refused"); return }
            clock.advance(1)
        }
        let records = try windows.load() ?? [:]
        #expect(records.count <= 1000 / (3600 / PolicyWindows.slicesPerWindow) + 1, "\(records.count) records")
        #expect(try windows.windows().map(\.spent) == [moved * 1000])
        // Later, part of them has left the hour: exact, the signatures made after now − 3600.
        let laters: [Int64] = [3600 + 100, 3600 + 500, 3600 + 998]
        for later in laters {
            clock.advance(start + later - clock.now)
            let exact = moved * Int64((0..<1000).filter { start + Int64($0) > clock.now - 3600 }.count)
            let counted = try #require(try windows.windows().first?.spent)
            #expect(counted >= exact && counted <= exact + moved * Int64(3600 / PolicyWindows.slicesPerWindow), "\(counted) against \(exact)")
        }
    }

    @Test func twentyRacersForTheLastOfAWindowGetExactlyWhatFits() throws {
        let payment = try Self.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let policy = try Self.policy(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"\(AgentPolicy.units(moved * 7))\", \"window\": \"24h\"}], \"expiresWithin\": \"24h\""))
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let allowed = NSLock()
        nonisolated(unsafe) var count = 0
        // Each racer its own PolicyWindows, as two agents on one keystore would be: only the lock file orders them.
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            let windows = PolicyWindows(directory: directory, policy: policy)
            if case .allow? = try? windows.decide(Self.request(payment)).decision { allowed.withLock { count += 1 } }
        }
        #expect(count == 7)
        #expect(try PolicyWindows(directory: directory, policy: policy).windows().map(\.spent) == [moved * 7])
    }

    @Test func aDamagedWindowsFileRefusesRatherThanStartsAgain() throws {
        let payment = try Self.signersPayment()
        let policy = try Self.policy(Self.rule(", \"limits\": [{\"asset\": \"native\", \"perWindow\": \"100\", \"window\": \"24h\"}], \"expiresWithin\": \"24h\""))
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("{\"version\":1,\"spent\":[{\"time\":1,\"rule\":\"r\",\"asset\":\"native\",\"amount\":1,\"amount\":2}]}".utf8)
            .write(to: URL(fileURLWithPath: directory + "/.policy-windows"))
        #expect(throws: PolicyWindowsError.self) { try PolicyWindows(directory: directory, policy: policy).decision(for: Self.request(payment)) }
    }
}
