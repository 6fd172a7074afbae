import Foundation
import Testing
@testable import StellarKeystore

/// fixtures/tx-envelopes.json, made by stellar-sdk (fixtures/make-tx-envelopes.py).
struct TransactionFixtures: Decodable {
    struct Envelope: Decodable, CustomTestStringConvertible {
        let name, network, passphrase, kind, envelope, hash, signed: String
        let alreadySigned: Bool
        let operations: [String]
        var testDescription: String { name }
    }
    struct Full: Decodable { let envelope, passphrase, hash: String }
    struct Signer: Decodable { let secretSeed, address: String }
    let envelopes: [Envelope]
    let full: Full
    let signer: Signer

    static let loaded = try! Fixtures.load(TransactionFixtures.self, "tx-envelopes.json")
}

@Suite struct TransactionTests {
    static let fixtures = TransactionFixtures.loaded
    let signer = Signer(name: .default, keyPair: try! KeyPair(secretSeed: TransactionFixtures.loaded.signer.secretSeed), isFromPhrase: false)

    @Test func theFixturesCoverWhatTheIssueAsks() {
        let envelopes = Self.fixtures.envelopes
        #expect(envelopes.count >= 200)
        #expect(Set(envelopes.map(\.kind)) == ["v0", "v1", "fee-bump"])
        #expect(Set(envelopes.flatMap(\.operations)).count == 27)
        #expect(Set(envelopes.map(\.network)).count >= 2)
        #expect(envelopes.contains { $0.alreadySigned })
    }

    @Test(arguments: TransactionFixtures.loaded.envelopes)
    func signingGivesStellarSDKsBytes(_ fixture: TransactionFixtures.Envelope) throws {
        let envelope = try TransactionEnvelope(base64: fixture.envelope)
        #expect(envelope.kind.rawValue == fixture.kind)
        let network = try StellarNetwork(passphrase: fixture.passphrase)
        #expect(Hex.string(envelope.hash(on: network)) == fixture.hash)
        let signed = try signer.signTransaction(envelope, on: network)
        #expect(signed.base64 == fixture.signed)
        #expect(signed.wasAlreadySigned == fixture.alreadySigned)
        #expect(Hex.string(signed.hash) == fixture.hash)
    }

    @Test func aFullEnvelopeIsRefused() throws {
        let envelope = try TransactionEnvelope(base64: Self.fixtures.full.envelope)
        #expect(envelope.signatures.count == 20)
        #expect(throws: TransactionError.full) {
            try signer.signTransaction(envelope, on: StellarNetwork(passphrase: Self.fixtures.full.passphrase))
        }
    }
}
