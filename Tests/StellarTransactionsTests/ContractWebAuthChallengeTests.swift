import StellarKeys
import StellarTransactions
import TestFixtures
import Testing

extension ContractWebAuthChallengeFixtures.Case: CustomTestStringConvertible {
    public var testDescription: String { name }
}

extension ContractWebAuthChallengeFixtures.Case {
    var expectation: ContractWebAuthExpectation {
        get throws {
            try ContractWebAuthExpectation(
                serverKey: PublicKey(accountID: serverKey), webAuthContract: webAuthContract, homeDomain: homeDomain,
                webAuthDomain: webAuthDomain, network: StellarNetwork(named: network), clientAccount: clientAccount,
                clientDomain: try clientDomain.map { .init(domain: $0, key: try PublicKey(accountID: clientDomainKey!)) })
        }
    }

    func verify(expecting: ContractWebAuthExpectation? = nil) throws -> ContractWebAuthChallenge {
        try ContractWebAuthChallenge(base64: challenge, serverNetworkPassphrase: networkPassphrase, expecting: expecting ?? expectation)
    }
}

/// SEP-45's client-side checks, against challenges made with stellar-sdk (fixtures/make-contract-web-auth-challenges.py).
@Suite struct ContractWebAuthChallengeTests {
    static let fixtures = try! ContractWebAuthChallengeFixtures.load()
    static var hostile: [ContractWebAuthChallengeFixtures.Case] { fixtures.cases.filter { $0.rule != nil } }
    static var honest: [ContractWebAuthChallengeFixtures.Case] { fixtures.cases.filter { $0.rule == nil } }
    static func named(_ name: String) -> ContractWebAuthChallengeFixtures.Case { fixtures.cases.first { $0.name == name }! }

    @Test("each hostile challenge is refused by the rule it breaks", arguments: hostile)
    func hostileChallengeIsRefusedByItsRule(_ fixture: ContractWebAuthChallengeFixtures.Case) throws {
        let error = #expect(throws: ContractWebAuthError.self) { try fixture.verify() }
        #expect(error?.rule == fixture.rule, "\(fixture.name): \(error?.message ?? "accepted")")
        #expect(error?.message.hasPrefix("The sign-in challenge was refused, nothing was signed: ") == true)
    }

    /// Every rule has a stellar-sdk challenge that breaks it, but those only a hand-made input reaches (below).
    @Test func everyRuleHasAHostileChallenge() {
        let covered = Set(Self.hostile.compactMap(\.rule))
        let all: Set = ["network", "credentials", "not-contract-call", "contract", "function", "sub-invocations", "arguments",
                        "argument-map", "unknown-argument", "account", "home-domain", "web-auth-domain", "web-auth-domain-account",
                        "nonce", "client-domain-pair", "unexpected-client-domain", "missing-client-domain", "client-domain",
                        "client-domain-account", "nonce-differs", "invocations-differ", "duplicate-entry", "unexpected-entry",
                        "missing-server-entry", "missing-client-entry", "missing-client-domain-entry", "entry-signed",
                        "expiration-ledger", "server-unsigned", "server-signature-shape", "server-signature"]
        #expect(all.subtracting(covered).isEmpty, "no fixture for \(all.subtracting(covered).sorted())")
        #expect(covered.subtracting(all).isEmpty, "a fixture names an unknown rule: \(covered.subtracting(all).sorted())")
    }

    @Test("the honest challenges pass, with the server's nonce and expiration", arguments: honest)
    func honestChallengePasses(_ fixture: ContractWebAuthChallengeFixtures.Case) throws {
        let challenge = try fixture.verify()
        #expect(challenge.nonce == Array(Self.fixtures.nonce.utf8))
        #expect(challenge.expirationLedger == Self.fixtures.expirationLedger && challenge.serverExpirationLedger == Self.fixtures.expirationLedger)
        let v1 = fixture.name == "valid-v1" ? [challenge.clientEntry] : fixture.name.hasSuffix("v1-entry") ? [challenge.clientDomainEntry!] : []
        #expect(challenge.notAddressBound == v1.map { $0 + 1 })
        #expect(challenge.entries.count == (fixture.clientDomain == nil ? 2 : 3))
        #expect((challenge.clientDomainEntry != nil) == (fixture.clientDomain != nil))
        #expect(Set([challenge.serverEntry, challenge.clientEntry] + (challenge.clientDomainEntry.map { [$0] } ?? [])).count == challenge.entries.count)
    }

