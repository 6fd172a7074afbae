import Foundation
import Testing
import TestFixtures

/// A seed or a recovery phrase typed as an argument is never repeated by the error it causes (argument-parser
/// quotes unexpected arguments): where the error would repeat it, every command, text and JSON, exits 10 with a
/// line that leaves it out; any other error is the one the command gives for harmless text in its place.
///
/// The command-by-command cases run in-process (the screen is a pure function, `SecretArgumentsTests`, and what is
/// pinned here is that every command's errors pass through it); a seed as a name and a PIN as an option are run by
/// the binary too, to show the wiring of the process itself.
@Suite(.offThePool) struct SecretArgumentCLITests {
    static let seed = KeystoreHome.golden.seed
    static let phrase = ["illness", "spike", "retreat", "truth", "genius", "clock", "brain", "pass", "fit", "cave", "bargain", "toe"]
    static let commands = CommandTableTests.helps.filter { !$0.isEmpty }.map { $0.split(separator: " ").map(String.init) }
    /// Stand-ins of the same shape that are no secret: a seed's length in capitals, words off the BIP39 list.
    static let seedStandIn = "S" + String(repeating: "Q", count: 55)
    static let phraseStandIn = phrase.map { "q" + $0 }

    func expectRefusedWithoutTheSecret(_ result: KeystoreProcess.Result, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 10, "\(arguments): exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1 && result.stderr.contains("a secret (a seed, a recovery phrase, a lockout code or an age identity) from the command line"),
                "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        expectNoSecret(result, sourceLocation: sourceLocation)
    }

    /// Neither the seed (nor 20 characters of it) nor two words of the phrase in a row, however they are quoted.
    func expectNoSecret(_ result: KeystoreProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) {
        let pairs = Set(zip(Self.phrase, Self.phrase.dropFirst()).map { "\($0) \($1)" })
        for output in [result.stdout, result.stderr] {
            #expect(!output.contains(Self.seed) && !output.contains(Self.seed.dropFirst(8).prefix(20)), sourceLocation: sourceLocation)
            let words = output.lowercased().split { !$0.isLetter }
            #expect(!zip(words, words.dropFirst()).contains { pairs.contains("\($0) \($1)") }, "\(output)", sourceLocation: sourceLocation)
        }
    }

