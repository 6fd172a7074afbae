import Testing
import StellarKeys
@testable import StellarTransactions

/// The account a key signs for, from its parts as a person gives them (`AuthorizationAccount(address:…)`).
@Suite struct AuthorizationAccountTests {
    static let account = "GDIEVMRSOQV3JKZ2CNUL2RQV4TTNAISKW4NAC25PQUQKGMWJO6DTOAE7"
    static let contract = "CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE"

    @Test func aGAccountIsAMultisigAccountAndACIsAContract() throws {
        #expect(try AuthorizationAccount(address: Self.account) == .multisigAccount(Self.account))
        #expect(try AuthorizationAccount(address: Self.contract) == .contractAccount(Self.contract))
        // Neither: taken for a contract, refused when a signer is made for it.
        let neither = try AuthorizationAccount(address: "nonsense")
        #expect(neither == .contractAccount("nonsense"))
        let key = try PublicKey(accountID: "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR")
        #expect(throws: AuthorizationError.notAContract("nonsense")) { try AuthorizationSigner(key: key, for: neither) }
    }

    @Test func aVerifierAndRulesMakeASmartAccount() throws {
        let account = try AuthorizationAccount(address: Self.contract, verifier: Self.contract, contextRuleIDs: [0, 1])
        #expect(account == .smartAccount(Self.contract, rules: try SmartAccountRules(verifier: Self.contract, contextRuleIDs: [0, 1])))
        #expect(throws: SmartAccountError.noContextRules) { try AuthorizationAccount(address: Self.contract, verifier: Self.contract) }
        #expect(throws: SmartAccountError.verifierNotContract) { try AuthorizationAccount(address: Self.contract, contextRuleIDs: [0]) }
    }

    /// SEP-45 signs in as a contract only: a G… address stays a contract account, and is refused as one.
    @Test func aContractSignInTakesNoGAccount() throws {
        #expect(try AuthorizationAccount(contract: Self.account) == .contractAccount(Self.account))
        let key = try PublicKey(accountID: "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR")
        #expect(throws: AuthorizationError.notAContract(Self.account)) {
            try AuthorizationSigner(key: key, for: try AuthorizationAccount(contract: Self.account))
        }
    }
}
