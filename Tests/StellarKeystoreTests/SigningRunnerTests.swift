import Foundation
import Testing
import StellarKeys
import StellarTransactions
import StellarKeystore
import TestFixtures

/// The one signing conversation (`SigningRunner`): when the summary is shown, when a consent may be asked, and
/// that nothing is asked (no PIN, no yes) where the rules refuse. The presenter here records what it was told.
@Suite struct SigningRunnerTests {
    final class Recorder: SigningPresenter {
        var personIsPresent: Bool
        var showsSummaries: Bool
        let answer: Bool
        let code: PIN
        var shown: [SigningSummary] = []
        var questions: [SigningConsent] = []
        var pinsAsked: [IdentityName] = []

        init(present: Bool, showsSummaries: Bool = true, answer: Bool = true, pin: PIN) {
            personIsPresent = present
            self.showsSummaries = showsSummaries
            self.answer = answer
            code = pin
        }

        func show(_ summary: SigningSummary, for source: KeySource) { shown.append(summary) }
        func agrees(to consent: SigningConsent) throws -> Bool { questions.append(consent); return answer }
        func pin(for identity: IdentityName, source: KeySource) throws -> PIN { pinsAsked.append(identity); return code }
    }

    static let fixtures = try! ContractWebAuthChallengeFixtures.load()

    let directory = TemporaryDirectory()
    let keystore: Keystore
    let pin = try! PIN("270419")
    let key: PublicKey