    /// Runs `arguments(secret)` and `arguments(standIn)` (and with `--json`): the secret is never in the output; where the
    /// stand-in's error quotes the stand-in, the secret's is the refusal; elsewhere it is the stand-in's error.
    func expectScreened(_ home: KeystoreHome, secret: [String], standIn: [String], alsoJSON: Bool = false,
                        _ arguments: ([String]) -> [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for json in alsoJSON ? [[], ["--json"]] : [[]] {
            let result = try home.run(arguments(secret) + json)
            let plain = try home.run(arguments(standIn) + json)
            if standIn.contains(where: { plain.stderr.contains($0.prefix(12)) }) {
                expectRefusedWithoutTheSecret(result, arguments(secret), sourceLocation: sourceLocation)
                if !json.isEmpty { #expect(result.stdout.contains(#""kind":"refused""#), "\(result.stdout)", sourceLocation: sourceLocation) }
            } else {
                expectNoSecret(result, sourceLocation: sourceLocation)
                #expect(result.status == plain.status, "\(arguments(secret)): exit \(result.status), not \(plain.status): \(result.stderr)",
                        sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: commands)
    func aSeedArgumentIsNeverRepeated(_ command: [String]) throws {
        let home = try KeystoreHome(inProcess: true)
        try expectScreened(home, secret: [Self.seed], standIn: [Self.seedStandIn], alsoJSON: true) { command + $0 + ["--no-such-option"] }
        try expectScreened(home, secret: [Self.seed], standIn: [Self.seedStandIn]) { command + ["--no-such-option"] + $0 }
        // One argument too many for most commands.
        try expectScreened(home, secret: [Self.seed], standIn: [Self.seedStandIn]) { command + $0 + $0 }
    }

    @Test(arguments: commands)
    func aPhraseArgumentIsNeverRepeated(_ command: [String]) throws {
        let home = try KeystoreHome(inProcess: true)
        // Twelve words, where a command takes at most one.
        try expectScreened(home, secret: Self.phrase, standIn: Self.phraseStandIn, alsoJSON: true) { command + $0 }
        // The phrase as one argument, beside an unknown option.
        let joined = [Self.phrase.joined(separator: " ")], joinedStandIn = [Self.phraseStandIn.joined(separator: " ")]
        try expectScreened(home, secret: joined, standIn: joinedStandIn) { command + $0 + ["--no-such-option"] }
        try expectScreened(home, secret: joined, standIn: joinedStandIn) { command + ["--no-such-option"] + $0 }
    }

    /// As an option's value, where argument-parser does not complain but keystore's own check would quote it.
    @Test func aSeedGivenAsANameIsNotRepeated() throws {
        let home = try KeystoreHome()
        for command in [["login"], ["export", "--force"], ["address"], ["remove", "--force"]] {
            let arguments = command + ["--name", Self.seed]
            expectRefusedWithoutTheSecret(try home.run(arguments), arguments)
        }
    }

    /// A phrase given as a name is cut in the name's error, but what would be left of it is still the phrase's.
    @Test func aPhraseGivenAsANameIsNotRepeated() throws {
        let home = try KeystoreHome(inProcess: true)
        for command in [["login"], ["address"]] {
            let arguments = command + ["--name", Self.phrase.joined(separator: " ")]
            expectRefusedWithoutTheSecret(try home.run(arguments), arguments)
        }
    }

    // MARK: A PIN as an option (issue 28, 9.3)

    /// An option that looks like a PIN's is answered with the ways a PIN is given, never with argument-parser's
    /// nearest option, and the PIN is not repeated.
    @Test(arguments: [["login", "--pin", "493817"], ["login", "--pin=493817"], ["sign", "--PIN", "493817"],
                      ["change-pin", "--new-pin", "493817"], ["signup", "--pin-code", "493817", "--json"], ["login", "--pin"]])
    func aPINOptionSaysHowToGiveAPIN(_ arguments: [String]) throws {
        let home = try KeystoreHome()
        let result = try home.run(arguments)
        #expect(result.status == 10, "exit \(result.status): \(result.stderr)")
        #expect(result.stderrLines.count == 1 && result.stderr.contains("--pin-stdin, --pin-file or --pin-fd"), "\(result.stderr)")
        #expect(!result.stderr.contains("Did you mean"), "\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains("493817"), "the PIN was repeated: \(result.stdout) \(result.stderr)")
    }

    // MARK: Ordinary text is not a secret (issue 28, 9.1)

    /// Everyday English has three BIP39 words in a row ("I control this account"); a phrase is 12 to 24 of them.
    static let sentences = ["I control this account", "please sign this message to prove you own the wallet before the auction ends"]

    /// The same sentence with no word on the BIP39 list, for a command's answer to compare with.
    static func neutral(_ sentence: String) -> String { sentence.split(separator: " ").map { "q" + $0 }.joined(separator: " ") }

    /// The README's own example: a message that does not verify is exit 1, however it is given and whatever its words.
    @Test func aMessageThatDoesNotVerifyIsExit1WhateverItsWords() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let signed = try home.run(["sign-message", "something else", "--name", KeystoreHome.golden.name, "--pin-stdin"],
                                  stdin: KeystoreHome.golden.pin + "\n")
        try #require(signed.status == 0, "\(signed.stderr)")
        let signature = signed.stdout.trimmingCharacters(in: .newlines)
        let verify = ["verify", "--address", KeystoreHome.golden.address, "--signature", signature]
        for sentence in Self.sentences {
            let text = try home.run(verify + [sentence])
            #expect(text.status == 1 && text.stderr.contains("does not match this message"), "exit \(text.status): \(text.stderr)")
            let json = try home.run(verify + [sentence, "--json"])
            #expect(json.status == 1 && json.stdout.contains(#""valid":false"#), "exit \(json.status): \(json.stdout) \(json.stderr)")
            let stdin = try home.run(verify, stdin: sentence)
            #expect(stdin.status == 1, "exit \(stdin.status): \(stdin.stderr)")
        }
    }

    /// In every command, as its argument, as a name or a network: a sentence gets the answer a sentence of words off
    /// the list gets, never the refusal of a secret.
    @Test(arguments: commands)
    func anOrdinarySentenceIsJustText(_ command: [String]) throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let first = Self.sentences[0], second = Self.sentences[1]
        let cases = [command + [first], command + [first, "--json"], command + ["--name", first], command + ["--network", first],
                     command + [second]]
        for arguments in cases {
            let result = try home.run(arguments)
            let expected = try home.run(arguments.map { Self.sentences.contains($0) ? Self.neutral($0) : $0 })
            #expect(result.status == expected.status && !result.stderr.contains("a secret (a seed, a recovery phrase, a lockout code or an age identity)"),
                    "\(arguments): exit \(result.status), not \(expected.status): \(result.stderr)")
        }
    }

    /// An age identity given where a recipient goes (an easy slip: `age-keygen` prints both) is refused by its
    /// place, never repeated; where argument-parser would quote it (an argument too many), the screen refuses it.
    @Test func anAgeIdentityGivenAsARecipientIsNotRepeated() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let identity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
        let output = home.path + "/backup.age"
        for given in [identity, identity.lowercased()] {
            let result = try home.run(["backup", "--name", KeystoreHome.golden.name, "-o", output, "--recipient", given, "--pin-stdin"],
                                      stdin: KeystoreHome.golden.pin + "\n")
            #expect(result.status == 2 && result.stderrLines.count == 1, "exit \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("Recipient 1 of those given is an age identity, a secret key, not a recipient"), "\(result.stderr)")
            let quoted = try home.run(["backup", "-o", output, given])
            expectRefusedWithoutTheSecret(quoted, ["backup", "-o", output, given])
            for output in [result.stderr, quoted.stderr] {
                #expect(!output.uppercased().contains(identity.dropFirst(16).prefix(12)), "\(output)")
            }
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    /// age-keygen's own file given as the recipients file (it holds the public key as a comment beside the secret
    /// one): refused by its line number, the secret key nowhere in the output. Made by Debian's age-keygen.
    @Test func anIdentityFileGivenAsTheRecipientsFileIsNotRepeated() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let keys = home.path + "-keys.txt", output = home.path + "/backup.age"
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let made = try KeystoreProcess(program: "age-keygen").run(["-o", keys])
        try #require(made.status == 0, "\(made.stderr)")
        let secretKey = try #require(try String(contentsOfFile: keys, encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        let result = try home.run(["backup", "--name", KeystoreHome.golden.name, "-o", output, "--recipients-file", keys, "--pin-stdin"],
                                  stdin: KeystoreHome.golden.pin + "\n")
        #expect(result.status == 2 && result.stderrLines.count == 1, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("Line 3 of the recipients file is an age identity, a secret key, not a recipient"), "\(result.stderr)")
        #expect(!result.stderr.contains(secretKey.dropFirst(16).prefix(12)) && !result.stdout.contains(secretKey.dropFirst(16).prefix(12)))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Where nothing went wrong, an argument is just an argument: a message to sign may be any text.
    @Test func aMessageThatLooksLikeAPhraseIsStillSigned() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["sign-message", "abandon ability able about", "--name", KeystoreHome.golden.name, "--pin-stdin"],
                                  stdin: KeystoreHome.golden.pin + "\n")
        #expect(result.status == 0, "\(result.stderr)")
    }
}
