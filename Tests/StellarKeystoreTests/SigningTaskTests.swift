import Foundation
import Testing
import StellarKeys
import StellarTransactions
import StellarKeystore
import TestFixtures

/// A keystore with one identity, "alice", whose key is `seed`'s.
struct OneIdentity {
    let directory = TemporaryDirectory()
    let keystore: Keystore
    let pin = try! PIN("270419")
    let key: PublicKey

    init(seed: String) throws {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        keystore = try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore")
        let pair = try KeyPair(secretSeed: seed)
        let code = try PIN("270419")
        _ = try keystore.signUp(name: "alice", kdf: .interactive, key: .imported(pair)) { _ in code }
        key = pair.publicKey
    }

    func run<Task: SigningTask>(_ task: Task, _ presenter: SigningRunnerTests.Recorder) throws -> Task.Outcome {
        try SigningRunner(presenter: presenter).run(task, as: "alice", in: keystore, keys: .vault)
    }
}

/// A transaction as a person gives one (`TransactionSigning`): text, a network's name, account files, flags, and
/// one call that decodes, resolves, reviews, shows and approves, with the rules in the library.
@Suite struct TransactionSigningTests {
    let home = try! OneIdentity(seed: SigningRunnerTests.fixtures.clientSeed)

    static func envelope() throws -> (base64: String, envelope: TransactionEnvelope, network: StellarNetwork) {
        struct Envelopes: Decodable { struct Entry: Decodable { let name, envelope, passphrase: String }; let envelopes: [Entry] }
        let entry = try #require(try Fixtures.load(Envelopes.self, "tx-envelopes.json").envelopes.first)
        return (entry.envelope, try TransactionEnvelope(base64: entry.envelope), try StellarNetwork(passphrase: entry.passphrase))
    }

    /// The envelope's text and a network's name give, in one call, the same envelope a decoded request gives.
    @Test func anEnvelopeIsDecodedResolvedAndSignedInOneCall() throws {
        let (text, envelope, network) = try Self.envelope()
        let presenter = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        let signed = try home.run(TransactionSigning(Array(text.utf8), network: NetworkChoice(passphrase: network.passphrase)), presenter)
        let direct = try home.run(SigningRequest.transaction(envelope, network: network), SigningRunnerTests.Recorder(present: false, pin: home.pin))
        #expect(signed.approval.signed.base64 == direct.signed.base64 && signed.approval.signed.base64 != text)
        #expect(signed.network == network && signed.request == nil && signed.notes.isEmpty)
        #expect(signed.approval.signer.address == home.key.accountID)
        #expect(presenter.shown.count == 1 && presenter.pinsAsked == ["alice"])
    }

    /// An envelope needs a network named; none is refused before anything is shown or asked. The environment names
    /// one as stellar-cli reads it.
    @Test func anEnvelopeWithNoNetworkNamedIsRefusedBeforeThePIN() throws {
        let (text, _, _) = try Self.envelope()
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: TransactionError.noNetwork) {
            try home.run(TransactionSigning(Array(text.utf8), network: NetworkChoice(environment: ["HOME": "/tmp"])), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
        let fromEnvironment = try home.run(TransactionSigning(Array(text.utf8), network: NetworkChoice(environment: ["STELLAR_NETWORK": "testnet"])),
                                           SigningRunnerTests.Recorder(present: false, pin: home.pin))
        #expect(fromEnvironment.network == .testnet)
    }

    /// A name comes before the environment; a name and a passphrase that disagree are refused, never one picked.
    @Test func aNetworkChoiceIsNeverGuessed() throws {
        #expect(try NetworkChoice(name: "public", environment: ["STELLAR_NETWORK": "testnet"]).network() == .public)
        #expect(try NetworkChoice(passphrase: StellarNetwork.testnet.passphrase).network() == .testnet)
        #expect(try NetworkChoice(name: "testnet", passphrase: StellarNetwork.testnet.passphrase).network() == .testnet)
        #expect(throws: TransactionError.conflictingNetworks) {
            try NetworkChoice(name: "public", passphrase: StellarNetwork.testnet.passphrase).network()
        }
        #expect(try NetworkChoice().networkIfNamed() == nil)
        #expect(throws: TransactionError.noNetwork) { try NetworkChoice().network() }
    }

