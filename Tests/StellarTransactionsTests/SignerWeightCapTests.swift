import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// A signer's weight as stellar-core counts it, whatever Horizon shows. Failed on fd0e85e.
@Suite struct SignerWeightCapTests {
    /// stellar-core a9b8613, SignatureChecker::checkSignature: from protocol 10, a signer's weight above 255 counts
    /// as 255 (`if (w > UINT8_MAX) w = UINT8_MAX`). An account can still hold one set before protocol 10, and
    /// Horizon shows it as stored (`weight` is an int32 there). Today the account's JSON is refused ("not between
    /// 0 and 255"), so its thresholds cannot be shown at all; the network counts the signer as 255.
    @Test func aSignerWeightAbove255CountsAs255AsStellarCoreCountsIt() throws {
        let payment = MultisigFixtures.named("payment")
        let copy = try #require(payment.copies.first { $0.signers == ["B"] })
        let b = try #require(MultisigFixtures.loaded.keys["B"])
        var account = try #require(try JSONSerialization.jsonObject(with: Data(MultisigFixtures.accountJSON("A"))) as? [String: Any])
        account["thresholds"] = ["low_threshold": 1, "med_threshold": 255, "high_threshold": 255]
        account["signers"] = (account["signers"] as! [[String: Any]]).map { signer in
            var signer = signer
            if signer["key"] as? String == b { signer["weight"] = 300 }
            return signer
        }
        let bytes = Array(try JSONSerialization.data(withJSONObject: account))
        let signers = try AccountSigners(horizonJSON: bytes, source: "A.json")
        let check = try TransactionEnvelope(base64: copy.envelope).signatureCheck(on: MultisigTests.network, accounts: [signers])
        let source = try #require(check.accounts.first)
        // B alone: 255 (capped) of the medium threshold 255 that the payment needs.
        #expect(source.isMet == true, "\(source)")
    }
}
