import Foundation
import Testing
import StellarKeys
import StellarTransactions
import StellarKeystore
import StellarWebAuth
import TestFixtures

/// A sign-in in one call (`SigningRunner.signIn`), with the challenge given (nothing fetched): checked against
/// what is expected with the key's account, shown, signed; what it refuses is refused before any PIN.
@Suite struct SignInTests {
    final class Recorder: SigningPresenter {
        let personIsPresent: Bool
        let showsSummaries = true
        let code: PIN
        var shown = 0
        var pinsAsked = 0

        init(present: Bool, pin: PIN) {
            personIsPresent = present
            code = pin
        }

        func show(_ summary: SigningSummary, for source: KeySource) { shown += 1 }
        func agrees(to consent: SigningConsent) throws -> Bool { true }
        func pin(for identity: IdentityName, source: KeySource) throws -> PIN { pinsAsked += 1; return code }
    }

    static let challenges = try! WebAuthChallengeFixtures.load()
    static let contractChallenges = try! ContractWebAuthChallengeFixtures.load()

    let directory = TemporaryDirectory()
    let pin = try! PIN("270419")

    /// A keystore holding `seed` as alice.
    func key(_ seed: String) throws -> SigningKey {
        let keystore = try Keystore(directory: directory.path + "/keys")
        let code = try PIN("270419")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(try KeyPair(secretSeed: seed))) { _ in code }
        return try keystore.signInKey(as: "alice")
    }

    /// A given SEP-10 challenge: the expectation is completed with the key's account, and the signed challenge
    /// is stellar-sdk's, after the summary and one PIN.
    @Test func aGivenChallengeIsCheckedForTheKeysAccountAndSigned() throws {
        let fixture = try #require(Self.challenges.cases.first { $0.name == "valid" })
        let presenter = Recorder(present: false, pin: pin)
        let signed = try SigningRunner(presenter: presenter).signIn(
            with: try key(Self.challenges.clientSeed),
            from: GivenWebAuthChallenge(fixture.challenge, serverKey: try PublicKey(accountID: fixture.serverKey), homeDomain: fixture.homeDomain,
                                        webAuthDomain: fixture.webAuthDomain, network: try StellarNetwork(passphrase: fixture.networkPassphrase),
                                        clientDomain: nil, now: fixture.now))
        #expect(Base64.string(signed) == fixture.signed)
        #expect(presenter.shown == 1 && presenter.pinsAsked == 1)
    }

    /// A SEP-45 challenge given, with an expiration after the server's: refused by the library before any summary
    /// or PIN; a V1 one with nobody to ask is refused the same way.
    @Test func aContractSignInsRefusalsComeBeforeThePIN() throws {
        let fixtures = Self.contractChallenges
        let valid = try #require(fixtures.cases.first { $0.name == "valid" })
        let signingKey = try key(fixtures.clientSeed)
        func expectation(_ fixture: ContractWebAuthChallengeFixtures.Case) throws -> ContractWebAuthExpectation {
            ContractWebAuthExpectation(serverKey: try PublicKey(accountID: fixture.serverKey), webAuthContract: fixture.webAuthContract,
                                       homeDomain: fixture.homeDomain, webAuthDomain: fixture.webAuthDomain, network: .testnet,
                                       clientAccount: fixture.clientAccount, clientDomain: nil)
        }
        let presenter = Recorder(present: false, pin: pin)
        let runner = SigningRunner(presenter: presenter)
        #expect(throws: ContractWebAuthError.self) {
            try runner.signIn(as: try AuthorizationAccount(contract: valid.clientAccount), with: signingKey,
                              from: GivenContractWebAuthChallenge(valid.challenge, expecting: try expectation(valid)), expirationLedger: .max)
        }
        let v1 = try #require(fixtures.cases.first { $0.name == "valid-v1" })
        #expect(throws: AuthorizationError.notAddressBound(entries: [1])) {
            try runner.signIn(as: try AuthorizationAccount(contract: v1.clientAccount), with: signingKey, from: GivenContractWebAuthChallenge(v1.challenge, expecting: try expectation(v1)))
        }
        #expect(presenter.shown == 0 && presenter.pinsAsked == 0)
        // Allowed up front, the same V1 challenge is signed as stellar-sdk signs it.
        let result = try runner.signIn(as: try AuthorizationAccount(contract: v1.clientAccount), with: signingKey,
                                       from: GivenContractWebAuthChallenge(v1.challenge, expecting: try expectation(v1)), allowing: .notAddressBound)
        #expect(Base64.string(result) == v1.signed?.entries)
        #expect(presenter.pinsAsked == 1)
    }
}
