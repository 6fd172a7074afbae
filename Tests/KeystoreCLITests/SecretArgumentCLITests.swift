import Foundation
import Testing

/// A seed or a recovery phrase typed as an argument is never repeated by the error it causes (argument-parser
/// quotes unexpected arguments): every command, text and JSON, exits 10 with a line that leaves it out.
@Suite struct SecretArgumentCLITests {
    static let seed = KeystoreHome.golden.seed
    static let phrase = ["illness", "spike", "retreat", "truth", "genius", "clock", "brain", "pass", "fit", "cave", "bargain", "toe"]
    static let commands = CommandTableTests.helps.filter { !$0.isEmpty }.map { $0.split(separator: " ").map(String.init) }

    func expectRefusedWithoutTheSecret(_ result: KeystoreProcess.Result, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 10, "\(arguments): exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1 && result.stderr.contains("a secret (a seed, a recovery phrase or a lockout code) from the command line"),
                "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        expectNoSecret(result, sourceLocation: sourceLocation)
    }

    func expectNoSecret(_ result: KeystoreProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        for output in [result.stdout, result.stderr] {
            #expect(!output.contains(Self.seed) && !output.contains(Self.seed.dropFirst(8).prefix(20)), sourceLocation: sourceLocation)
            for run in 0...(Self.phrase.count - 3) {
                #expect(!output.contains(Self.phrase[run..<run + 3].joined(separator: " ")), sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: commands)
    func aSeedArgumentIsNeverRepeated(_ command: [String]) throws {
        let home = try KeystoreHome()
        for arguments in [command + [Self.seed, "--no-such-option"], command + ["--no-such-option", Self.seed]] {
            expectRefusedWithoutTheSecret(try home.run(arguments), arguments)
            let json = try home.run(arguments + ["--json"])
            expectRefusedWithoutTheSecret(json, arguments)
            #expect(json.stdout.contains(#""kind":"refused""#), "\(arguments): \(json.stdout)")
        }
        // One argument too many for most commands; whatever the error, it leaves the seed out.
        expectNoSecret(try home.run(command + [Self.seed, Self.seed]))
    }

    @Test(arguments: commands)
    func aPhraseArgumentIsNeverRepeated(_ command: [String]) throws {
        let home = try KeystoreHome()
        for arguments in [command + Self.phrase, command + [Self.phrase.joined(separator: " "), "--no-such-option"]] {
            expectRefusedWithoutTheSecret(try home.run(arguments), arguments)
            expectRefusedWithoutTheSecret(try home.run(arguments + ["--json"]), arguments)
        }
    }

    /// As an option's value, where argument-parser does not complain but keystore's own check would quote it.
    @Test func aSeedGivenAsANameIsNotRepeated() throws {
        let home = try KeystoreHome()
        for command in [["login"], ["export", "--force"], ["address"], ["remove", "--force"]] {
            let arguments = command + ["--name", Self.seed]
            expectRefusedWithoutTheSecret(try home.run(arguments), arguments)
        }
    }

    /// Where nothing went wrong, an argument is just an argument: a message to sign may be any text.
    @Test func aMessageThatLooksLikeAPhraseIsStillSigned() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let result = try home.run(["sign-message", "abandon ability able about", "--name", KeystoreHome.golden.name, "--pin-stdin"],
                                  stdin: KeystoreHome.golden.pin + "\n")
        #expect(result.status == 0, "\(result.stderr)")
    }
}
