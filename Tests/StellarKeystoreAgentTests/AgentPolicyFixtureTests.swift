import Foundation
import Testing
import TestFixtures
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystoreAgent

/// Decisions on requests stellar-sdk made (fixtures/policy-requests.json): a classic asset and its Stellar Asset
/// Contract are one asset, the last stroop fits, a listed muxed account is that id only and a memo asked for is
/// required, what trades on the order book meets no list of destinations, every operation and transfer counts
/// whoever's it is.
@Suite struct AgentPolicyFixtureTests {
    struct Request: Decodable { let name, kind, networkPassphrase, xdr: String }
    struct File: Decodable { let identity: String; let requests: [Request] }
    static let file = try! Fixtures.load(File.self, "policy-requests.json")
    static let usd = "USD:GDWUSKGGFDI4FRXK5EBTRECZSVQSSWJHHJOGH6JWG3AUMFFMQ435DIAG"
    static let payee = "GBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7DWXN"
    /// The account of seed 0x02…, the fixtures' other payee.
    static let dest = "GCATS5YOVB6ROX2WUNKGNQ2MP3GMXDMKSG2O4N5CLX3A6W4PZGZZI55U"
    /// USD's Stellar Asset Contract on testnet (stellar-sdk's `Asset.contract_id`, in the fixture file).
    static let usdContract = "CDEBOE26IQRBYUKCPKEXNLKFHPHEW4S33GMXZULCJYURO7RPEZIJ7GZK"

    /// The decision of a rule r (for the request's kind, every operation allowed unless `rule`
    /// lists some) on the fixture `name`, `spent` already spent in every window; `asked` gets each asset a window
    /// was asked for. Decided 5 minutes before the fixtures' latest time (1,700,000,000).
    static func decision(_ name: String, _ rule: String, spent: Int64 = 0, asked: ((String) -> Void)? = nil) throws -> PolicyDecision {
        let request = try #require(file.requests.first { $0.name == name }, "\(name)")
        let kind: AgentPolicy.Kind = request.kind == "authEntry" ? .authEntry : .transaction
        let outflow = kind == .authEntry ? Outflow(of: try AuthorizationPreimage(base64: request.xdr))
            : Outflow(of: try TransactionEnvelope(base64: request.xdr))
        let operations = rule.contains("\"operations\"") ? "" : AgentPolicyTests.everyOperation
        let policy = try AgentPolicy(json: Array("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"\(kind.rawValue)\"]\(operations)\(rule)}]}".utf8))
        return policy.decision(for: PolicyRequest(identityName: "bot", identityAddress: file.identity, caller: .init(executable: "/bin/bot"),
                                                  network: try StellarNetwork(passphrase: request.networkPassphrase), kind: kind, outflow: outflow),
                               now: 1_699_999_700) { _, asset, _ in asked?(asset); return spent }
    }

    static func refused(_ decision: PolicyDecision) -> String? {
        if case .refuse(let reason) = decision { return reason }
        return nil
    }

    @Test func theLastStroopFitsAndOneMoreDoesNot() throws {
        // 100 USD cap on payments from 99.9999999 to 100.0000001 USD, the fee left to maxFee's own limit.
        let cap = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perRequest\": \"100\"}], \"maxFee\": \"0.001\""
        #expect(Self.refused(try Self.decision("cap-usd-within", cap)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-exact", cap)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-over", cap)) == "rule r: over 100 USD:GDWUS… per request: this one 100.0000001")
        #expect(Self.refused(try Self.decision("cap-usd-two-payments-sum-over", cap)) != nil)
        let window = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perWindow\": \"150\", \"window\": \"24h\"}], \"maxFee\": \"0.001\", \"expiresWithin\": \"5m\""
        #expect(Self.refused(try Self.decision("cap-usd-exact", window, spent: 500_000_000)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-exact", window, spent: 500_000_001)) != nil)
    }

