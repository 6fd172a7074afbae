import Foundation
import Testing
import StellarKeystore  // not @testable: the conversation as an app has it
import StellarKeys
import StellarTransactions

/// A SEP-7 request through the signing conversation (fixtures/sep7.json, stellar-sdk's): the network is the one
/// given or, with none given, a consent `approve` refuses to go without.
@Suite struct TransactionRequestConversationTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-sep7-\(UUID().uuidString)").path

    struct Fixtures: Decodable {
        struct Case: Decodable { let name, uri, signedEnvelope: String }
        let originKey: String
        let cases: [Case]
    }

    static func fixture(_ name: String) throws -> (Fixtures.Case, PublicKey) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/sep7.json")
        let fixtures = try JSONDecoder().decode(Fixtures.self, from: Data(contentsOf: url))
        return (fixtures.cases.first { $0.name == name }!, try PublicKey(accountID: fixtures.originKey))
    }

    func keystore() throws -> Keystore {
        try FileManager.default.createDirectory(atPath: directory + "-run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "-run/keystore")
        let key = try KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(key)) { _ in try PIN("493817") }
        return keystore
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: directory); try? FileManager.default.removeItem(atPath: directory + "-run") }

    @Test func theRequestsNetworkNeedsAConsentWhenNoneIsGiven() throws {
        defer { cleanUp() }
        let keystore = try keystore()
        let (entry, originKey) = try Self.fixture("valid-testnet")
        let request = try TransactionRequest(uri: entry.uri).checked(originKey: originKey)

        let given = try keystore.review(try .transaction(request, network: .testnet), as: "alice")
        #expect(given.consentNeeded == nil)
        #expect(given.summary.text.contains { $0.hasPrefix("  origin      \"sep7.example.com\", verified") })
        #expect(try given.approve { try PIN("493817") }.signed.base64 == entry.signedEnvelope)

        #expect(throws: TransactionRequestError.self) { _ = try keystore.review(try .transaction(request, network: .public), as: "alice") }

        let unconfirmed = try keystore.review(try .transaction(request, network: nil), as: "alice")
        let needed = try #require(unconfirmed.consentNeeded as SigningConsent?)
        #expect(needed.requestedNetwork == .testnet && needed.question.contains("no network was given"))
        var asked = 0
        do {
            _ = try unconfirmed.approve { asked += 1; return try PIN("493817") }
            Issue.record("signed without the consent")
        } catch let error as TransactionRequestError {
            #expect(error == .networkNotConfirmed(StellarNetwork.testnet.shown))
        }
        #expect(asked == 0, "no PIN is asked without the consent")
        let confirmed = try keystore.review(try .transaction(request, network: nil), as: "alice")
        let consent = confirmed.consentNeeded
        #expect(try confirmed.approve(consent: consent) { try PIN("493817") }.signed.base64 == entry.signedEnvelope)
    }
}
