import Foundation
import Testing
import TestFixtures
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystoreAgent

/// Decisions on requests stellar-sdk made (fixtures/policy-requests.json): caps on a classic asset also cap its
/// Stellar Asset Contract, the last stroop fits, a muxed destination is its account, a fee bump's fee is its payer's.
@Suite struct AgentPolicyFixtureTests {
    struct Request: Decodable { let name, kind, networkPassphrase, xdr: String }
    struct File: Decodable { let identity: String; let requests: [Request] }
    static let file = try! Fixtures.load(File.self, "policy-requests.json")
    static let usd = "USD:GDWUSKGGFDI4FRXK5EBTRECZSVQSSWJHHJOGH6JWG3AUMFFMQ435DIAG"
    static let payee = "GBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7DWXN"

    static func decision(_ name: String, _ rule: String, spent: Int64 = 0) throws -> PolicyDecision {
        let request = try #require(file.requests.first { $0.name == name }, "\(name)")
        let identity = try PublicKey(accountID: file.identity)
        let kind: AgentPolicy.Kind = request.kind == "authEntry" ? .authEntry : .transaction
        let outflow = kind == .authEntry ? Outflow(of: try AuthorizationPreimage(base64: request.xdr), from: identity)
            : Outflow(of: try TransactionEnvelope(base64: request.xdr), from: identity)
        let policy = try AgentPolicy(json: Array("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\", \"authEntry\"]\(rule)}]}".utf8))
        return policy.decision(for: PolicyRequest(identityName: "bot", identityAddress: file.identity, caller: .init(executable: "/bin/bot"),
                                                  network: try StellarNetwork(passphrase: request.networkPassphrase), kind: kind, outflow: outflow),
                               now: 1_690_000_000) { _, _, _ in spent }
    }

    static func refused(_ decision: PolicyDecision) -> String? {
        if case .refuse(let reason) = decision { return reason }
        return nil
    }

    @Test func theLastStroopFitsAndOneMoreDoesNot() throws {
        // 100 XLM cap on payments from 99.9999999 to 100.0000001 XLM, the fee left to maxFee's own limit.
        let cap = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perRequest\": \"100\"}]"
        #expect(Self.refused(try Self.decision("cap-usd-within", cap)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-exact", cap)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-over", cap)) == "rule r: over 100 USD:GDWUS… per request: this one 100.0000001")
        #expect(Self.refused(try Self.decision("cap-usd-two-payments-sum-over", cap)) != nil)
        let window = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perWindow\": \"150\", \"window\": \"24h\"}]"
        #expect(Self.refused(try Self.decision("cap-usd-exact", window, spent: 500_000_000)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-exact", window, spent: 500_000_001)) != nil)
    }

    @Test func aClassicAssetsCapCoversItsContract() throws {
        let cap = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perRequest\": \"0.4\"}]"
        // A SAC transfer of 0.5 USD, as a contract call and as an authorization entry.
        #expect(Self.refused(try Self.decision("sac-transfer-invoke-host-function", cap))?.contains("over 0.4 USD") == true)
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", cap))?.contains("over 0.4 USD") == true)
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", ", \"assets\": [\"native\"]"))?.contains("asset CDEBOE26") == true)
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", ", \"assets\": [\"\(Self.usd)\"]")) == nil)
    }

    @Test func destinationsAreAccountsWithMuxedOnesResolved() throws {
        let payees = ", \"destinations\": [\"\(Self.payee)\"]"
        #expect(Self.refused(try Self.decision("payment-muxed-destination", payees)) == nil)
        #expect(Self.refused(try Self.decision("payment-100-xlm", payees))?.hasPrefix("rule r: destination GCATS5") == true)
        #expect(Self.refused(try Self.decision("sac-transfer-to-muxed-address", payees)) == nil)
    }

    @Test func feesTimeBoundsAndWhatCannotBeCounted() throws {
        #expect(Self.refused(try Self.decision("fee-bump-paid-by-identity", ", \"maxFee\": \"0.0009\"")) == "rule r: fees over 0.0009 XLM: this one 0.001")
        #expect(Self.refused(try Self.decision("fee-bump-paid-by-other", ", \"maxFee\": \"0\"")) == nil)
        #expect(Self.refused(try Self.decision("payment-high-fee", ", \"maxFee\": \"0.01\"")) != nil)
        #expect(Self.refused(try Self.decision("payment-no-time-bounds", ", \"expiresWithin\": \"1h\"")) == "rule r: a transaction must have a latest time (time bounds)")
        #expect(Self.refused(try Self.decision("payment-unbounded-max-time", ", \"expiresWithin\": \"1h\"")) != nil)
        #expect(Self.refused(try Self.decision("payment-far-future-time-bounds", ", \"expiresWithin\": \"1h\""))?.contains("must expire within 1h") == true)
        let capped = ", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1000\"}]"
        for name in ["account-merge", "liquidity-pool-deposit", "other-contract-call-with-identity-auth", "auth-entry-nested-transfer-under-swap"] {
            #expect(Self.refused(try Self.decision(name, capped))?.contains("cannot be counted") == true, "\(name)")
        }
        #expect(Self.refused(try Self.decision("moves-nothing-operations", ", \"operations\": [\"changeTrust\", \"setOptions\"]")) == "rule r: operation manageData is not allowed")
        #expect(Self.refused(try Self.decision("other-contract-call-without-auth",
                                               ", \"contracts\": [{\"contract\": \"CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA\", \"functions\": [\"swap\"]}]"))
                == "rule r: function price of contract CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA is not allowed")
    }
}