    /// Only a SEP-7 request has a callback: an envelope for one is refused before its network is even resolved.
    @Test func anEnvelopeHasNoCallback() throws {
        let (text, _, _) = try Self.envelope()
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: TransactionRequestError.noCallback) {
            try home.run(TransactionSigning(Array(text.utf8), network: NetworkChoice(), forCallback: true), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }

    /// A SEP-7 request is told apart from an envelope by the library: with no network named, its own is signed
    /// for only after a person agrees; a network named that is not the request's is refused before any question.
    @Test func aRequestsNetworkNeedsAConsentOrTheNetworkNamed() throws {
        let (_, envelope, network) = try Self.envelope()
        let uri = Array(try TransactionRequest(envelope: envelope, network: network).uri.utf8)
        let yes = SigningRunnerTests.Recorder(present: true, answer: true, pin: home.pin)
        let signed = try home.run(TransactionSigning(uri, network: NetworkChoice()), yes)
        #expect(signed.request?.origin == .unnamed && signed.network == network)
        #expect(yes.questions.count == 1 && yes.questions[0].requestedNetwork != nil && yes.pinsAsked == ["alice"])
        let direct = try home.run(SigningRequest.transaction(envelope, network: network), SigningRunnerTests.Recorder(present: false, pin: home.pin))
        #expect(signed.approval.signed.base64 == direct.signed.base64)

        let other = SigningRunnerTests.Recorder(present: true, answer: true, pin: home.pin)
        #expect(throws: TransactionRequestError.self) { try home.run(TransactionSigning(uri, network: NetworkChoice(name: "public")), other) }
        #expect(other.shown.isEmpty && other.questions.isEmpty && other.pinsAsked.isEmpty)
    }

    /// A request that names its origin is signed only once its origin is checked: origins that are never looked
    /// up refuse it, and one whose callback is asked for must have one; nothing is shown or asked.
    @Test func aRequestsOriginAndCallbackAreCheckedFirst() throws {
        let (_, envelope, network) = try Self.envelope()
        let named = Array(try TransactionRequest(envelope: envelope, network: network, originDomain: "example.com",
                                                 signature: [UInt8](repeating: 1, count: 64)).uri.utf8)
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: TransactionRequestError.noSigningKey("example.com")) {
            try home.run(TransactionSigning(named, network: NetworkChoice(passphrase: network.passphrase)), presenter)
        }
        let unnamed = Array(try TransactionRequest(envelope: envelope, network: network).uri.utf8)
        #expect(throws: TransactionRequestError.noCallback) {
            try home.run(TransactionSigning(unnamed, network: NetworkChoice(passphrase: network.passphrase), forCallback: true), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }

    /// The accounts' files are read by the library, strictly, before anything is shown: one that is not an
    /// account's JSON is refused by its name.
    @Test func anAccountFileIsReadBeforeAnythingIsShown() throws {
        let (text, _, network) = try Self.envelope()
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: AccountSignersError.self) {
            try home.run(TransactionSigning(Array(text.utf8), network: NetworkChoice(passphrase: network.passphrase),
                                            accountFiles: [(source: "accounts/alice.json", bytes: Array("[]".utf8))]), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }

    /// Trimming is the request's: an envelope whose accounts are not all known cannot be trimmed, and is refused
    /// before the PIN.
    @Test func trimmingNeedsEveryAccountBeforeThePIN() throws {
        let (text, _, network) = try Self.envelope()
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        let error = #expect(throws: TrimError.self) {
            try home.run(TransactionSigning(Array(text.utf8), network: NetworkChoice(passphrase: network.passphrase), trimming: true), presenter)
        }
        guard case .accountsUnknown(let accounts)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(!accounts.isEmpty && presenter.pinsAsked.isEmpty)
    }

    /// Shown without a key, an envelope gives the summary a signing of it shows, on the network named; no
    /// network named is refused, and so is text that is not an envelope.
    @Test func anEnvelopeIsShownWithoutAKeyInOneCall() throws {
        let (text, envelope, network) = try Self.envelope()
        let (summary, resolved) = try TransactionShowing(Array(text.utf8), network: NetworkChoice(passphrase: network.passphrase)).summary()
        #expect(resolved == network && summary.transaction?.hash == Hex.string(envelope.hash(on: network)))
        #expect(summary.text == SigningSummary.transaction(envelope, on: network, signingAs: nil, accounts: []).text)
        #expect(throws: TransactionError.noNetwork) { try TransactionShowing(Array(text.utf8), network: NetworkChoice()).summary() }
        #expect(throws: TransactionError.self) { try TransactionShowing(Array("AAAA".utf8), network: NetworkChoice(name: "testnet")).summary() }
    }

    /// A batch's network is resolved by the library as well.
    @Test func aBatchNeedsANetworkNamed() throws {
        let presenter = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        #expect(throws: TransactionError.noNetwork) { try home.run(TransactionBatchSigning(network: NetworkChoice()), presenter) }
        #expect(presenter.pinsAsked.isEmpty)
        let batch = try home.run(TransactionBatchSigning(network: NetworkChoice(name: "testnet")), presenter)
        #expect(batch.signer.address == home.key.accountID && presenter.pinsAsked == ["alice"])
    }
}

/// A sign-in as a person asks for one (`SignIn`, `ContractSignIn`): the challenge given as text with what it must
/// be, parsed, checked, reviewed and signed in one call.
@Suite struct SignInTaskTests {
    static let fixtures = try! WebAuthChallengeFixtures.load()
    static let contractFixtures = SigningRunnerTests.fixtures