    init() throws {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        keystore = try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore")
        let client = try KeyPair(secretSeed: Self.fixtures.clientSeed)
        let code = try PIN("270419")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(client)) { _ in code }
        key = client.publicKey
    }

    func run<Signed>(_ request: SigningRequest<Signed>, _ presenter: Recorder) throws -> Approval<Signed> {
        try SigningRunner(presenter: presenter).run(request, as: "alice", in: keystore, keys: .vault)
    }

    static func envelope() throws -> (TransactionEnvelope, StellarNetwork) {
        struct Envelopes: Decodable { struct Entry: Decodable { let name, envelope, passphrase: String }; let envelopes: [Entry] }
        let entry = try #require(try Fixtures.load(Envelopes.self, "tx-envelopes.json").envelopes.first)
        return (try TransactionEnvelope(base64: entry.envelope), try StellarNetwork(passphrase: entry.passphrase))
    }

    static func v1Preimage() throws -> (AuthorizationPreimage, StellarNetwork) {
        struct Preimages: Decodable { struct Case: Decodable { let name, network, preimage: String }; let cases: [Case] }
        let fixture = try #require(try Fixtures.load(Preimages.self, "auth-preimages.json").cases.first { $0.name.hasPrefix("v1") })
        return (try AuthorizationPreimage(base64: fixture.preimage), try StellarNetwork(named: fixture.network))
    }

    /// Raw bytes, messages and batches (what scripts sign many times a second) are shown only to a person about
    /// to type the PIN; everything else always. A host's request (told its hash) may ask no consent.
    @Test func whenTheSummaryIsShownIsTheRequests() throws {
        let (envelope, network) = try Self.envelope()
        #expect(SigningRequest.payload([1]).summaryShown == .whenPersonTypesPIN)
        #expect(SigningRequest.message([1]).summaryShown == .whenPersonTypesPIN)
        #expect(SigningRequest.payloads(encoding: .base64).summaryShown == .whenPersonTypesPIN)
        #expect(SigningRequest.transactions(network: network).summaryShown == .whenPersonTypesPIN)
        #expect(SigningRequest.transaction(envelope, network: network).summaryShown == .always)
        #expect(SigningRequest.transaction(envelope, network: network).consentMayBeAsked)
        #expect(!SigningRequest.transaction(envelope, network: network, expectedHash: envelope.hash(on: network)).consentMayBeAsked)
    }

    /// A payload's summary: shown to a person about to type the PIN, not to a script (none present), and not when
    /// summaries are not wanted; the PIN is asked once in each case.
    @Test func aPayloadIsShownOnlyToAPersonTypingThePIN() throws {
        for (present, wanted, expected) in [(true, true, 1), (false, true, 0), (true, false, 0)] {
            let presenter = Recorder(present: present, showsSummaries: wanted, pin: pin)
            let approval = try run(.payload([1, 2, 3]), presenter)
            #expect(key.isValidSignature(approval.signed, for: [1, 2, 3]))
            #expect(presenter.shown.count == expected, "present \(present), wanted \(wanted)")
            #expect(presenter.pinsAsked == ["alice"] && presenter.questions.isEmpty)
        }
    }

    /// A transaction's summary is shown whether or not a person is present (a log reads it), unless not wanted.
    @Test func aTransactionIsAlwaysShownUnlessNotWanted() throws {
        let (envelope, network) = try Self.envelope()
        let absent = Recorder(present: false, pin: pin)
        _ = try run(.transaction(envelope, network: network), absent)
        #expect(absent.shown.count == 1 && absent.shown[0].transaction != nil)
        let quiet = Recorder(present: true, showsSummaries: false, pin: pin)
        _ = try run(.transaction(envelope, network: network), quiet)
        #expect(quiet.shown.isEmpty)
    }

    /// A consent is asked after the whole summary (shown even when summaries are not wanted), of a person about to
    /// type the PIN; a yes signs, a no is the refusal, and nobody present is the refusal with nothing shown or asked.
    @Test func aConsentIsAskedOnlyOfAPersonTypingThePIN() throws {
        let fixture = try #require(Self.fixtures.cases.first { $0.name == "valid-v1" })
        let expected = ContractWebAuthExpectation(
            serverKey: try PublicKey(accountID: fixture.serverKey), webAuthContract: fixture.webAuthContract, homeDomain: fixture.homeDomain,
            webAuthDomain: fixture.webAuthDomain, network: .testnet, clientAccount: fixture.clientAccount, clientDomain: nil)
        let challenge = try ContractWebAuthChallenge(base64: fixture.challenge, expecting: expected)
        let signer = try AuthorizationSigner(key: key, for: try AuthorizationAccount(contract: fixture.clientAccount))
        let request = SigningRequest<[UInt8]>.contractSignIn(challenge, as: signer)

        let yes = Recorder(present: true, showsSummaries: false, answer: true, pin: pin)
        #expect(Base64.string(try run(request, yes).signed) == fixture.signed!.entries)
        #expect(yes.shown.count == 1 && yes.questions.map(\.risks) == [.notAddressBound] && yes.pinsAsked == ["alice"])

        let no = Recorder(present: true, answer: false, pin: pin)
        #expect(throws: AuthorizationError.notAddressBound(entries: [1])) { try run(request, no) }
        #expect(no.shown.count == 1 && no.questions.count == 1 && no.pinsAsked.isEmpty)

        let absent = Recorder(present: false, pin: pin)
        #expect(throws: AuthorizationError.notAddressBound(entries: [1])) { try run(request, absent) }
        #expect(absent.shown.isEmpty && absent.questions.isEmpty && absent.pinsAsked.isEmpty)
    }

    /// A host's V1 preimage (a signer plugin's) is refused before anything is shown or asked, a person present or
    /// not; allowed up front, it is signed.
    @Test func aHostsRequestAsksNoConsent() throws {
        let (preimage, network) = try Self.v1Preimage()
        let present = Recorder(present: true, answer: true, pin: pin)
        #expect(throws: SigningRefusal.notAddressBound) {
            try run(.authorization(preimage, network: network, expectedHash: preimage.hash), present)
        }
        #expect(present.shown.isEmpty && present.questions.isEmpty && present.pinsAsked.isEmpty)
        #expect(SigningRefusal.notAddressBound.message.hasPrefix("The host asks for a V1 authorization signature"))
        let allowed = Recorder(present: false, pin: pin)
        let approval = try run(.authorization(preimage, network: network, allowing: .notAddressBound, expectedHash: preimage.hash), allowed)
        #expect(key.isValidSignature(approval.signed, for: preimage.hash))
        #expect(allowed.shown.count == 1 && allowed.questions.isEmpty)
    }

    /// Trimming needs every account the transaction needs: without them it is refused in the review, before the
    /// summary or the PIN.
    @Test func trimmingWithoutTheAccountsIsRefusedBeforeThePIN() throws {
        let (envelope, network) = try Self.envelope()
        let presenter = Recorder(present: true, pin: pin)
        #expect(throws: TrimError.self) { try run(.transaction(envelope, network: network, accounts: [], trimming: true), presenter) }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
        // Not trimming, the same request signs, and nothing says anything was removed.
        let approval = try run(.transaction(envelope, network: network, accounts: []), presenter)
        #expect(approval.signed.removed == nil && approval.notes.isEmpty)
    }

    /// An envelope this key signed already comes back unchanged, and the approval's note says so, naming the key.
    @Test func anAlreadySignedEnvelopeIsNoted() throws {
        let (envelope, network) = try Self.envelope()
        let first = try run(.transaction(envelope, network: network), Recorder(present: false, pin: pin))
        let again = try run(.transaction(try TransactionEnvelope(xdr: first.signed.envelope), network: network), Recorder(present: false, pin: pin))
        #expect(again.signed.wasAlreadySigned && again.signed.envelope == first.signed.envelope)
        #expect(again.notes == ["the envelope already holds a valid signature by \(key.accountID); printed unchanged (a second one would make the network reject it)"])
    }
}
