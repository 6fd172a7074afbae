import StellarKeys
import StellarTransactions
import TestFixtures
import Testing

extension WebAuthChallengeFixtures.Case: CustomTestStringConvertible {
    public var testDescription: String { name }
}

extension WebAuthChallengeFixtures.Case {
    var expectation: WebAuthExpectation {
        get throws {
            try WebAuthExpectation(
                serverKey: PublicKey(accountID: serverKey), homeDomain: homeDomain, webAuthDomain: webAuthDomain,
                network: StellarNetwork(named: network), clientAccount: clientAccount,
                clientDomain: try clientDomain.map { .init(domain: $0, key: try PublicKey(accountID: clientDomainKey!)) })
        }
    }

    func verify(now: UInt64? = nil, expecting: WebAuthExpectation? = nil) throws -> WebAuthChallenge {
        try WebAuthChallenge(base64: challenge, serverNetworkPassphrase: networkPassphrase,
                             expecting: expecting ?? expectation, now: now ?? self.now)
    }
}

/// SEP-10's client-side checks, against challenges stellar-sdk made (fixtures/make-web-auth-challenges.py).
@Suite struct WebAuthChallengeTests {
    static let fixtures = try! WebAuthChallengeFixtures.load()
    static var hostile: [WebAuthChallengeFixtures.Case] { fixtures.cases.filter { $0.rule != nil } }
    static var honest: [WebAuthChallengeFixtures.Case] { fixtures.cases.filter { $0.rule == nil } }

    @Test("each hostile challenge is refused by the rule it breaks", arguments: hostile)
    func hostileChallengeIsRefusedByItsRule(_ fixture: WebAuthChallengeFixtures.Case) throws {
        let error = #expect(throws: WebAuthError.self) { try fixture.verify() }
        #expect(error?.rule == fixture.rule, "\(fixture.name): \(error?.message ?? "accepted")")
        #expect(error?.message.hasPrefix("The sign-in challenge was refused, nothing was signed: ") == true)
    }

    @Test("the honest challenges pass, with the bounds and the hash stellar-sdk signed", arguments: honest)
    func honestChallengePasses(_ fixture: WebAuthChallengeFixtures.Case) throws {
        let challenge = try fixture.verify()
        #expect(challenge.validFrom == fixture.now && challenge.validUntil == fixture.now + 900)
        let signed = try TransactionEnvelope(base64: fixture.signed!)
        let client = try PublicKey(accountID: fixture.clientAccount)
        #expect(signed.isSigned(by: client, hash: challenge.hash))
    }

    /// Every rule has a challenge that breaks it, but those only a hand-made input reaches (tested below).
    @Test func everyRuleHasAHostileChallenge() {
        let covered = Set(Self.hostile.compactMap(\.rule))
        let all: Set = ["not-v1-envelope", "network", "source", "sequence", "soroban-resources", "preconditions",
                        "no-time-bounds", "time-bounds", "memo", "memo-muxed", "no-operations", "operation-type",
                        "first-operation-source", "home-domain", "nonce", "operation-source", "unexpected-client-domain",
                        "client-domain-source", "client-domain", "missing-client-domain", "web-auth-domain",
                        "signature-count", "server-signature"]
        #expect(all.subtracting(covered).isEmpty, "no fixture for \(all.subtracting(covered).sorted())")
    }

    @Test func theClockMayBeTenSecondsOffEitherWayAndNoMore() throws {
        let valid = Self.honest.first { $0.name == "valid" }!
        _ = try valid.verify(now: valid.now - 10)
        _ = try valid.verify(now: valid.now + 900 + 10)
        for now in [valid.now - 11, valid.now + 900 + 11] {
            #expect(throws: WebAuthError.outsideTimeBounds(from: valid.now, until: valid.now + 900, now: now)) { try valid.verify(now: now) }
        }
    }

    @Test func aChallengeIsCheckedAgainstWhatTheClientExpectedNotWhatItSays() throws {
        let valid = Self.honest.first { $0.name == "valid" }!
        var other = try valid.expectation
        other.homeDomain = "other.example"
        #expect(throws: WebAuthError.self) { try valid.verify(expecting: other) }
        other = try valid.expectation
        other.webAuthDomain = "other.example"
        #expect { try valid.verify(expecting: other) } throws: { ($0 as? WebAuthError)?.rule == "web-auth-domain" }
        other = try valid.expectation
        other.network = .public
        #expect { try WebAuthChallenge(base64: valid.challenge, expecting: other, now: valid.now) } throws: {
            ($0 as? WebAuthError)?.rule == "server-signature"
        }
        other = try valid.expectation
        other.clientAccount = try PublicKey(accountID: valid.serverKey).accountID
        #expect { try valid.verify(expecting: other) } throws: { ($0 as? WebAuthError)?.rule == "first-operation-source" }
        other = try valid.expectation
        other.clientAccount = "CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE"
        #expect { try valid.verify(expecting: other) } throws: { ($0 as? WebAuthError)?.rule == "client-account" }
    }

    @Test func whatIsNotAnEnvelopeIsUnreadable() {
        let valid = Self.honest.first { $0.name == "valid" }!
        for text in ["", "not base64!", "AAAA", String(valid.challenge.dropLast(8))] {
            #expect { try WebAuthChallenge(base64: text, expecting: try valid.expectation, now: valid.now) } throws: {
                ($0 as? WebAuthError)?.rule == "unreadable"
            }
        }
    }

    @Test func theSummaryNamesTheServiceTheAccountTheServerAndTheTime() throws {
        let valid = Self.honest.first { $0.name == "valid-client-domain" }!
        let lines = SigningSummary.signIn(try valid.verify(), signingAs: ("alice", try PublicKey(accountID: valid.clientAccount))).text
        #expect(lines == [
            "Sign in to \"anchor.example\" as \(valid.clientAccount) (alice)",
            "  server      \(valid.serverKey) (\"auth.anchor.example\")",
            "  network     testnet (Test SDF Network ; September 2015)",
            "  valid       from 2027-01-15T08:00:00Z until 2027-01-15T08:15:00Z",
            "  client      \"client.example\" (\(valid.clientDomainKey!))",
        ])
    }
}

extension WebAuthChallengeTests {
    /// The sign-in summary is the same lines as a `SigningSummary`, indented as every other body, the name quoted
    /// only when it is not a plain word.
    @Test func theSigningSummaryOfASignInIsIndentedAndQuoted() throws {
        let valid = Self.honest.first { $0.name == "valid-client-domain" }!
        let key = KeyPair.random().publicKey
        let summary = SigningSummary.signIn(try valid.verify(), signingAs: ("alice", key))
        #expect(summary.text == [
            "Sign in to \"anchor.example\" as \(valid.clientAccount) (alice)",
            "  server      \(valid.serverKey) (\"auth.anchor.example\")",
            "  network     testnet (Test SDF Network ; September 2015)",
            "  valid       from 2027-01-15T08:00:00Z until 2027-01-15T08:15:00Z",
            "  client      \"client.example\" (\(valid.clientDomainKey!))",
        ])
        #expect(summary.network == .testnet && !summary.isElided)
        #expect(SigningSummary.signIn(try valid.verify(), signingAs: ("al ice\u{202E}", key)).title.hasSuffix("(\"al ice\\u{202E}\" (hex 616c20696365e280ae))"))
    }
}
