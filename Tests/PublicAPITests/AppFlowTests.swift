import Foundation
import Testing
import StellarKeystore  // not @testable: only public API, so a visibility mistake is a build error here

/// The sign-up / sign-in flow of a SwiftBasicPay-style app, written exactly as an app would write it.
@Suite struct AppFlowTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-app-\(UUID().uuidString)").path

    func cleanUp() { try? FileManager.default.removeItem(atPath: directory); try? FileManager.default.removeItem(atPath: directory + "-run") }

    @Test func signUpSignInSignChangePINAndSessions() throws {
        defer { cleanUp() }
        try FileManager.default.createDirectory(atPath: directory + "-run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "-run/keystore")
        let created = try keystore.signUp(name: "alice", kdf: .interactive) { _ in try PIN("493817") }
        let signer = try keystore.signIn(name: "alice") { try PIN("493817") }
        #expect(signer.address == created.address && signer.address.hasPrefix("G"))
        let review = try keystore.review(.message(Array("hi".utf8)), as: "alice")
        #expect(review.keySource == .vault(needsPIN: true) && review.signer.address == created.address)
        let signature = try review.approve { try PIN("493817") }.signed
        #expect(try PublicKey(accountID: signer.address).isValidMessageSignature(signature, for: Array("hi".utf8)))
        try keystore.changePIN(name: "alice", checkingCurrentFirst: false, from: { try PIN("493817") }, to: { try PIN("860271") })
        #expect(throws: VaultError.self) { try keystore.signIn(name: "alice") { try PIN("493817") } }
        let token = try keystore.startSession(name: "alice", ttl: .seconds(900)) { try PIN("860271") }
        let session = KeySources.automatic(agent: nil, session: token.stringValue, pinAvailable: false)
        #expect(try keystore.signingKey(keys: session).source == .session)
        try keystore.endSession(token)
        #expect(throws: SessionError.ended) { try keystore.signingKey(keys: session) }
        #expect(try keystore.identities().map(\.address) == [signer.address])
    }

    @Test func aPhraseIdentityByNameAsText() throws {
        defer { cleanUp() }
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "-run/keystore")
        let created = try keystore.signUp(name: "bob", kdf: .interactive, key: .phrase(words: 24)) { _ in try PIN("493817") }
        #expect(created.phrase?.wordCount == 24)
        // A name a person typed is checked (a literal in the code is the programmer's, and traps if invalid).
        let typed = "Bob"
        #expect(throws: VaultError.invalidName("Bob")) { try keystore.signIn(name: IdentityName(typed)) { try PIN("493817") } }
    }

    @Test func asyncSignUpAndSignInRunOffTheCallersActor() async throws {
        defer { cleanUp() }
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "-run/keystore")
        let created = try await keystore.signUp(name: "bob", pin: PIN("493817"), kdf: .interactive)
        let signer = try await keystore.signIn(name: "bob", pin: PIN("493817"))
        #expect(signer.address == created.address)
    }
}

/// An app's signatures are stellar-sdk's, byte for byte (fixtures/sep53-stellar-sdk.json, made by stellar-sdk's
/// own `Keypair.sign_message`).
@Suite struct StellarSDKAgreementTests {
    struct Fixture: Decodable {
        struct Case: Decodable { let message: String?; let messageBase64: String?; let signatureBase64: String }
        let seed, address: String
        let cases: [Case]
    }

    @Test func everySignatureMatchesStellarSDKs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: root.appendingPathComponent("fixtures/sep53-stellar-sdk.json")))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-app-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "/run")
        _ = try keystore.signUp(name: IdentityName("imported"), kdf: .interactive, key: .imported(KeyPair(secretSeed: fixture.seed))) { _ in try PIN("493817") }
        #expect(try keystore.address(of: "imported") == fixture.address)
        #expect(fixture.cases.count == 9)
        for item in fixture.cases {
            let message = item.message.map { Array($0.utf8) } ?? Array(Data(base64Encoded: item.messageBase64!)!)
            let signature = try keystore.review(.message(message), as: "imported").approve { try PIN("493817") }.signed
            #expect(Data(signature).base64EncodedString() == item.signatureBase64, "\(item.message ?? "binary")")
        }
    }
}

/// docs/LIBRARY.md's transaction snippet, with public API only.
@Suite struct TransactionAppFlowTests {
    @Test func signATransactionAsTheGuideShows() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/tx-envelopes.json")
        struct File: Decodable {
            struct Entry: Decodable { let network, envelope, signed: String }
            struct Signer: Decodable { let secretSeed: String }
            let envelopes: [Entry]
            let signer: Signer
        }
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: fixtures))
        let fixture = try #require(file.envelopes.first { $0.network == "testnet" })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-app-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keystore = try Keystore(directory: directory, sessionDirectory: directory + "/run")
        _ = try keystore.signUp(name: IdentityName("alice"), kdf: .interactive, key: .imported(KeyPair(secretSeed: file.signer.secretSeed))) { _ in try PIN("493817") }
        let envelope = try TransactionEnvelope(base64: fixture.envelope)
        let review = try keystore.review(.transaction(envelope, network: .testnet), as: "alice")
        #expect(!review.summary.text.isEmpty && review.summary.network == .testnet)
        let signed = try review.approve { try PIN("493817") }.signed
        #expect(signed.base64 == fixture.signed && !signed.wasAlreadySigned)
        #expect(try StellarNetwork(environment: ["STELLAR_NETWORK": "testnet"]) == .testnet)
        #expect(try StellarNetwork(environment: [:]) == nil)
        #expect(throws: TransactionError.conflictingNetworks) {
            try StellarNetwork(environment: ["STELLAR_NETWORK": "testnet", "STELLAR_NETWORK_PASSPHRASE": StellarNetwork.public.passphrase])
        }
    }
}
