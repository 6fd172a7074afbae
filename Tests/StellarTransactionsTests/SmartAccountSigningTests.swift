import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// An OpenZeppelin smart account's entry in an envelope, signed by a key that the account lists as an
/// `External(verifier, key)` signer: byte for byte what the reference of fixtures/make-smart-accounts.py and
/// stellar-sdk's `authorize_entry` make (fixtures/smart-account-envelopes.json), alone or beside a cosigner's
/// signature; and every refusal before the key signs.
@Suite struct SmartAccountSigningTests {
    struct File: Decodable {
        let signer, smartAccount, verifier, network, envelope, signed, cosignedEnvelope, cosigned: String
        let rules: [UInt32]
        let expiration: UInt32
    }
    static let file = try! Fixtures.load(File.self, "smart-account-envelopes.json")
    static let key = try! KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")

    func signer(rules: [UInt32] = file.rules) throws -> AuthorizationSigner {
        try .smartAccount(Self.file.smartAccount, key: Self.key.publicKey,
                          rules: SmartAccountRules(verifier: Self.file.verifier, contextRuleIDs: rules))
    }

    func sign(_ base64: String, rules: [UInt32] = file.rules, expiration: UInt32 = file.expiration,
              as account: AuthorizationSigner? = nil) throws -> SignedAuthorizations {
        let envelope = try TransactionEnvelope(base64: base64)
        let plan = try envelope.authorizationPlan(for: try account ?? signer(rules: rules), expirationLedger: expiration)
        return try envelope.signing(plan, on: .testnet, expirationLedger: expiration) { payload in
            #expect(payload.contextRuleIDs == (account == nil ? rules : nil))
            return Self.key.signature(for: payload.digest)
        }
    }

    /// Every refusal comes from the plan, before the key is asked for anything.
    func refusedBeforeTheKey(_ base64: String, rules: [UInt32] = file.rules, expiration: UInt32 = file.expiration,
                             as account: AuthorizationSigner? = nil) -> (any Error)? {
        do {
            let envelope = try TransactionEnvelope(base64: base64)
            let plan = try envelope.authorizationPlan(for: try account ?? signer(rules: rules), expirationLedger: expiration)
            _ = try envelope.signing(plan, on: .testnet, expirationLedger: expiration) { _ in
                Issue.record("the key was asked to sign")
                return [UInt8](repeating: 0, count: 64)
            }
            return nil
        } catch {
            return error
        }
    }

    @Test func aSignatureAloneAndBesideACosignersAreTheReferences() throws {
        let alone = try sign(Self.file.envelope)
        #expect(alone.base64 == Self.file.signed)
        #expect(alone.plan.toSign == [1] && alone.plan.leftAlone.map(\.number) == [2])
        #expect(try sign(Self.file.cosignedEnvelope).base64 == Self.file.cosigned)
        // Signed again, the credential holds this key's signature once: nothing changes.
        #expect(try sign(Self.file.cosigned).base64 == Self.file.cosigned)
    }

    @Test func refusalsComeBeforeTheKeySigns() throws {
        #expect(refusedBeforeTheKey(Self.file.envelope, rules: [0]) as? AuthorizationError
                == .contextRulesMismatch(entry: 1, contexts: 2, given: 1))
        #expect(refusedBeforeTheKey(Self.file.cosignedEnvelope, rules: [0, 4]) as? SmartAccountError
                == .otherRules(found: Self.file.rules, expected: [0, 4]))
        #expect(refusedBeforeTheKey(Self.file.cosignedEnvelope, expiration: Self.file.expiration + 1) as? AuthorizationError
                == .expirationDiffers(entry: 1, carried: Self.file.expiration))
        // The review's findings (issue 30): the account convention would have replaced the cosigner's credential,
        // and moved the expiration it signed; now refused, the key not asked.
        let convention = try AuthorizationSigner.contractAccount(Self.file.smartAccount, key: Self.key.publicKey)
        guard case .notAccountSignatures(1, Self.file.smartAccount, _)? = refusedBeforeTheKey(Self.file.cosignedEnvelope, as: convention)
                as? AuthorizationError else { Issue.record("a smart account's credential was not refused as the account convention"); return }
        #expect(refusedBeforeTheKey(Self.file.cosignedEnvelope, expiration: Self.file.expiration + 777, as: convention) != nil)
        // A credential holding this key's signature already is left as it is: the key is not asked again.
        #expect(refusedBeforeTheKey(Self.file.cosigned) == nil)
        let again = try TransactionEnvelope(base64: Self.file.cosigned).authorizationPlan(for: try signer(), expirationLedger: Self.file.expiration)
        #expect(again.toSign.isEmpty && again.leftAlone.first?.reason == "it holds this key's signature already")
        // Another contract's entries are not this account's: none to sign.
        let elsewhere = try AuthorizationSigner.smartAccount("CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE", key: Self.key.publicKey,
                                                             rules: SmartAccountRules(verifier: Self.file.verifier, contextRuleIDs: Self.file.rules))
        #expect(throws: AuthorizationError.self) {
            try TransactionEnvelope(base64: Self.file.envelope).authorizationPlan(for: elsewhere, expirationLedger: Self.file.expiration)
        }
        #expect(throws: AuthorizationError.notAContract(Self.key.publicKey.accountID)) {
            try AuthorizationSigner(key: Self.key.publicKey, for: .contractAccount(Self.key.publicKey.accountID))
        }
    }

    /// The summary names the account, the verifier, each rule with the context it is for, and that the signature
    /// is valid only for those rules.
    @Test func theSummarySaysWhichRulesAndForWhat() throws {
        let envelope = try TransactionEnvelope(base64: Self.file.envelope)
        let plan = try envelope.authorizationPlan(for: try signer(), expirationLedger: Self.file.expiration)
        let summary = SigningSummary.authorizations(in: envelope, on: .testnet, plan: plan, expirationLedger: Self.file.expiration,
                                                    signingAs: ("alice", Self.key.publicKey))
        let text = summary.text.joined(separator: "\n")
        #expect(text.contains("  signer      alice (\(Self.key.publicKey.accountID)), for \(Self.file.smartAccount)"))
        #expect(text.contains("  as          External(\(Self.file.verifier), this key), a signer of the smart account \(Self.file.smartAccount)"))
        #expect(text.contains("    for rules 0, 3: the signature is valid only for these rules, one per context:"))
        #expect(text.contains("      rule 0 for CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC \"swap\""), "\(text)")
        #expect(text.contains("      rule 3 for CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE \"transfer\""), "\(text)")
    }
}
