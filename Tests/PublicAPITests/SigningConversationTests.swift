import Foundation
import Testing
import StellarKeystore  // not @testable: the conversation as an app has it
import StellarKeys
import StellarTransactions

/// The signing conversation an app holds: review (touches no secret, asks for nothing), show the summary, approve
/// (a PIN only if the key needs one; exactly what was reviewed is signed). Envelopes and their signed forms are
/// stellar-sdk's (fixtures/tx-envelopes.json, fixtures/make-tx-envelopes.py).
@Suite struct SigningConversationTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-review-\(UUID().uuidString)").path
    static let seed = "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO"
    static let pin = "493817"

    struct Envelopes: Decodable {
        struct Case: Decodable { let name, network, envelope, hash, signed: String; let alreadySigned: Bool }
        let envelopes: [Case]
    }

    static func envelopes() throws -> [Envelopes.Case] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/tx-envelopes.json")
        return try JSONDecoder().decode(Envelopes.self, from: Data(contentsOf: url)).envelopes
    }

    func keystore() throws -> Keystore {
        try FileManager.default.createDirectory(atPath: directory + "-run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "-run/keystore")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(try KeyPair(secretSeed: Self.seed))) { _ in try PIN(Self.pin) }
        return keystore
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: directory); try? FileManager.default.removeItem(atPath: directory + "-run") }

    func vaultBytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: directory + "/alice.vault")) }

    @Test func reviewAsksForNothingAndApproveSignsExactlyWhatWasReviewed() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        for fixture in try Self.envelopes() where fixture.network == "testnet" {
            let before = try vaultBytes()
            let review = try keystore.review(.transaction(try TransactionEnvelope(base64: fixture.envelope), network: .testnet), as: "alice")
            #expect(review.keySource == .vault(needsPIN: true))
            #expect(review.signer.address == "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR")
            #expect(review.summary.text.contains { $0.contains(fixture.hash) }, "\(fixture.name): the summary shows the hash signed")
            #expect(review.summary.network == .testnet)
            var asked = 0
            let signed = try review.approve { asked += 1; return try PIN(Self.pin) }.signed
            #expect(asked == 1, "\(fixture.name): the PIN is asked once, on approval")
            #expect(signed.base64 == fixture.signed, "\(fixture.name): the bytes stellar-sdk makes")
            #expect(signed.wasAlreadySigned == fixture.alreadySigned)
            #expect(Hex.string(signed.hash) == fixture.hash)
            #expect(try vaultBytes() == before)
        }
    }

    @Test func aSessionKeyIsApprovedWithoutAPIN() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        let token = try keystore.startSession(name: "alice", ttl: .seconds(60)) { try PIN(Self.pin) }
        let review = try keystore.review(.payload(Array("hash".utf8)), keys: .automatic(agent: nil, session: token.stringValue, pinAvailable: false))
        #expect(review.keySource == .session && review.signer.name == "alice")
        let address = review.signer.address
        let signature = try review.approve { Issue.record("a PIN was asked for a session's key"); return try PIN(Self.pin) }.signed
        #expect(try PublicKey(accountID: address).isValidSignature(signature, for: Array("hash".utf8)))
    }

    @Test func aSessionEndedBetweenReviewAndApprovalSignsNothing() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        let token = try keystore.startSession(name: "alice", ttl: .seconds(60)) { try PIN(Self.pin) }
        let review = try keystore.review(.message(Array("hi".utf8)), keys: .automatic(agent: nil, session: token.stringValue, pinAvailable: false))
        try keystore.endSession(token)
        do {
            _ = try review.approve { try PIN(Self.pin) }
            Issue.record("a session ended after the review still signed")
        } catch let error as SessionError {
            #expect(error == .ended)
        }
    }

    @Test func aVaultReplacedBetweenReviewAndApprovalSignsNothingAndCountsNoAttempt() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        let review = try keystore.review(.payload([1, 2, 3]), as: "alice")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .random, replacing: true) { _ in try PIN(Self.pin) }
        do {
            _ = try review.approve { try PIN(Self.pin) }
            Issue.record("a vault replaced after the review still signed")
        } catch let error as VaultError {
            #expect(error == .changedWhileWaiting(name: "alice"))
        }
        // The refused approval was not a wrong PIN: the next one works at once.
        let again = try keystore.review(.payload([1, 2, 3]), as: "alice")
        _ = try again.approve { try PIN(Self.pin) }
    }

    @Test func checksThatNeedOnlyThePublicKeyRunInTheReview() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/auth-preimages.json")
        struct Preimages: Decodable { struct Case: Decodable { let network, preimage: String }; let cases: [Case] }
        let testnet = try #require(try JSONDecoder().decode(Preimages.self, from: Data(contentsOf: url)).cases.first { $0.network == "testnet" })
        let preimage = try AuthorizationPreimage(base64: testnet.preimage)
        #expect(throws: AuthorizationError.otherNetwork(expected: StellarNetwork.public.shown)) {
            _ = try keystore.review(.authorization(preimage, network: .public), as: "alice")
        }
        // A V1 preimage binds no address: the review asks for consent, and approving without it signs nothing.
        let unconsented = try keystore.review(.authorization(preimage, network: .testnet), as: "alice")
        #expect(unconsented.consentNeeded?.risks == .notAddressBound)
        do {
            _ = try unconsented.approve { try PIN(Self.pin) }
            Issue.record("a V1 preimage was signed without consent")
        } catch let error as AuthorizationError {
            #expect(error == .notAddressBound(entries: []))
        }
        let review = try keystore.review(.authorization(preimage, network: .testnet), as: "alice")
        let address = review.signer.address
        let consent = review.consentNeeded
        let signature = try review.approve(consent: consent) { try PIN(Self.pin) }.signed
        #expect(try PublicKey(accountID: address).isValidSignature(signature, for: preimage.hash))
    }

    @Test func aRawPayloadSaysWhatCannotBeKnownOfIt() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        let review = try keystore.review(.payload([UInt8](repeating: 7, count: 32)), as: "alice")
        #expect(review.summary.network == nil)
        #expect(review.summary.text.contains { $0.contains("!!") }, "a raw payload is flagged: keystore cannot tell what it approves")
    }
}
