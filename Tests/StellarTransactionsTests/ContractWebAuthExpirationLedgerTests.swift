import StellarKeys
import StellarTransactions
import TestFixtures
import Testing

extension SEP45StockChallengeFixtures.Case: CustomTestStringConvertible {
    public var testDescription: String { name }
}

extension SEP45StockChallengeFixtures.Case {
    func verify() throws -> ContractWebAuthChallenge {
        let expectation = try ContractWebAuthExpectation(
            serverKey: PublicKey(accountID: serverKey), webAuthContract: webAuthContract, homeDomain: homeDomain,
            webAuthDomain: webAuthDomain, network: StellarNetwork(named: network), clientAccount: clientAccount,
            clientDomain: try clientDomain.map { .init(domain: $0, key: try PublicKey(accountID: clientDomainKey!)) })
        return try ContractWebAuthChallenge(base64: challenge, serverNetworkPassphrase: networkPassphrase, expecting: expectation)
    }
}

/// The ledger through which a SEP-45 sign-in's signatures are valid, which SEP-45 leaves to the client: against
/// challenges made by stellar-sdk 16.1.1's own build_challenge_authorization_entries, unchanged, which leave the
/// client's entries at 0 (fixtures/make-sep45-stock-challenges.py).
@Suite struct ContractWebAuthExpirationLedgerTests {
    static let fixtures = try! SEP45StockChallengeFixtures.load()
    static let key = try! KeyPair(secretSeed: fixtures.clientSeed)
    static let domainKey = try! KeyPair(secretSeed: fixtures.clientDomainSeed)

    /// The account's entry signed here, by keystore's own signing code, through `ledger`.
    func clientEntry(_ challenge: ContractWebAuthChallenge, through ledger: UInt32) throws -> [UInt8] {
        let signer = try AuthorizationSigner.contractAccount(challenge.expectation.clientAccount, key: Self.key.publicKey)
        return try AuthorizationEntry(xdr: challenge.entries[challenge.clientEntry])
            .signed(for: signer, on: challenge.expectation.network, expirationLedger: ledger, allowing: .notAddressBound) {
                Self.key.signature(for: $0.digest)
            }.bytes
    }

    /// The challenge signed here through its chosen ledgers, the list to send back.
    func sign(_ challenge: ContractWebAuthChallenge) throws -> String {
        let network = challenge.expectation.network
        let client = try clientEntry(challenge, through: challenge.expirationLedger)
        let domain = try challenge.clientDomainEntry.map { index in
            try AuthorizationEntry(xdr: challenge.entries[index])
                .signed(for: .account(Self.domainKey.publicKey), on: network, expirationLedger: challenge.clientDomainExpirationLedger!,
                        allowing: .notAddressBound) { Self.domainKey.signature(for: $0.digest) }
        }
        return Base64.string(try challenge.signed(client: client, clientDomain: domain?.bytes))
    }

    @Test("a stock challenge is signed through the server's own signature's ledger", arguments: fixtures.cases)
    func aStockChallengeIsSignedThroughTheServersLedger(_ fixture: SEP45StockChallengeFixtures.Case) throws {
        let challenge = try fixture.verify()
        #expect(challenge.serverExpirationLedger == fixture.serverExpirationLedger)
        #expect(challenge.expirationLedger == fixture.serverExpirationLedger && challenge.expirationChoice == .serverSignature)
        #expect(challenge.clientDomainExpirationLedger == (fixture.clientDomain == nil ? nil : fixture.serverExpirationLedger))
        // Byte for byte what stellar-sdk's authorize_entry makes through that ledger.
        #expect(try sign(challenge) == fixture.signed)
    }

    @Test("a given ledger is used for every entry the client signs", arguments: fixtures.cases)
    func aGivenLedgerIsUsedForEveryEntryTheClientSigns(_ fixture: SEP45StockChallengeFixtures.Case) throws {
        let challenge = try fixture.verify().expiring(afterLedger: fixture.givenLedger)
        #expect(challenge.expirationLedger == fixture.givenLedger && challenge.expirationChoice == .given)
        #expect(challenge.clientDomainExpirationLedger == (fixture.clientDomain == nil ? nil : fixture.givenLedger))
        #expect(try sign(challenge) == fixture.signedAtGiven)
    }

    /// A signature valid after the server's own outlives the sign-in it is for, whoever asks for it.
    @Test func aLedgerAfterTheServersOrZeroIsRefused() throws {
        let fixture = Self.fixtures.cases[0]
        let challenge = try fixture.verify()
        for ledger in [0, fixture.serverExpirationLedger + 1, .max] {
            #expect(throws: ContractWebAuthError.expirationOutOfRange(ledger: ledger, server: fixture.serverExpirationLedger)) {
                try challenge.expiring(afterLedger: ledger)
            }
        }
        let error = ContractWebAuthError.expirationOutOfRange(ledger: 0, server: fixture.serverExpirationLedger)
        #expect(error.rule == "given-expiration-ledger" && !error.message.contains("--"), "\(error.message)")
        #expect(try challenge.expiring(afterLedger: fixture.serverExpirationLedger).expirationLedger == fixture.serverExpirationLedger)
    }

    /// What is signed must carry the ledger reviewed: stellar-sdk's entries signed through another are refused.
    @Test func anEntrySignedThroughAnotherLedgerIsRefused() throws {
        let fixture = Self.fixtures.cases[0]
        let challenge = try fixture.verify()
        let atGiven = try clientEntry(challenge, through: fixture.givenLedger)
        #expect(throws: ContractWebAuthError.signedEntryChanged) { try challenge.signed(client: atGiven) }
        _ = try challenge.expiring(afterLedger: fixture.givenLedger).signed(client: atGiven)
        // The unsigned entry as the server sent it (ledger 0) is not what was reviewed either.
        #expect(throws: ContractWebAuthError.signedEntryChanged) { try challenge.signed(client: challenge.entries[challenge.clientEntry]) }
    }

    @Test func theSummarySaysWhoChoseTheLedger() throws {
        let fixture = Self.fixtures.cases[0]
        let key = Self.key.publicKey
        let signer = try AuthorizationSigner.contractAccount(fixture.clientAccount, key: key)
        func expires(_ challenge: ContractWebAuthChallenge) -> String? {
            SigningSummary.contractSignIn(challenge, as: signer, signingAs: ("alice", key)).text.first { $0.hasPrefix("  expires") }
        }
        #expect(expires(try fixture.verify())
                == "  expires     after ledger \(fixture.serverExpirationLedger), with the server's own signature (the challenge left it to the client)")
        #expect(expires(try fixture.verify().expiring(afterLedger: fixture.givenLedger)) == "  expires     after ledger \(fixture.givenLedger), as given")
    }
}