    /// The signed list is the server's bytes with the signed entries put in their places: with stellar-sdk's own
    /// signed entries it is byte for byte the list stellar-sdk made; with the unsigned ones, the server's list.
    @Test("stellar-sdk's signed entries go back in their places", arguments: honest)
    func signedEntriesGoBackInTheirPlaces(_ fixture: ContractWebAuthChallengeFixtures.Case) throws {
        let challenge = try fixture.verify()
        for signed in [fixture.signed!, fixture.signedSmartAccount!] {
            let entries = try challenge.signed(client: try #require(Base64.decode(signed.client)),
                                               clientDomain: try signed.clientDomain.map { try #require(Base64.decode($0)) })
            #expect(Base64.string(entries) == signed.entries)
        }
        let unchanged = try challenge.signed(client: challenge.entries[challenge.clientEntry],
                                             clientDomain: challenge.clientDomainEntry.map { challenge.entries[$0] })
        #expect(Base64.string(unchanged) == fixture.challenge)
    }

    /// What comes back from a signer must be the reviewed entry with a signature: another entry, or the same one
    /// valid through another ledger, is never put in the list.
    @Test func aSignedEntryThatIsNotTheReviewedOneIsRefused() throws {
        let fixture = Self.named("valid")
        let challenge = try fixture.verify()
        var later = try #require(Base64.decode(fixture.signed!.client))
        // The expiration ledger sits right before the signature: after type (4), contract address (4 + 32), nonce (8).
        later[4 + 36 + 8 + 3] ^= 1
        for wrong in [challenge.entries[challenge.serverEntry], later, [0, 0, 0, 0], []] {
            #expect(throws: ContractWebAuthError.signedEntryChanged) { try challenge.signed(client: wrong) }
        }
    }

    @Test func aChallengeIsCheckedAgainstWhatTheClientExpectedNotWhatItSays() throws {
        let valid = Self.named("valid")
        func rule(_ change: (inout ContractWebAuthExpectation) -> Void) throws -> String? {
            var expectation = try valid.expectation
            change(&expectation)
            do {
                _ = try ContractWebAuthChallenge(base64: valid.challenge, expecting: expectation)
                return nil
            } catch let error as ContractWebAuthError {
                return error.rule
            }
        }
        #expect(try rule { $0.homeDomain = "other.example" } == "home-domain")
        #expect(try rule { $0.webAuthDomain = valid.webAuthDomain + ":8443" } == "web-auth-domain")
        #expect(try rule { $0.network = .public } == "server-signature")
        #expect(try rule { $0.webAuthContract = valid.clientAccount } == "contract")
        #expect(try rule { $0.clientAccount = valid.webAuthContract } == "account")
        #expect(try rule { $0.serverKey = KeyPair.random().publicKey } == "web-auth-domain-account")
        #expect(try rule { $0.clientAccount = valid.serverKey } == "client-account")
        #expect(try rule { $0.webAuthContract = "anchor.example" } == "client-account")
        #expect(try rule { _ in } == nil)
    }

    @Test func whatIsNotAListOfEntriesIsUnreadable() throws {
        let valid = Self.named("valid")
        let expectation = try valid.expectation
        func rule(_ text: String) -> String? {
            do {
                _ = try ContractWebAuthChallenge(base64: text, expecting: expectation)
                return nil
            } catch {
                return (error as? ContractWebAuthError)?.rule
            }
        }
        let nine = Base64.string([0, 0, 0, 9] + [UInt8](repeating: 0, count: 64))
        for text in ["", "not base64!", String(valid.challenge.dropLast(8)), valid.challenge + "AAAA", nine,
                     String(repeating: "A", count: ContractWebAuthChallenge.maximumTextSize + 4)] {
            #expect(rule(text) == "unreadable", "\(text.prefix(40))")
        }
        #expect(rule("AAAAAA==") == "no-entries")
        #expect(rule(" \(valid.challenge)\n") == nil)
    }

    @Test func theSummaryNamesTheServiceTheAccountTheServerTheNonceAndTheLedger() throws {
        let fixture = Self.named("valid-client-domain")
        let key = KeyPair.random().publicKey
        let signer = try AuthorizationSigner.contractAccount(fixture.clientAccount, key: key)
        let summary = SigningSummary.contractSignIn(try fixture.verify(), as: signer, signingAs: ("alice", key))
        #expect(summary.text == [
            "Sign in to \"anchor.example\" as \(fixture.clientAccount)",
            "  signer      alice (\(key.accountID)), on behalf of \(fixture.clientAccount)",
            "  as          a signer of the contract account, as an account signs (Vec[Map{public_key, signature}])",
            "  server      \(fixture.serverKey) (\"auth.anchor.example\")",
            "  contract    \(fixture.webAuthContract), web_auth_verify only",
            "  network     testnet (Test SDF Network ; September 2015)",
            "  nonce       \"\(Self.fixtures.nonce)\"",
            "  expires     after ledger 1000180, as the server asked",
            "  client      \"client.example\" (\(fixture.clientDomainKey!)), after ledger 1000180",
        ])
        #expect(summary.network == .testnet && !summary.isElided && summary.warnings.isEmpty)
        let v1 = SigningSummary.contractSignIn(try Self.named("valid-v1").verify(), as: signer, signingAs: ("alice", key))
        #expect(v1.text[1].hasPrefix("  !! this is a V1 payload: the signature binds no address"), "\(v1.text)")
    }
}
