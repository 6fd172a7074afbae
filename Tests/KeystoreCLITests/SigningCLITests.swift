import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// The SEP-53 test key (fixtures/sep53-messages.json), imported with PIN 270419.
private let sep53Seed = "SAKICEVQLYWGSOJS4WW7HZJWAHZVEEBS527LHK5V4MLJALYKICQCJXMW"
private let sep53Address = "GBXFXNDLV4LSWA4VB7YIL5GBD7BVNR22SGBTDKMO2SBZZHDXSKZYCP7L"

private func homeWithSEP53Key() throws -> KeystoreHome {
    let home = try KeystoreHome(inProcess: true)
    let signup = try home.run(["signup", "--import", "--pin-stdin", "--kdf", "interactive"], stdin: "\(sep53Seed)\n270419\n")
    try #require(signup.status == 0, "\(signup.stderr)")
    return home
}

private func file(_ bytes: [UInt8]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-payload-\(UUID().uuidString)").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite(.offThePool) struct SigningCLITests {
    struct Vector: Decodable {
        let name: String
        let messageText: String?
        let messageBase64: String?
        let signatureBase64: String
        let signatureHex: String
    }
    struct Vectors: Decodable { let vectors: [Vector] }

    @Test func signMessageReproducesTheSEP53Vectors() throws {
        let home = try homeWithSEP53Key()
        let vectors = try JSONDecoder().decode(
            Vectors.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("sep53-messages.json"))).vectors
        for vector in vectors {
            let message = vector.messageText.map { Array($0.utf8) } ?? Array(Data(base64Encoded: vector.messageBase64!)!)
            // From stdin, byte for byte, after the PIN line.
            let signed = try home.keystore.run(["sign-message", "--pin-stdin"], stdin: Array("270419\n".utf8) + message)
            #expect(signed.status == 0 && signed.stdout == vector.signatureBase64 + "\n", "\(vector.name): \(signed.stderr)")
            // From a file, in hex, with the PIN on a descriptor.
            let path = try file(message)
            defer { unlink(path) }
            let hex = try home.run(["sign-message", "--file", path, "--hex", "--pin-fd", "3"], files: [3: "270419\n"])
            #expect(hex.stdout == vector.signatureHex + "\n")
            // And it verifies.
            let verify = try home.run(["verify", "--address", sep53Address, "--signature", vector.signatureBase64, "--file", path])
            #expect(verify.status == 0 && verify.stdout == "valid\n")
        }
        let json = try home.run(["sign-message", "--json", "--pin-stdin", "Hello, World!"], stdin: "270419\n")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: String]
        let hash = SignedMessage.hash(of: Array("Hello, World!".utf8))
        #expect(object == ["address": sep53Address, "signature": vectors[0].signatureBase64, "hash": Hex.string(hash)])
    }

    @Test func verifyFailsWithCodeOneOnAnyFlippedBit() throws {
        let signature = Array(Data(base64Encoded: "fO5dbYhXUhBMhe6kId/cuVq/AfEnHRHEvsP8vXh03M1uLpi5e46yO2Q8rEBzu3feXQewcQE5GArp88u6ePK6BA==")!)
        let keystore = KeystoreProcess(runsInProcess: true)
        func verify(_ address: String, _ signature: [UInt8], _ message: String) throws -> KeystoreProcess.Result {
            try keystore.run(["verify", "--address", address, "--signature", Data(signature).base64EncodedString(), message])
        }
        #expect(try verify(sep53Address, signature, "Hello, World!").status == 0)
        #expect(try verify(sep53Address, signature, "Hello, World?").status == 1)
        var flipped = signature
        flipped[10] ^= 0x04
        let bad = try verify(sep53Address, flipped, "Hello, World!")
        #expect(bad.status == 1 && bad.stderr == "keystore: The signature does not match this message and address.\n")
        var key = try PublicKey(accountID: sep53Address).rawRepresentation
        key[5] ^= 0x01
        if let other = try? PublicKey(rawRepresentation: key) {
            #expect(try verify(other.accountID, signature, "Hello, World!").status == 1)
        }
        // A malformed address or signature is an input error, not a failed verification.
        let typo = try verify(String(sep53Address.dropLast()) + "M", signature, "Hello, World!")
        #expect(typo.status == 2 && typo.stderrLines.count == 1)
        let short = try keystore.run(["verify", "--address", sep53Address, "--signature", "AAAA", "x"])
        #expect(short.status == 2 && short.stderr.contains("64 bytes"))
    }

    @Test func rawSignaturesFromEverySourceAgreeAndVerify() throws {
        let home = try homeWithSEP53Key()
        let payload = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let path = try file(payload)
        defer { unlink(path) }
        let hex = Hex.string(payload), base64 = Data(payload).base64EncodedString()
        let results = try [
            home.run(["sign", "--hex", hex, "--pin-stdin"], stdin: "270419\n"),
            home.run(["sign", "--base64", base64, "--pin-stdin"], stdin: "270419\n"),
            home.run(["sign", "--file", path, "--pin-stdin"], stdin: "270419\n"),
            home.keystore.run(["sign", "--pin-stdin"], stdin: Array("270419\n".utf8) + payload),
        ]
        #expect(results.allSatisfy { $0.status == 0 } && Set(results.map(\.stdout)).count == 1)
        let signature = results[0].stdout.trimmingCharacters(in: .newlines)
        #expect(try home.run(["verify", "--raw", "--address", sep53Address, "--signature", signature, "--hex", hex]).status == 0)
        #expect(try home.run(["verify", "--address", sep53Address, "--signature", signature, "--hex", hex]).status == 1,
                "a raw signature is not a SEP-53 one")
        let inHex = try home.run(["sign", "--hex", hex, "--format", "hex", "--pin-stdin"], stdin: "270419\n")
        #expect(Hex.bytes(inHex.stdout.trimmingCharacters(in: .newlines)) == Array(Data(base64Encoded: signature)!))
    }

    /// SEP-53's vectors through every way a message comes in: the argument, standard input as `echo` and a
    /// Windows `echo` leave it (one final newline dropped, as `stellar message sign` does) or without one,
    /// `--file` and `--base64` byte for byte; and `verify` the same way, also against a muxed (M…) address.
    @Test func sep53VectorsOnEveryInputPath() throws {
        struct Vectors: Decodable {
            struct Vector: Decodable { let name: String; let messageText: String?; let messageBase64: String?; let signatureBase64: String }
            let vectors: [Vector]
        }
        let home = try homeWithSEP53Key()
        let vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("sep53-messages.json")))
        let file = home.path + "/../sep53-\(UUID().uuidString)"
        defer { unlink(file) }
        let muxed = StrKey.muxedAccount(try PublicKey(accountID: sep53Address), id: 42).stringValue
        for vector in vectors.vectors {
            let bytes = vector.messageText.map { Array($0.utf8) } ?? Array(Data(base64Encoded: vector.messageBase64!)!)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            var paths: [(String, [String], [UInt8])] = [
                ("--file", ["--file", file], []),
                ("--base64", ["--base64", Data(bytes).base64EncodedString()], []),
            ]
            if let text = vector.messageText {
                paths += [("argument", [text], []), ("stdin with \\n", [], bytes + [0x0A]),
                          ("stdin with \\r\\n", [], bytes + [0x0D, 0x0A]), ("stdin as is", [], bytes)]
            }
            for (path, arguments, stdin) in paths {
                let signed = try home.keystore.run(["sign-message", "--pin-fd", "3"] + arguments, stdin: stdin,
                                                   files: [3: Array("270419\n".utf8)])
                #expect(signed.stdout == vector.signatureBase64 + "\n", "\(vector.name), \(path): \(signed.stderr)")
                for address in [sep53Address, muxed] {
                    let verified = try home.keystore.run(["verify", "--address", address, "--signature", vector.signatureBase64] + arguments,
                                                         stdin: stdin)
                    #expect(verified.status == 0, "\(vector.name), \(path), verify against \(address.prefix(1)): \(verified.stderr)")
                }
            }
        }
    }

    @Test func aBatchOfAHundredThousandStreamsThroughOneUnlock() throws {
        let home = try homeWithSEP53Key()
        let count = 100_000
        var input = "270419\n"
        for index in 0..<count { input += "{\"id\":\(index),\"hex\":\"\(String(format: "%064x", index))\"}\n" }
        let result = try home.run(["sign", "--batch", "--pin-stdin"], stdin: input)
        #expect(result.status == 0 && result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == count)
        let publicKey = try PublicKey(accountID: sep53Address)
        for (index, line) in lines.enumerated() where index % 997 == 0 || index == count - 1 {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["id"] as? Int == index)
            let signature = Array(Data(base64Encoded: object["signature"] as! String)!)
            #expect(publicKey.isValidSignature(signature, for: Hex.bytes(String(format: "%064x", index))!))
        }
        #expect(lines.enumerated().allSatisfy { $1.hasPrefix("{\"id\":\($0),") }, "ids in order")
    }

    /// Large reads are signed in parallel slices; every answer still comes in input order, errors included, and
    /// the failure count adds up across slices.
    @Test func aParallelBatchAnswersInInputOrderWithErrorsInPlace() throws {
        let home = try homeWithSEP53Key()
        let count = 20_000
        var input = "270419\n"
        for index in 0..<count {
            input += index % 7 == 3 ? "{\"id\":\(index),\"hex\":\"zz\"}\n" : "{\"id\":\(index),\"message\":\"m\(index)\"}\n"
        }
        let result = try home.run(["sign-message", "--batch", "--pin-stdin"], stdin: input)
        let bad = (0..<count).filter { $0 % 7 == 3 }.count
        #expect(result.status == 2 && result.stderr == "keystore: \(bad) of \(count) requests failed; see their error lines.\n")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == count)
        let publicKey = try PublicKey(accountID: sep53Address)
        for (index, line) in lines.enumerated() {
            if index % 7 == 3 {
                #expect(line == "{\"error\":\"hex is not valid hex\",\"id\":\(index)}", "\(line)")
            } else {
                #expect(line.hasPrefix("{\"id\":\(index),\"signature\":\""), "\(line)")
                if index % 1001 == 0 {
                    let signature = String(line.dropFirst("{\"id\":\(index),\"signature\":\"".count).dropLast(2))
                    #expect(publicKey.isValidMessageSignature(Array(Data(base64Encoded: signature)!), for: Array("m\(index)".utf8)))
                }
            }
        }
    }

    @Test func aBatchAnswersEveryLineGoodOrBad() throws {
        let home = try homeWithSEP53Key()
        let requests = [
            #"{"id":"a","message":"Hello, World!"}"#,
            #"not json"#,
            #"{"id":2,"hex":"zz"}"#,
            #"{"id":3}"#,
            #"{"id":4,"message":"x","hex":"00"}"#,
            "",
            #"{"id":"quote\"d","message":"こんにちは、世界！"}"#,
            #"{"id":6,"base64":"2zZDP1sa1BVBfLP7TeeMk3sUbaxAkUhBhDiNdrksaFo="}"#,
            #"{"id":7,"base64":"not base64"}"#,
            #"[1,2]"#,
            #"{"message":"no id"}"#,
        ]
        let result = try home.run(["sign-message", "--batch", "--pin-stdin"], stdin: "270419\n" + requests.joined(separator: "\n"))
        #expect(result.status == 2 && result.stderr == "keystore: 6 of 10 requests failed; see their error lines.\n")
        let answers = try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(answers.count == 10)
        #expect(answers[0]["id"] as? String == "a"
                && answers[0]["signature"] as? String == "fO5dbYhXUhBMhe6kId/cuVq/AfEnHRHEvsP8vXh03M1uLpi5e46yO2Q8rEBzu3feXQewcQE5GArp88u6ePK6BA==")
        #expect(answers[1]["error"] != nil && answers[1]["id"] is NSNull)
        #expect(answers[2]["id"] as? Int == 2 && (answers[2]["error"] as? String)?.contains("hex") == true)
        #expect(answers[3]["id"] as? Int == 3 && answers[3]["error"] != nil)
        #expect(answers[4]["id"] as? Int == 4 && answers[4]["error"] != nil)
        #expect(answers[5]["id"] as? String == "quote\"d"
                && answers[5]["signature"] as? String == "CDU265Xs8y3OWbB/56H9jPgUss5G9A0qFuTqH2zs2YDgTm+++dIfmAEceFqB7bhfN3am59lCtDXrCtwH2k1GBA==")
        #expect(answers[6]["signature"] as? String == "VA1+7hefNwv2NKScH6n+Sljj15kLAge+M2wE7fzFOf+L0MMbssA1mwfJZRyyrhBORQRle10X1Dxpx+UOI4EbDQ==")
        #expect(answers[7]["id"] as? Int == 7 && answers[7]["error"] != nil)
        #expect(answers[8]["error"] != nil)
        #expect(answers[9]["id"] is NSNull && answers[9]["signature"] != nil)
    }

    /// Up to 16 MiB is signed, on standard input or from a file, within the memory cap that the bad-input table
    /// uses to show that 100 MB is refused without being held; one byte more is refused from either source.
    @Test func payloadsUpTo16MiBAreSignedAndNoMore() throws {
        let home = try homeWithSEP53Key()
        let capped = ["sh", "-c", "ulimit -v 250000; exec \"$0\" \"$@\""]
        let largest = [UInt8](repeating: 0x61, count: 16 << 20)
        let signed = try home.keystore.run(["sign-message", "--pin-fd", "3"], stdin: largest, files: [3: Array("270419\n".utf8)], prefix: capped)
        #expect(signed.status == 0, "\(signed.stderr)")
        let signature = try #require(Base64.decode(signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try PublicKey(accountID: sep53Address).isValidMessageSignature(signature, for: largest))

        let tooLarge = try file(largest + [0x61])
        defer { unlink(tooLarge) }
        for (arguments, stdin) in [(["sign", "--file", tooLarge], []), (["sign"], largest + [0x61])] {
            let refused = try home.keystore.run(arguments + ["--pin-fd", "3"], stdin: stdin, files: [3: Array("270419\n".utf8)])
            #expect(refused.status == 2 && refused.stderr.contains("is larger than 16 MiB"), "\(refused.stderr)")
        }
    }

    @Test func anEndlessBatchLineIsAnsweredWithoutBufferingIt() throws {
        let home = try homeWithSEP53Key()
        let huge = "{\"message\":\"" + String(repeating: "a", count: 3 << 20) + "\"}"
        let input = "270419\n" + huge + "\n" + #"{"id":2,"hex":"00"}"# + "\n"
        let result = try home.run(["sign", "--batch", "--pin-stdin"], stdin: input)
        let lines = result.stdout.split(separator: "\n")
        #expect(result.status == 2 && lines.count == 2)
        #expect(lines.first?.contains("longer than 1 MiB") == true && lines.last?.hasPrefix(#"{"id":2,"signature":"#) == true)
    }
}
