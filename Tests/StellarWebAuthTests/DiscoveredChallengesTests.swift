import Foundation
import Testing
import StellarKeys
import StellarKeystore
import StellarTransactions
import StellarWebAuth
import TestFixtures

/// Challenges from a service found when the first is asked for (`WebAuthService.challenges(at:clientDomain:)`):
/// a sign-in made from what was typed finds its key before anything is fetched.
@Suite struct DiscoveredChallengesTests {
    final class Silent: SigningPresenter {
        var asked = 0
        var personIsPresent: Bool { false }
        var showsSummaries: Bool { true }
        func show(_ summary: SigningSummary, for source: KeySource) { asked += 1 }
        func agrees(to consent: SigningConsent) throws -> Bool { asked += 1; return false }
        func pin(for identity: IdentityName, source: KeySource) throws -> PIN { asked += 1; return try PIN("270419") }
    }

    /// A service nothing listens on: the sign-in of an identity that does not exist fails on the identity, not on
    /// the connection, since nothing is fetched before the key is found; an existing identity's fails on the fetch.
    @Test func theKeyIsFoundBeforeAnythingIsFetched() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let keystore = try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore")
        let runner = SigningRunner(presenter: Silent())
        let nowhere = "http://127.0.0.1:1"
        #expect(throws: VaultError.self) {
            try runner.run(SignIn(from: WebAuthService.challenges(at: nowhere)), as: "alice", in: keystore, keys: .vault)
        }
        #expect(throws: VaultError.self) {
            try runner.run(ContractSignIn(as: "CA", from: ContractWebAuthService.challenges(at: nowhere)), as: "alice", in: keystore, keys: .vault)
        }
        let code = try PIN("270419")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(try KeyPair(secretSeed: WebAuthChallengeFixtures.load().clientSeed))) { _ in code }
        #expect(throws: WebAuthClientError.self) {
            try runner.run(SignIn(from: WebAuthService.challenges(at: nowhere)), as: "alice", in: keystore, keys: .vault)
        }
        #expect(runner.presenter.asked == 0)
    }

    /// A signed challenge is sent back only to the service its challenge came from: none fetched, none is sent.
    @Test func nothingIsSentBackBeforeAChallenge() throws {
        #expect(throws: WebAuthClientError.noChallengeFetched) { try WebAuthService.challenges(at: "example.com").answer([1, 2, 3]) }
        #expect(throws: WebAuthClientError.noChallengeFetched) { try ContractWebAuthService.challenges(at: "example.com").answer([1, 2, 3]) }
        #expect(throws: ContractWebAuthError.notAContract("GA")) { try ContractWebAuthService.challenges(at: "example.com").check(account: "GA") }
    }
}