    /// A given SEP-10 challenge, its server key and network as typed: the answer is stellar-sdk's signed challenge,
    /// and the signer the key's account.
    @Test func aGivenChallengeIsSignedInOneCall() throws {
        let home = try OneIdentity(seed: Self.fixtures.clientSeed)
        let fixture = try #require(Self.fixtures.cases.first { $0.name == "valid" })
        let presenter = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        let signedIn = try home.run(SignIn.given(fixture.challenge, serverKey: fixture.serverKey, homeDomain: fixture.homeDomain,
                                                 webAuthDomain: fixture.webAuthDomain, network: NetworkChoice(name: fixture.network),
                                                 now: fixture.now), presenter)
        #expect(Base64.string(signedIn.answer) == fixture.signed)
        #expect(signedIn.signer == home.key.accountID && presenter.shown.count == 1 && presenter.pinsAsked == ["alice"])
    }

    /// What was typed is parsed by the library, before anything is shown: a server key that is not a G… address, a
    /// network not named, a client domain's identity that is no identity's name.
    @Test func whatWasTypedIsParsedBeforeThePIN() throws {
        let home = try OneIdentity(seed: Self.fixtures.clientSeed)
        let fixture = try #require(Self.fixtures.cases.first { $0.name == "valid" })
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: StrKeyError.self) {
            try home.run(SignIn.given(fixture.challenge, serverKey: "GNOTAKEY", homeDomain: fixture.homeDomain, webAuthDomain: fixture.webAuthDomain,
                                      network: NetworkChoice(name: fixture.network), now: fixture.now), presenter)
        }
        #expect(throws: TransactionError.noNetwork) {
            try home.run(SignIn.given(fixture.challenge, serverKey: fixture.serverKey, homeDomain: fixture.homeDomain,
                                      webAuthDomain: fixture.webAuthDomain, network: NetworkChoice(), now: fixture.now), presenter)
        }
        #expect(throws: VaultError.self) {
            try home.run(SignIn.given(fixture.challenge, serverKey: fixture.serverKey, homeDomain: fixture.homeDomain,
                                      webAuthDomain: fixture.webAuthDomain, network: NetworkChoice(name: fixture.network),
                                      clientDomainIdentity: "Not A Name", now: fixture.now), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }

    /// A given SEP-45 challenge as the contract account from its parts: a V1 entry is signed when allowed up
    /// front, as stellar-sdk signs it; not allowed and nobody to ask, it is refused before the PIN.
    @Test func aGivenContractChallengeIsSignedInOneCall() throws {
        let home = try OneIdentity(seed: Self.contractFixtures.clientSeed)
        let fixture = try #require(Self.contractFixtures.cases.first { $0.name == "valid-v1" })
        func signIn(allowing: AuthorizationRisks) -> ContractSignIn<GivenContractWebAuthChallenge> {
            ContractSignIn.given(fixture.challenge, as: fixture.clientAccount, serverKey: fixture.serverKey, webAuthContract: fixture.webAuthContract,
                                 homeDomain: fixture.homeDomain, webAuthDomain: fixture.webAuthDomain, network: NetworkChoice(name: fixture.network),
                                 allowing: allowing)
        }
        let allowed = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        let signedIn = try home.run(signIn(allowing: .notAddressBound), allowed)
        #expect(Base64.string(signedIn.answer) == fixture.signed!.entries && signedIn.signer == home.key.accountID)
        let refused = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        #expect(throws: AuthorizationError.notAddressBound(entries: [1])) { try home.run(signIn(allowing: []), refused) }
        #expect(refused.pinsAsked.isEmpty)
    }

    /// The account is built from its parts by the library: a verifier without context rules is refused.
    @Test func aContractAccountIsBuiltFromItsParts() throws {
        let home = try OneIdentity(seed: Self.contractFixtures.clientSeed)
        let fixture = try #require(Self.contractFixtures.cases.first { $0.name == "valid" })
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: SmartAccountError.self) {
            try home.run(ContractSignIn.given(fixture.challenge, as: fixture.clientAccount, verifier: Self.contractFixtures.verifier,
                                              serverKey: fixture.serverKey, webAuthContract: fixture.webAuthContract, homeDomain: fixture.homeDomain,
                                              webAuthDomain: fixture.webAuthDomain, network: NetworkChoice(name: fixture.network)), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }
}

/// Soroban authorizations as a person gives them (`AuthorizationEntriesSigning`, `AuthorizationPreimageSigning`):
/// text, a network's name, the account's parts, decoded and built by the library in one call.
@Suite struct AuthorizationsSigningTests {
    struct Case: Decodable { let name, network, preimage, signature: String }
    struct Envelope: Decodable { let name, network, envelope: String; let expiration: UInt32; let signed: String? }
    struct File: Decodable { let signer: String; let cases: [Case]; let envelopes: [Envelope] }
    static let file = try! Fixtures.load(File.self, "auth-preimages.json")

    /// The fixtures' signer is the SEP-10 fixtures' client.
    let home = try! OneIdentity(seed: WebAuthChallengeFixtures.load().clientSeed)

    /// An envelope's entries for the key's own account come out as stellar-sdk's `authorize_entry` made them, on
    /// the network named, in one call.
    @Test func anEnvelopesEntriesAreSignedInOneCall() throws {
        #expect(home.key.accountID == Self.file.signer)
        let fixture = try #require(Self.file.envelopes.first { $0.name == "v2" })
        let presenter = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        let signed = try home.run(AuthorizationEntriesSigning(Array(fixture.envelope.utf8), network: NetworkChoice(name: fixture.network),
                                                              expirationLedger: fixture.expiration), presenter)
        #expect(signed.approval.signed.base64 == fixture.signed && signed.network == .testnet)
        #expect(presenter.shown.count == 1 && presenter.pinsAsked == ["alice"])
    }

    /// A preimage is decoded and signed as stellar-sdk signs it; with no network named, nothing is shown or asked.
    @Test func aPreimageIsSignedInOneCall() throws {
        let fixture = try #require(Self.file.cases.first { $0.name == "v2 sep41 transfer" })
        let presenter = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        let approval = try home.run(AuthorizationPreimageSigning(Array(fixture.preimage.utf8), network: NetworkChoice(name: fixture.network)), presenter)
        #expect(Hex.string(approval.signed) == fixture.signature)
        let none = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: TransactionError.noNetwork) { try home.run(AuthorizationPreimageSigning(Array(fixture.preimage.utf8), network: NetworkChoice()), none) }
        #expect(none.shown.isEmpty && none.pinsAsked.isEmpty)
    }

