import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// CAP-71 delegates: an entry's delegate nodes that name the key are signed, byte for byte as stellar-sdk's
/// `authorize_entry(…, for_address=G…)` signs them (fixtures/delegates.json, made by fixtures/make-delegates.py), and
/// each entry that breaks a rule of the host is refused before the key signs.
@Suite struct DelegateSigningTests {
    struct Entry: Decodable { let name, network, entry, preimage: String; let expiration: UInt32; let refusal, signed: String?; let nodes: [String] }
    struct Envelope: Decodable { let name, network, envelope, signed: String; let expiration: UInt32 }
    struct File: Decodable { let signer: String; let entries: [Entry]; let envelopes: [Envelope] }
    static let file = try! Fixtures.load(File.self, "delegates.json")
    static let key = try! KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")

    func sign(_ fixture: Entry) throws -> AuthorizationEntry {
        try AuthorizationEntry(base64: fixture.entry).signed(for: .account(Self.key.publicKey), on: .testnet,
                                                            expirationLedger: fixture.expiration) { payload in
            // Every node signs the one payload bound to the entry's own address (CAP-71-01).
            #expect(payload.preimage.bytes == Base64.decode(fixture.preimage), "\(fixture.name)")
            return Self.key.signature(for: payload.digest)
        }
    }

    @Test func signedEntriesAreStellarSDKs() throws {
        let signed = Self.file.entries.filter { $0.signed != nil }
        #expect(signed.count == 5)
        for fixture in signed {
            let entry = try AuthorizationEntry(base64: fixture.entry)
            let nodes = try entry.nodes(for: .account(Self.key.publicKey), expirationLedger: fixture.expiration, number: 1)
            #expect(nodes.map(\.address) == fixture.nodes, "\(fixture.name)")
            #expect(try sign(fixture).base64 == fixture.signed, "\(fixture.name)")
        }
    }

    @Test func entriesThatBreakTheRulesAreRefused() throws {
        func named(_ name: String) throws -> Entry { try #require(Self.file.entries.first { $0.name == name }) }
        #expect(throws: AuthorizationError.expirationDiffers(entry: 1, carried: 1_999_999)) {
            try sign(try named("a delegate beside another signed at another expiration"))
        }
        #expect(throws: AuthorizationError.signerTwice(entry: 1)) { try sign(try named("the key's own entry, and a delegate too")) }
        for name in ["a delegates array out of order", "the key twice in one delegates array", "a nested array out of order"] {
            #expect(throws: AuthorizationError.delegatesOutOfOrder(entry: 1), "\(name)") { try sign(try named(name)) }
        }
        #expect(throws: AuthorizationError.notForSigner(entry: 1, signer: Self.key.publicKey.accountID)) {
            try sign(try named("delegates that name the key nowhere"))
        }
        // Each refusal comes before the key is asked for anything.
        for fixture in Self.file.entries where fixture.refusal != nil {
            _ = try? AuthorizationEntry(base64: fixture.entry).signed(for: .account(Self.key.publicKey), on: .testnet,
                                                                      expirationLedger: fixture.expiration) { _ in
                Issue.record("\(fixture.name): the key was asked to sign")
                return []
            }
        }
    }

    /// In an envelope: the delegate node and the key's own V2 entry are signed, the other account's is left alone,
    /// and the summary says on whose behalf the delegate signs.
    @Test func anEnvelopeWithADelegateEntry() throws {
        let fixture = try #require(Self.file.envelopes.first)
        let envelope = try TransactionEnvelope(base64: fixture.envelope)
        let signed = try envelope.signingAuthorizations(by: Self.key, on: .testnet, expirationLedger: fixture.expiration)
        #expect(signed.base64 == fixture.signed)
        #expect(signed.plan.toSign == [1, 2] && signed.plan.leftAlone.map(\.number) == [3])
        #expect(signed.plan.risks.isEmpty)
        let smart = "CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA"
        let summary = SigningSummary.authorizations(in: envelope, on: .testnet, plan: signed.plan, expirationLedger: fixture.expiration,
                                                    signingAs: ("alice", Self.key.publicKey))
        #expect(summary.text.contains("  signs       authorization 1 as delegate \(Self.key.publicKey.accountID), on behalf of \(smart), valid through ledger \(fixture.expiration)"))
        #expect(summary.text.contains("  signs       authorization 2, valid through ledger \(fixture.expiration)"))
        // The transaction's own summary shows the delegate tree of entry 1.
        #expect(summary.text.contains { $0.contains("delegate") && $0.contains("\(Self.key.publicKey.accountID), not signed yet") })
    }

    /// A nested delegate signs on behalf of the entry's address through the delegate above it.
    @Test func aNestedDelegateSaysThroughWhom() throws {
        let fixture = try #require(Self.file.entries.first { $0.name == "a nested delegate" })
        let entry = try AuthorizationEntry(base64: fixture.entry)
        let node = try #require(try entry.nodes(for: .account(Self.key.publicKey), expirationLedger: fixture.expiration, number: 1).first)
        #expect(entry.chain(to: node) == ["CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA",
                                          "CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE"])
    }
}
