import Foundation
import Testing
import TestFixtures

@Suite(.offThePool) struct StrKeyCLITests {
    let keystore = KeystoreProcess(runsInProcess: true)
    static let muxed = "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLK"
    static let account = "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"
    static let hash = "3f0c34bf93ad0d9971d04ccc90f705511c838aad9734a4a2fb0d7a03fc7fe89a"

    @Test func decodePrintsTypeAndHexPayload() throws {
        let result = try keystore.run(["strkey", "decode", Self.muxed])
        #expect(result.status == 0)
        #expect(result.stdout == """
            type: muxed-account
            payload: \(Self.hash)8000000000000000
            account: \(Self.account)
            id: 9223372036854775808

            """)
        #expect(result.stderr.isEmpty)
    }

    @Test func decodeJSONIsOneObject() throws {
        let result = try keystore.run(["strkey", "decode", "--json", Self.muxed])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: String]
        #expect(object == ["type": "muxed-account", "payload": Self.hash + "8000000000000000",
                           "account": Self.account, "id": "9223372036854775808"])
    }

    @Test func encodeRoundTripsWithDecode() throws {
        let encoded = try keystore.run(["strkey", "encode", "--type", "account-id", Self.hash])
        #expect(encoded.status == 0 && encoded.stdout == Self.account + "\n")
        let json = try keystore.run(["strkey", "encode", "--type", "contract", "--json", Self.hash])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdoutBytes)) as? [String: String]
        #expect(object == ["type": "contract", "strkey": "CA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUWDA"])
    }

    @Test func secretSeedsAreReadFromStandardInputNotArgv() throws {
        let seedHex = String(repeating: "ab", count: 32)
        let refused = try keystore.run(["strkey", "encode", "--type", "secret-seed", seedHex])
        #expect(refused.status == 10)
        #expect(refused.stderrLines.count == 1)
        #expect(!refused.stdout.contains("S"))

        let encoded = try keystore.run(["strkey", "encode", "--type", "secret-seed"], stdin: Array((seedHex + "\n").utf8))
        #expect(encoded.status == 0)
        let seed = encoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(seed.hasPrefix("S") && seed.count == 56)

        let onArgv = try keystore.run(["strkey", "decode", seed])
        #expect(onArgv.status == 10 && onArgv.stdout.isEmpty)
        #expect(!onArgv.stderr.contains(seed) && !onArgv.stderr.contains(seedHex))

        let decoded = try keystore.run(["strkey", "decode"], stdin: Array(seed.utf8))
        #expect(decoded.status == 0 && decoded.stdout.contains("payload: \(seedHex)"))
    }

    @Test(arguments: [
        ["strkey", "decode", "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGA"],  // checksum
        ["strkey", "decode", "ga7qynf7sowq3glr2bgmzehxavirza4kvwltjjfc7mgxua74p7ujvsgz"],  // lower case
        ["strkey", "decode", "GAAAAAAAACGC6"],  // length
        ["strkey", "encode", "--type", "account-id", "zz"],  // hex
        ["strkey", "encode", "--type", "account-id", "abcd"],  // payload length
    ])
    func malformedInputIsOneLineOnStderrWithExitCode2(arguments: [String]) throws {
        let result = try keystore.run(arguments)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.hasPrefix("keystore: "))
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack"))
    }

    @Test func helpAndVersionSucceed() throws {
        let help = try keystore.run(["--help"])
        #expect(help.status == 0 && help.stdout.contains("strkey"))
        let version = try keystore.run(["--version"])
        #expect(version.status == 0 && version.stdout.first?.isNumber == true)
    }

    @Test func anUnknownTypeIsAUsageError() throws {
        let result = try keystore.run(["strkey", "encode", "--type", "banana", Self.hash])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty && !result.stderr.isEmpty)
    }
}
