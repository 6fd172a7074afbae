import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// Review of issue 32 (outside reviewer): library behaviour that disagrees with the issue, SEP-7 or stellar-core.
/// Each test fails on fd0e85e.
@Suite struct Review32ProbeTests {
    static let sep7 = try! SEP7Fixtures.load()

    /// Issue 32, item 4: the origin's stellar.toml is fetched "https only", and SEP-7 makes `origin_domain` "a fully
    /// qualified domain name". A request that names `127.0.0.1:PORT` or `localhost:PORT` was read, its stellar.toml
    /// fetched over plain http from that port (which any local user can bind), and shown as "verified". The domain
    /// a request names is the requester's claim, unlike the one a person types for web-auth. Now such an origin is
    /// known as one on this machine (`originIsOnThisMachine`), which `verifiedOrigin` refuses unless allowed and the
    /// summary warns of (SEP7CLITests.anOriginOnThisMachineIsRefusedUnlessAllowed).
    @Test func aRequestThatNamesALoopbackPortAsItsOriginIsKnownAsOne() throws {
        let valid = try #require(Self.sep7.cases.first { $0.name == "valid-testnet" })
        let domain = try #require(valid.originDomain)
        #expect(try !TransactionRequest(uri: valid.uri).originIsOnThisMachine)
        for loopback in ["127.0.0.1:8000", "localhost:8000", "127.1.2.3:1"] {
            let uri = valid.uri.replacingOccurrences(of: "origin_domain=" + TransactionRequest.escaped(domain),
                                                     with: "origin_domain=" + TransactionRequest.escaped(loopback))
            try #require(uri != valid.uri)
            #expect(try TransactionRequest(uri: uri).originIsOnThisMachine, "\(loopback)")
        }
        // Any other host with a port is no domain name at all.
        for other in ["example.com:8000", "10.0.0.1:80", "[::1]:80"] {
            let uri = valid.uri.replacingOccurrences(of: "origin_domain=" + TransactionRequest.escaped(domain),
                                                     with: "origin_domain=" + TransactionRequest.escaped(other))
            #expect(throws: TransactionRequestError.badOriginDomain(other), "\(other)") { try TransactionRequest(uri: uri) }
        }
    }

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
