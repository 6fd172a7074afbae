import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// Signing the entries of a simulated envelope: byte for byte what stellar-sdk's `authorize_entry` makes of it
/// (fixtures/auth-preimages.json, "envelopes"), and each refusal before anything is signed.
@Suite struct EnvelopeAuthorizationSigningTests {
    struct Case: Decodable {
        let name, network, envelope: String
        let expiration: UInt32
        let refusal, signed, signedNonStrict: String?
    }
    struct File: Decodable { let signer: String; let envelopes: [Case] }
    static let file = try! Fixtures.load(File.self, "auth-preimages.json")
    static let key = try! KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")
    /// The other account of the fixtures (seed 04…04).
    static let other = try! KeyPair(seed: SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 4) }).publicKey.accountID

    /// V1 entries are accepted (`.notAddressBound`) unless `allowing` says otherwise: most fixtures are V1.
    func sign(_ fixture: Case, allowing: AuthorizationRisks = [.notAddressBound]) throws -> SignedAuthorizations {
        try TransactionEnvelope(base64: fixture.envelope).signingAuthorizations(
            by: Self.key, on: try StellarNetwork(named: fixture.network), expirationLedger: fixture.expiration,
            allowing: allowing)
    }

    @Test func signedEnvelopesAreStellarSDKs() throws {
        let signed = Self.file.envelopes.filter { $0.signed != nil }
        #expect(signed.count == 4)
        for fixture in signed {
            let result = try sign(fixture)
            #expect(result.base64 == fixture.signed, "\(fixture.name)")
            // Still one valid envelope, with no envelope signature, the same size as stellar-sdk's.
            let again = try TransactionEnvelope(xdr: result.envelope)
            #expect(again.signatures.isEmpty)
        }
    }

    @Test func whatIsSignedAndWhatIsLeftAlone() throws {
        func named(_ name: String) throws -> Case { try #require(Self.file.envelopes.first { $0.name == name }) }
        let mixed = try sign(try named("mixed v1"))
        #expect(mixed.plan.toSign == [1])
        #expect(mixed.plan.leftAlone.map(\.number) == [2, 3])
        #expect(mixed.plan.leftAlone.map(\.reason) == ["for \(Self.other)", "the transaction's source account"])
        let two = try sign(try named("two entries for the key, then another"))
        #expect(two.plan.toSign == [1, 2] && two.plan.leftAlone.map(\.number) == [3])
        let delegates = try sign(try named("with delegates"))
        #expect(delegates.plan.toSign == [1, 2] && delegates.plan.leftAlone.isEmpty)
    }

    @Test func refusals() throws {
        func named(_ name: String) throws -> Case { try #require(Self.file.envelopes.first { $0.name == name }) }
        let loose = try named("non-strict")
        #expect(throws: AuthorizationError.notStrict(entry: 1)) { try sign(loose) }
        #expect(try sign(loose, allowing: [.notStrict, .notAddressBound]).base64 == loose.signedNonStrict)
        #expect(throws: AuthorizationError.noEntry(for: Self.key.publicKey.accountID, asked: [Self.other])) {
            try sign(try named("none for the key"))
        }
        #expect(throws: AuthorizationError.envelopeAlreadySigned(1)) { try sign(try named("already signed")) }
        // A classic payment has no entries to sign; a fee bump's are its inner transaction's.
        let envelopes = TransactionFixtures.loaded.envelopes.filter { $0.network == "testnet" }
        let payment = try #require(envelopes.first {
            $0.name.hasPrefix("payment") && $0.kind == "v1" && (try? TransactionEnvelope(base64: $0.envelope))?.signatures.isEmpty == true
        })
        let feeBump = try #require(envelopes.first { $0.kind == "fee-bump" })
        #expect(throws: AuthorizationError.noEntry(for: Self.key.publicKey.accountID, asked: [])) {
            try TransactionEnvelope(base64: payment.envelope).signingAuthorizations(by: Self.key, on: .testnet, expirationLedger: 1)
        }
        #expect(throws: AuthorizationError.notV1("fee-bump")) {
            try TransactionEnvelope(base64: feeBump.envelope).signingAuthorizations(by: Self.key, on: .testnet, expirationLedger: 1)
        }
    }
}
