import Foundation
import Testing
import StellarKeys
import StellarTransactions
import StellarKeystore
import TestFixtures

/// A SEP-45 sign-in through the review (`SigningRequest.contractSignIn`): what it signs is byte for byte what
/// stellar-sdk's authorize_entry signs (fixtures/contract-web-auth-challenges.json), and every refusal comes before
/// any PIN is asked.
@Suite struct ContractSignInReviewTests {
    static let fixtures = try! ContractWebAuthChallengeFixtures.load()
    static func named(_ name: String) -> ContractWebAuthChallengeFixtures.Case { fixtures.cases.first { $0.name == name }! }

    let directory = TemporaryDirectory()
    let keystore: Keystore
    let pin = try! PIN("270419")
    /// The fixtures' client key, and the client domain's.
    let key: PublicKey
    let domainKey: PublicKey

    init() throws {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        keystore = try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore")
        let client = try KeyPair(secretSeed: Self.fixtures.clientSeed), domain = try KeyPair(secretSeed: Self.fixtures.clientDomainSeed)
        let code = try PIN("270419")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(client)) { _ in code }
        _ = try keystore.signUp(name: "domain", kdf: .interactive, key: .imported(domain)) { _ in code }
        key = client.publicKey
        domainKey = domain.publicKey
    }

    func challenge(_ fixture: ContractWebAuthChallengeFixtures.Case) throws -> ContractWebAuthChallenge {
        let expected = ContractWebAuthExpectation(
            serverKey: try PublicKey(accountID: fixture.serverKey), webAuthContract: fixture.webAuthContract, homeDomain: fixture.homeDomain,
            webAuthDomain: fixture.webAuthDomain, network: .testnet, clientAccount: fixture.clientAccount,
            clientDomain: try fixture.clientDomainKey.map { .init(domain: fixture.clientDomain!, key: try PublicKey(accountID: $0)) })
        return try ContractWebAuthChallenge(base64: fixture.challenge, expecting: expected)
    }

    var smartAccountRules: SmartAccountRules { get throws { try SmartAccountRules(verifier: Self.fixtures.verifier, contextRuleIDs: Self.fixtures.contextRuleIDs) } }

    @Test(arguments: ["valid", "valid-v1", "valid-server-first"])
    func theSignedEntriesAreStellarSDKs(_ name: String) throws {
        let fixture = Self.named(name)
        let challenge = try challenge(fixture)
        let plain = try keystore.review(.contractSignIn(challenge, as: try .contractAccount(fixture.clientAccount, key: key),
                                                        allowing: .notAddressBound), as: "alice")
        #expect(plain.consentNeeded == nil)
        #expect(Base64.string(try plain.approve { pin }.signed) == fixture.signed!.entries)
        let smart = try keystore.review(.contractSignIn(challenge, as: try .smartAccount(fixture.clientAccount, key: key, rules: try smartAccountRules),
                                                        allowing: .notAddressBound), as: "alice")
        #expect(Base64.string(try smart.approve { pin }.signed) == fixture.signedSmartAccount!.entries)
    }

    @Test func theClientDomainSignsItsOwnEntry() throws {
        let fixture = Self.named("valid-client-domain")
        let review = try keystore.review(.contractSignIn(try challenge(fixture), as: try .contractAccount(fixture.clientAccount, key: key),
                                                         clientDomainIdentity: "domain"), as: "alice")
        var asked: [IdentityName] = []
        let signed = try review.approve { name in
            asked.append(name)
            return pin
        }.signed
        #expect(Base64.string(signed) == fixture.signed!.entries)
        #expect(asked == ["alice", "domain"])
    }

    /// Each is refused by the review or before the key opens: the PIN is never asked.
    @Test func aWrongSignerIsRefusedBeforeAnyPIN() throws {
        let fixture = Self.named("valid"), domainFixture = Self.named("valid-client-domain")
        let domainChallenge = try challenge(domainFixture)
        let challenge = try challenge(fixture)
        let other = KeyPair.random().publicKey
        func refusal(_ request: SigningRequest<[UInt8]>) -> (any Error)? {
            do {
                let review = try keystore.review(request, as: "alice")
                _ = try review.approve { Issue.record("the PIN was asked"); return pin }
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(.contractSignIn(challenge, as: try .contractAccount(fixture.webAuthContract, key: key)))
                as? ContractSignInError == .notTheAccount(signer: fixture.webAuthContract, account: fixture.clientAccount))
        #expect(refusal(.contractSignIn(challenge, as: try .contractAccount(fixture.clientAccount, key: other)))
                as? ContractSignInError == .notThisKey(signer: other.accountID, key: key.accountID))
        let twoRules = try SmartAccountRules(verifier: Self.fixtures.verifier, contextRuleIDs: [0, 1])
        #expect(refusal(.contractSignIn(challenge, as: try .smartAccount(fixture.clientAccount, key: key, rules: twoRules)))
                as? AuthorizationError == .contextRulesMismatch(entry: challenge.clientEntry + 1, contexts: 1, given: 2))
        #expect(refusal(.contractSignIn(domainChallenge, as: try .contractAccount(fixture.clientAccount, key: key)))
                as? WebAuthSigningError == .clientDomainSignerMismatch)
        #expect(refusal(.contractSignIn(challenge, as: try .contractAccount(fixture.clientAccount, key: key), clientDomainIdentity: "domain"))
                as? WebAuthSigningError == .clientDomainSignerMismatch)
        #expect(refusal(.contractSignIn(domainChallenge, as: try .contractAccount(fixture.clientAccount, key: key), clientDomainIdentity: "alice"))
                as? WebAuthSigningError == .notTheClientDomainKey(signer: key.accountID, key: domainKey.accountID))
    }

    /// A V1 entry binds no address (CAP-71-02): its review asks for consent, without which nothing is signed and
    /// no PIN asked; with it, or with `.notAddressBound` allowed up front, it is signed.
    @Test func aV1ChallengeNeedsConsent() throws {
        let fixture = Self.named("valid-v1")
        let request = SigningRequest<[UInt8]>.contractSignIn(try challenge(fixture), as: try .contractAccount(fixture.clientAccount, key: key))
        let review = try keystore.review(request, as: "alice")
        let consentNeeded = review.consentNeeded
        let needed = try #require(consentNeeded)
        #expect(needed.risks == .notAddressBound && needed.notAddressBound == [1])
        #expect(review.summary.warnings.count == 1 && review.summary.warnings[0].contains("binds no address"))
        do {
            _ = try review.approve { Issue.record("the PIN was asked"); return pin }
            Issue.record("a V1 entry was signed without consent")
        } catch {
            #expect(error as? AuthorizationError == .notAddressBound(entries: [1]))
        }
        let again = try keystore.review(request, as: "alice")
        #expect(Base64.string(try again.approve(consent: needed) { pin }.signed) == fixture.signed!.entries)
    }

    /// The client domain's entry alone is V1: its signature too binds no address, and needs the same consent.
    @Test func aV1ClientDomainEntryNeedsConsentToo() throws {
        let fixture = Self.named("valid-client-domain-v1-entry")
        let challenge = try challenge(fixture)
        let request = SigningRequest<[UInt8]>.contractSignIn(challenge, as: try .contractAccount(fixture.clientAccount, key: key),
                                                             clientDomainIdentity: "domain")
        let review = try keystore.review(request, as: "alice")
        let consentNeeded = review.consentNeeded
        let needed = try #require(consentNeeded)
        #expect(needed.notAddressBound == [try #require(challenge.clientDomainEntry) + 1])
        #expect(Base64.string(try review.approve(consent: needed, pinFor: { _ in pin }).signed) == fixture.signed!.entries)
    }

    @Test func theSummaryNamesTheSmartAccountsSignerAndRules() throws {
        let fixture = Self.named("valid")
        let review = try keystore.review(.contractSignIn(try challenge(fixture), as: try .smartAccount(fixture.clientAccount, key: key,
                                                                                                        rules: try smartAccountRules)), as: "alice")
        #expect(review.summary.title == "Sign in to \"anchor.example\" as \(fixture.clientAccount)")
        #expect(review.summary.lines.prefix(2) == [
            "  signer      alice (\(key.accountID)), on behalf of \(fixture.clientAccount)",
            "  as          the OpenZeppelin smart account's signer External(\(Self.fixtures.verifier), this key), context rule 0",
        ])
        #expect(review.summary.warnings.isEmpty && review.summary.network == .testnet)
    }
}
