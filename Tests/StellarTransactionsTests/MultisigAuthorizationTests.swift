import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// The entries of a Stellar account with several signers: each signer adds its `{public_key, signature}` map to the
/// entry in key order, beside those already there, so that any set of them, signing in any order, makes the bytes
/// stellar-sdk makes for that set (fixtures/multisig-entries.json, made by fixtures/make-multisig-entries.py); and
/// what the host would refuse is refused before a key signs.
@Suite struct MultisigAuthorizationTests {
    struct Case: Decodable { let name, network, envelope: String; let expiration: UInt32; let allowV1: Bool; let signed: [String: String] }
    struct Refusal: Decodable { let name, network, envelope, why: String; let expiration: UInt32 }
    struct File: Decodable { let account: String; let signers: [String: String]; let envelopes: [Case]; let refusals: [Refusal] }
    static let file = try! Fixtures.load(File.self, "multisig-entries.json")
    static func key(_ name: Character) -> KeyPair {
        var seed = Hex.bytes(file.signers[String(name)]!)!
        return try! KeyPair(seed: SecureBytes(consuming: &seed))
    }

    /// `envelope` signed by `name` as a signer of the fixture's account.
    func sign(_ envelope: String, by name: Character, expiration: UInt32, allowV1: Bool = false) throws -> String {
        let key = Self.key(name)
        let signer = try AuthorizationSigner.multisigAccount(Self.file.account, key: key.publicKey)
        let plan = try TransactionEnvelope(base64: envelope).authorizationPlan(for: signer, expirationLedger: expiration)
        if let refusal = plan.refusal(allowing: allowV1 ? .notAddressBound : []) { throw refusal }
        return try TransactionEnvelope(base64: envelope).signing(plan, on: .testnet, expirationLedger: expiration) {
            key.signature(for: $0.digest)
        }.base64
    }

    @Test func everySetOfSignersInEveryOrderMakesStellarSDKsBytes() throws {
        #expect(Self.file.envelopes.count == 3)
        for fixture in Self.file.envelopes {
            #expect(fixture.signed.count == 7, "\(fixture.name)")
            for (set, expected) in fixture.signed {
                for order in permutations(Array(set)) {
                    var envelope = fixture.envelope
                    for name in order { envelope = try sign(envelope, by: name, expiration: fixture.expiration, allowV1: fixture.allowV1) }
                    #expect(envelope == expected, "\(fixture.name): \(String(order))")
                }
            }
        }
    }

    @Test func signingAgainReplacesOnlyTheKeysOwnMap() throws {
        let fixture = try #require(Self.file.envelopes.first)
        let all = try #require(fixture.signed["ABC"])
        #expect(try sign(all, by: "B", expiration: fixture.expiration) == all)
        // A signer alone on the entry may move the expiration: no other signature commits to it.
        let alone = try #require(fixture.signed["A"])
        let moved = try sign(alone, by: "A", expiration: fixture.expiration + 10)
        #expect(try AuthorizationEntry(xdr: try #require(try TransactionEnvelope(base64: moved).authorizationSlots().first).entry.bytes)
            .signatureExpirationLedger == fixture.expiration + 10)
        // Beside another signer's map, it may not.
        #expect(throws: AuthorizationError.expirationDiffers(entry: 1, carried: fixture.expiration)) {
            try sign(try #require(fixture.signed["B"]), by: "A", expiration: fixture.expiration + 10)
        }
    }

    @Test func whatTheHostWouldRefuseIsRefusedBeforeTheKeySigns() throws {
        #expect(Self.file.refusals.count == 4)
        for refusal in Self.file.refusals {
            let signer = try AuthorizationSigner.multisigAccount(Self.file.account, key: Self.key("C").publicKey)
            let error = #expect(throws: AuthorizationError.self, "\(refusal.name)") {
                _ = try TransactionEnvelope(base64: refusal.envelope).authorizationPlan(for: signer, expirationLedger: refusal.expiration)
            }
            switch (refusal.why, error) {
            case ("unreadable", .notAccountSignatures(1, Self.file.account, _)?), ("too many", .noRoomForSignature(1, Self.file.account)?),
                 ("expiration differs", .expirationDiffers(1, _)?): break
            default: Issue.record("\(refusal.name): \(String(describing: error)), expected \(refusal.why)")
            }
        }
    }

    @Test func theSummarySaysWhoseSignerAndBesideWhom() throws {
        let fixture = try #require(Self.file.envelopes.first)
        let key = Self.key("A").publicKey
        let signer = try AuthorizationSigner.multisigAccount(Self.file.account, key: key)
        let plan = try TransactionEnvelope(base64: try #require(fixture.signed["BC"])).authorizationPlan(for: signer, expirationLedger: fixture.expiration)
        let lines = plan.lines(expirationLedger: fixture.expiration, signingAs: ("alice", key))
        #expect(lines.first == "  signer      alice (\(key.accountID)), as a signer of \(Self.file.account)")
        #expect(lines.contains("  signs       authorization 1, valid through ledger \(fixture.expiration), beside the signatures of "
                               + [Self.key("B"), Self.key("C")].map(\.publicKey.accountID).joined(separator: ", ")))
    }

    @Test func onlyAnAccountAddressNamesAMultisigAccount() throws {
        let key = Self.key("A").publicKey
        #expect(throws: AuthorizationError.notAnAccount("CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA")) {
            try AuthorizationSigner.multisigAccount("CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA", key: key)
        }
        // The key's own account named as a multisig account is its own account.
        #expect(try AuthorizationSigner.multisigAccount(key.accountID, key: key) == .account(key))
    }

    private func permutations(_ items: [Character]) -> [[Character]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