    /// `assets` lets the fee's native through only when `maxFee` caps it, as `limits` does (a third review: a fee
    /// bump's outer fee, an Int64, was unbounded under a rule that named USD alone).
    @Test func theFeeIsAnUnnamedAssetUnlessMaxFeeCapsIt() throws {
        let assets = ", \"assets\": [\"\(Self.usd)\"]"
        #expect(Self.refused(try Self.decision("cap-usd-within", assets)) == "rule r: asset XLM is not allowed")
        #expect(Self.refused(try Self.decision("cap-usd-within", assets + ", \"maxFee\": \"0.001\"")) == nil)
    }

    @Test func aClassicAssetsCapCoversItsContract() throws {
        let cap = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perRequest\": \"0.4\"}], \"maxFee\": \"1\""
        // A SAC transfer of 0.5 USD, as a contract call and as an authorization entry.
        #expect(Self.refused(try Self.decision("sac-transfer-invoke-host-function", cap))?.contains("over 0.4 USD") == true)
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", cap))?.contains("over 0.4 USD") == true)
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", ", \"assets\": [\"native\"]"))?.contains("asset CDEBOE26") == true)
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", ", \"assets\": [\"\(Self.usd)\"]")) == nil)
        // And the contract's cap covers the classic asset's payments; its assets entry, the classic asset.
        let contractCap = ", \"limits\": [{\"asset\": \"\(Self.usdContract)\", \"perRequest\": \"100\"}], \"maxFee\": \"1\""
        #expect(Self.refused(try Self.decision("cap-usd-exact", contractCap)) == nil)
        #expect(Self.refused(try Self.decision("cap-usd-over", contractCap)) == "rule r: over 100 \(Self.usdContract) per request: this one 100.0000001")
        #expect(Self.refused(try Self.decision("cap-usd-within", ", \"assets\": [\"\(Self.usdContract)\"], \"maxFee\": \"1\"")) == nil)
    }

    /// A limit on one asset leaves no other unlimited: every asset a request moves is named by a limit (the fee
    /// aside when maxFee caps it). The classic asset and its contract draw on the same window, the limit's.
    @Test func everyAssetMovedIsNamedByALimitAndOneWindowHoldsBothNames() throws {
        let native = ", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1000\"}], \"maxFee\": \"1\""
        #expect(Self.refused(try Self.decision("cap-usd-within", native)) == "rule r: moves USD:GDWUS…, which no limit of the rule names")
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", native))
                == "rule r: moves \(Self.usdContract), which no limit of the rule names")
        #expect(Self.refused(try Self.decision("payment-100-xlm", native)) == nil)
        // The fee is native moved too, unless maxFee caps it.
        let usd = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perRequest\": \"1000\"}]"
        #expect(Self.refused(try Self.decision("cap-usd-within", usd)) == "rule r: moves XLM, which no limit of the rule names")
        #expect(Self.refused(try Self.decision("cap-usd-within", usd + ", \"maxFee\": \"0.00001\"")) == nil)
        #expect(Self.refused(try Self.decision("several-assets", usd + ", \"maxFee\": \"1\"")) == "rule r: moves EURTOKEN1234:GDWUS…, which no limit of the rule names")
        // One window, whichever name the request uses: the limit's.
        let window = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perWindow\": \"1000\", \"window\": \"24h\"}], \"maxFee\": \"1\", \"expiresWithin\": \"5m\""
        var asked: [String] = []
        #expect(try Self.decision("sac-transfer-from-someone-else", window) { asked.append($0) }
                == .allow(PolicySpending(rule: "r", amounts: [Self.usd: 999])))
        #expect(try Self.decision("cap-usd-within", window) { asked.append($0) } == .allow(PolicySpending(rule: "r", amounts: [Self.usd: 999_999_999])))
        #expect(asked == [Self.usd, Self.usd])
    }

    /// The key may co-sign another account, or sign for a smart account or an entry's bound address: what they
    /// move is counted and meets the rule's lists, as the key's own account's does.
    @Test func everyOperationAndTransferCountsWhoeverItsSource() throws {
        #expect(Self.refused(try Self.decision("payment-from-another-source", ", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"10\"}]"))
                == "rule r: over 10 XLM per request: this one 1005.00002")
        #expect(Self.refused(try Self.decision("payment-from-another-source", ", \"destinations\": [\"\(Self.payee)\"]"))?
                    .hasPrefix("rule r: destination GCATS5") == true)
        let smallUSD = ", \"limits\": [{\"asset\": \"\(Self.usd)\", \"perRequest\": \"0.0004\"}], \"maxFee\": \"1\""
        #expect(Self.refused(try Self.decision("sac-transfer-from-smart-account", smallUSD)) == "rule r: over 0.0004 USD:GDWUS… per request: this one 0.0004242")
        #expect(Self.refused(try Self.decision("sac-transfer-from-smart-account", ", \"destinations\": [\"\(Self.payee)\"]")) == nil)
        #expect(Self.refused(try Self.decision("auth-entry-transfer-from-bound-address", ", \"destinations\": [\"\(Self.payee)\"]"))?
                    .hasPrefix("rule r: destination GCATS5") == true)
        #expect(Self.refused(try Self.decision("auth-entry-transfer-from-bound-address", ", \"assets\": [\"native\"]"))
                == "rule r: asset \(Self.usdContract) is not allowed")
        #expect(Self.refused(try Self.decision("auth-entry-transfer-from-smart-account", ", \"assets\": [\"native\"]")) == nil)
        // The outer fee of a fee bump counts whoever pays it.
        #expect(Self.refused(try Self.decision("fee-bump-paid-by-other", ", \"maxFee\": \"0.0009\"")) == "rule r: fees over 0.0009 XLM: this one 0.001")
    }

    /// AGENT.md's CI job may call its own contract's functions, and no token's `transfer`.
    @Test func theCIExampleCallsOnlyItsOwnContract() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/examples/policy-ci-job.json").standardized
        let policy = try AgentPolicy(json: Array(try Data(contentsOf: path)))
        // A transfer of lumens through their contract, within the rule's time bounds and fee.
        let request = try #require(Self.file.requests.first { $0.name == "sac-transfer-native-to-contract" })
        let ci = PolicyRequest(identityName: "ci-deployer", identityAddress: Self.file.identity,
                               caller: .init(executable: "/home/ci/work/target/release/deploy-contracts", uid: 1001), network: .testnet,
                               kind: .transaction, outflow: Outflow(of: try TransactionEnvelope(base64: request.xdr)))
        #expect(Self.refused(policy.decision(for: ci, now: 1_699_999_500) { _, _, _ in 0 })
                == "rule ci-deploy: contract CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC is not allowed")
        // Uploading and creating contracts call none: allowed.
        let upload = try #require(Self.file.requests.first { $0.name == "upload-contract-wasm" })
        var deploy = ci
        deploy.outflow = Outflow(of: try TransactionEnvelope(base64: upload.xdr))
        #expect(Self.refused(policy.decision(for: deploy, now: 1_699_999_500) { _, _, _ in 0 }) == nil)
    }

    /// An issuer's clawback moves value: it counts against its asset. What allowTrust, setTrustLineFlags, a clawed
    /// back claimable balance and sponsoring move is in the ledger, not in the operation: a capped rule refuses them,
    /// a rule without caps lets its operations decide.
    @Test func issuerAndSponsorOperationsCountOrAreRefusedUnderACap() throws {
        let own = "OWN:\(Self.file.identity)"
        let ownCap = ", \"limits\": [{\"asset\": \"\(own)\", \"perRequest\": \"1\"}], \"maxFee\": \"1\""
        #expect(Self.refused(try Self.decision("clawback", ownCap)) == "rule r: over 1 OWN:\(Self.file.identity.prefix(5))… per request: this one 1.5")
        let nativeCap = ", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1000\"}]"
        #expect(Self.refused(try Self.decision("clawback", nativeCap)) == "rule r: moves OWN:\(Self.file.identity.prefix(5))…, which no limit of the rule names")
        for name in ["clawback-claimable-balance", "allow-trust", "set-trust-line-flags", "sponsoring-future-reserves", "revoke-sponsorship"] {
            #expect(Self.refused(try Self.decision(name, nativeCap))?.hasPrefix("rule r: what this request moves cannot be counted (") == true, "\(name)")
            #expect(Self.refused(try Self.decision(name, "")) == nil, "\(name)")
        }
        // Ending a sponsorship moves nothing by itself (its beginning is what cannot be counted).
        #expect(Self.refused(try Self.decision("moves-nothing-operations", nativeCap)) == nil)
    }

    /// What an offer or a converting path payment sells goes to whoever takes the other side: a rule that lists
    /// destinations cannot check it, and refuses it. A path payment of one asset with an empty path is a payment.
    @Test func destinationsRefuseWhatTradesOnTheOrderBook() throws {
        let payees = ", \"destinations\": [\"\(Self.payee)\", \"\(Self.dest)\"]"
        for (name, operation) in [("manage-sell-offer", "manageSellOffer"), ("create-passive-sell-offer", "createPassiveSellOffer"),
                                  ("manage-buy-offer-rounds-up", "manageBuyOffer"), ("path-payment-strict-receive", "pathPaymentStrictReceive"),
                                  ("path-payment-strict-send", "pathPaymentStrictSend"),
                                  ("path-payment-same-asset-through-another", "pathPaymentStrictSend")] {
            #expect(Self.refused(try Self.decision(name, payees))
                    == "rule r: \(operation) trades on the order book, paying whoever takes the other side, which destinations cannot name", "\(name)")
            // Without destinations, what it sells is counted as before.
            #expect(Self.refused(try Self.decision(name, "")) == nil, "\(name)")
        }
        #expect(Self.refused(try Self.decision("path-payment-same-asset-empty-path", payees)) == nil)
        #expect(Self.refused(try Self.decision("path-payment-same-asset-empty-path", ", \"destinations\": [\"\(Self.dest)\"]"))?
                    .hasPrefix("rule r: destination \(Self.payee)") == true)
        // Deleting an offer pays no one.
        #expect(Self.refused(try Self.decision("manage-sell-offer-delete", payees)) == nil)
    }

    /// A listed `M…` is that muxed account only; a listed `G…` is the account and, when it asks for no memo, its
    /// muxed forms (the money lands in it). A transfer to a muxed address is judged the same way.
    @Test func aListedMuxedAccountIsThatIdOnly() throws {
        let muxedPayee = "MBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7CAAAAEPXD6YEZM4PC"
        let muxed = ", \"destinations\": [\"\(muxedPayee)\"]"
        #expect(Self.refused(try Self.decision("payment-muxed-destination", muxed)) == nil)
        #expect(Self.refused(try Self.decision("sac-transfer-to-muxed-address", muxed)) == nil)
        #expect(Self.refused(try Self.decision("payment-muxed-destination-other-id", muxed))?.hasPrefix("rule r: destination MBXHUHG5") == true)
        #expect(Self.refused(try Self.decision("payment-memo-missing", muxed)) == "rule r: destination \(Self.payee) is not allowed")
        let account = ", \"destinations\": [\"\(Self.payee)\"]"
        for name in ["payment-muxed-destination", "payment-muxed-destination-other-id", "sac-transfer-to-muxed-address", "payment-memo-missing"] {
            #expect(Self.refused(try Self.decision(name, account)) == nil, "\(name)")
        }
        #expect(Self.refused(try Self.decision("payment-100-xlm", account))?.hasPrefix("rule r: destination GCATS5") == true)
    }

    /// An exchange's deposit address is an account and a memo: a destination that names a memo takes only a
    /// transaction that carries that memo (of that type), and not the account's muxed forms, whose id the
    /// exchange might read instead of the memo.
    @Test func aDestinationWithAMemoTakesOnlyThatMemo() throws {
        let text = ", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoText\": \"deposit-7731\"}]"
        #expect(Self.refused(try Self.decision("payment-memo-text-right", text)) == nil)
        let needs = "rule r: destination \(Self.payee) takes only memo text \"deposit-7731\""
        #expect(Self.refused(try Self.decision("payment-memo-text-wrong", text)) == needs + ": this transaction's is text \"deposit-7732\"")
        #expect(Self.refused(try Self.decision("payment-memo-id", text)) == needs + ": this transaction's is id 7731")
        #expect(Self.refused(try Self.decision("payment-memo-missing", text)) == needs + ": this transaction has none")
        #expect(Self.refused(try Self.decision("payment-memo-hash", text))?.hasPrefix(needs + ": this transaction's is hash 000102") == true)
        let muxedPayee = "MBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7CAAAAEPXD6YEZM4PC"
        #expect(Self.refused(try Self.decision("payment-memo-text-to-muxed", text))
                == "rule r: destination \(muxedPayee) is not allowed: its account is listed with a memo, which a muxed id would route around")
        // An authorization entry has no memo.
        #expect(Self.refused(try Self.decision("auth-entry-sac-transfer", text)) == needs + ": this request has none")
        let id = ", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoId\": \"7731\"}]"
        #expect(Self.refused(try Self.decision("payment-memo-id", id)) == nil)
        #expect(Self.refused(try Self.decision("payment-memo-text-right", id)) == "rule r: destination \(Self.payee) takes only memo id 7731: "
                + "this transaction's is text \"deposit-7731\"")
        // Two deposits at one exchange, and a plain payee beside them: each its own entry.
        let two = ", \"destinations\": [{\"destination\": \"\(Self.payee)\", \"memoId\": \"1\"}, "
            + "{\"destination\": \"\(Self.payee)\", \"memoText\": \"deposit-7731\"}, \"\(Self.dest)\"]"
        #expect(Self.refused(try Self.decision("payment-memo-text-right", two)) == nil)
        #expect(Self.refused(try Self.decision("payment-100-xlm", two)) == nil)
        #expect(Self.refused(try Self.decision("payment-memo-missing", two))?.hasPrefix("rule r: destination \(Self.payee) takes only memo id 1") == true)
    }

    @Test func feesTimeBoundsAndWhatCannotBeCounted() throws {
        #expect(Self.refused(try Self.decision("fee-bump-paid-by-identity", ", \"maxFee\": \"0.0009\"")) == "rule r: fees over 0.0009 XLM: this one 0.001")
        #expect(Self.refused(try Self.decision("payment-high-fee", ", \"maxFee\": \"0.01\"")) != nil)
        #expect(Self.refused(try Self.decision("payment-no-time-bounds", ", \"expiresWithin\": \"1h\"")) == "rule r: a transaction must have a latest time (time bounds)")
        #expect(Self.refused(try Self.decision("payment-unbounded-max-time", ", \"expiresWithin\": \"1h\"")) != nil)
        #expect(Self.refused(try Self.decision("payment-far-future-time-bounds", ", \"expiresWithin\": \"1h\""))?.contains("must expire within 1h") == true)
        let capped = ", \"limits\": [{\"asset\": \"native\", \"perRequest\": \"1000\"}]"  // checked before what no limit names
        for name in ["account-merge", "liquidity-pool-deposit", "other-contract-call-with-identity-auth", "auth-entry-nested-transfer-under-swap"] {
            #expect(Self.refused(try Self.decision(name, capped))?.contains("cannot be counted") == true, "\(name)")
        }
        #expect(Self.refused(try Self.decision("moves-nothing-operations", ", \"operations\": [\"changeTrust\", \"setOptions\"]")) == "rule r: operation manageData is not allowed")
        #expect(Self.refused(try Self.decision("other-contract-call-without-auth",
                                               ", \"contracts\": [{\"contract\": \"CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA\", \"functions\": [\"swap\"]}]"))
                == "rule r: function price of contract CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA is not allowed")
    }
}
