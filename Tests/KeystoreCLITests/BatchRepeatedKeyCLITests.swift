import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// A batch request with a key twice means A to Swift's decoder and B to Python or jq, so a policy filter in front
/// of the signer could pass one request and have the other signed. Every batch refuses it, signs nothing for it,
/// and counts it as a failure.
@Suite(.offThePool) struct BatchRepeatedKeyCLITests {
    let home = try! KeystoreHome(inProcess: true)
    let golden = KeystoreHome.golden

    init() throws {
        try home.addGolden()
    }

    func lines(_ result: KeystoreProcess.Result) throws -> [[String: Any]] {
        try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test(arguments: [
        (["sign"], #"{"id":1,"hex":"aa","hex":"bb"}"#),
        (["sign"], #"{"id":1,"hex":"aa","other":1,"other":2}"#),
        (["sign-message"], #"{"id":1,"message":"pay alice","message":"pay mallory"}"#),
        (["sign-message"], #"{"id":1,"message":"pay alice","mess\u0061ge":"pay mallory"}"#),
        (["sign-message"], #"{"id":1,"message":"hi","nested":{"a":1,"a":2}}"#),
    ])
    func aRepeatedKeyIsRefusedAndTheRestSigned(_ command: [String], _ request: String) throws {
        let good = command == ["sign"] ? #"{"id":2,"hex":"aa"}"# : #"{"id":2,"message":"hi"}"#
        let result = try home.run(command + ["--batch", "--name", golden.name, "--pin-stdin"],
                                  stdin: "\(golden.pin)\n\(request)\n\(good)\n")
        #expect(result.status == 2, "\(result.stderr)")
        let answers = try lines(result)
        try #require(answers.count == 2, "\(result.stdout)")
        #expect(answers[0]["id"] as? Int == 1 && answers[0]["signature"] == nil)
        #expect((answers[0]["error"] as? String)?.contains("appears twice") == true, "\(answers[0])")
        #expect(answers[1]["id"] as? Int == 2 && answers[1]["signature"] is String)
    }

    @Test func aRepeatedIdIsAnsweredWithANullId() throws {
        let result = try home.run(["sign", "--batch", "--name", golden.name, "--pin-stdin"],
                                  stdin: "\(golden.pin)\n" + #"{"id":1,"id":2,"hex":"aa"}"# + "\n")
        #expect(result.status == 2)
        let answers = try lines(result)
        #expect(answers.count == 1 && answers[0]["id"] is NSNull && (answers[0]["error"] as? String)?.contains("'id' appears twice") == true,
                "\(result.stdout)")
    }

    @Test func aTransactionBatchSignsNeitherOfTwoEnvelopes() throws {
        let envelopes = Envelopes.loaded.envelopes.filter { $0.network == "testnet" && !$0.alreadySigned }
        let (a, b) = (envelopes[0].envelope, envelopes[1].envelope)
        let result = try home.run(["sign-tx", "--batch", "--network", "testnet", "--name", golden.name, "--pin-stdin"],
                                  stdin: "\(golden.pin)\n" + #"{"id":1,"envelope":"\#(a)","envelope":"\#(b)"}"# + "\n")
        #expect(result.status == 2, "\(result.stderr)")
        let answers = try lines(result)
        #expect(answers.count == 1 && answers[0]["id"] as? Int == 1 && answers[0]["envelope"] == nil, "\(result.stdout)")
        #expect((answers[0]["error"] as? String)?.contains("'envelope' appears twice") == true)
    }
}