    /// The account signed for is built from its parts by the library, before anything is shown: a verifier
    /// without its context rules is refused.
    @Test func theAccountIsBuiltFromItsPartsBeforeThePIN() throws {
        let fixture = try #require(Self.file.envelopes.first { $0.name == "v2" })
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        #expect(throws: SmartAccountError.self) {
            try home.run(AuthorizationEntriesSigning(Array(fixture.envelope.utf8), network: NetworkChoice(name: fixture.network),
                                                     expirationLedger: fixture.expiration, for: "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC",
                                                     verifier: "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC"), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }
}

/// A host's request as stellar-cli's signer plugin sends it (`HostSigning`): its fields decoded, what is signed
/// rebuilt and checked against what the host said, in one call; the host asks nobody mid-way.
@Suite struct HostSigningTests {
    let home = try! OneIdentity(seed: WebAuthChallengeFixtures.load().clientSeed)

    /// A transaction with the hash the host gave: the answer is the decorated signature the signed envelope
    /// carries; another hash, or one that is not hex, is the review's refusal before the PIN; a field missing is
    /// said by its name.
    @Test func aHostsTransactionIsCheckedAgainstItsHash() throws {
        let (text, envelope, network) = try TransactionSigningTests.envelope()
        let hash = Hex.string(envelope.hash(on: network))
        let presenter = SigningRunnerTests.Recorder(present: false, pin: home.pin)
        let answer = try home.run(HostSigning(mode: "sign_tx", networkPassphrase: network.passphrase,
                                              fields: ["tx_env_xdr": text, "tx_hash": hash]), presenter)
        let signed = try home.run(SigningRequest.transaction(envelope, network: network), SigningRunnerTests.Recorder(present: false, pin: home.pin))
        guard case .decoratedSignature(let decorated) = answer else { Issue.record("\(answer)"); return }
        #expect(decorated.count == 72 && Array(decorated.suffix(64)) == signed.signed.signature)
        let refused = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        for wrong in [String(repeating: "a", count: 64), "not hex"] {
            #expect(throws: ReviewError.hashMismatch) {
                try home.run(HostSigning(mode: "sign_tx", networkPassphrase: network.passphrase, fields: ["tx_env_xdr": text, "tx_hash": wrong]), refused)
            }
        }
        #expect(throws: HostRequestError.missing("tx_hash")) {
            try home.run(HostSigning(mode: "sign_tx", networkPassphrase: network.passphrase, fields: ["tx_env_xdr": text]), refused)
        }
        #expect(throws: HostRequestError.unknownMode("sign_everything")) {
            try home.run(HostSigning(mode: "sign_everything", networkPassphrase: network.passphrase, fields: [:]), refused)
        }
        #expect(refused.shown.isEmpty && refused.pinsAsked.isEmpty)
    }

    /// An authorization's fields are decoded by the library: a nonce missing, an address that is not base64, each
    /// said by its name before anything is shown.
    @Test func aHostsAuthorizationFieldsAreDecodedFirst() throws {
        let presenter = SigningRunnerTests.Recorder(present: true, pin: home.pin)
        let testnet = StellarNetwork.testnet.passphrase
        #expect(throws: HostRequestError.missing("nonce")) {
            try home.run(HostSigning(mode: "sign_auth", networkPassphrase: testnet, fields: ["root_invocation": "AAAA"]), presenter)
        }
        #expect(throws: HostRequestError.notBase64("root_invocation")) {
            try home.run(HostSigning(mode: "sign_auth", networkPassphrase: testnet, fields: ["root_invocation": "%%%"], nonce: 1,
                                     signatureExpirationLedger: 2), presenter)
        }
        #expect(presenter.shown.isEmpty && presenter.pinsAsked.isEmpty)
    }
}
