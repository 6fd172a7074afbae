import Testing
@testable import KeystoreCLI

/// The screen itself, as the pure function it is: which arguments hold a secret, and whether a message repeats any
/// of it. `SecretArgumentCLITests` runs it through every command; these pin its rules one by one.
@Suite struct SecretArgumentsTests {
    static let seed = KeystoreHome.golden.seed
    static let phrase = ["illness", "spike", "retreat", "truth", "genius", "clock", "brain", "pass", "fit", "cave", "bargain", "toe"]

    @Test func aSeedIsASecretWhereverItStandsInAnArgument() {
        #expect(SecretArguments.secrets(in: ["login", "--name", Self.seed]) == [.text(Self.seed[...])])
        #expect(SecretArguments.secrets(in: ["sign", "x,\(Self.seed)"]) == [.text(Self.seed[...])])
        // The same shape that is no valid seed (its checksum fails) is not one.
        #expect(SecretArguments.secrets(in: ["S" + String(repeating: "Q", count: 55)]).isEmpty)
        // A public key is not a secret.
        #expect(SecretArguments.secrets(in: [KeystoreHome.golden.address]).isEmpty)
    }

    /// An age identity is the key to every file encrypted to its recipient (a backup's recovery key is one): given
    /// where a recipient goes (`--recipient AGE-SECRET-KEY-1…`), it must not come back in the error that refuses it.
    @Test func anAgeIdentityIsASecretInAnyCaseAndSpacing() {
        let identity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
        #expect(SecretArguments.secrets(in: ["backup", "--recipient", identity]) == [.text(identity[...])])
        #expect(SecretArguments.secrets(in: ["--recipient=" + identity.lowercased()]).count == 1)
        // As a recovery key is shown, in groups of four.
        let grouped = "AGE-SECRET-KEY-1 GFPY YSJZ GFPY YSJZ GFPY YSJZ GFPY YSJZ GFPY YSJZ GFPY YSJZ GFPY YSJZ GFPQ 4EGA EX"
        #expect(SecretArguments.secrets(in: ["restore", grouped]).count == 1)
        #expect(SecretArguments.isQuoted(in: "'\(identity)' is not an age recipient", arguments: ["backup", "--recipient", identity]))
        #expect(SecretArguments.isQuoted(in: "'\(identity.lowercased().prefix(40))…' is not an age recipient",
                                         arguments: ["backup", "--recipient", identity.lowercased()]))
        // A plugin's identity may hold a secret too; a recipient does not.
        #expect(SecretArguments.secrets(in: ["AGE-PLUGIN-YUBIKEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQ"]).count == 1)
        #expect(SecretArguments.secrets(in: ["--recipient", "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"]).isEmpty)
    }

    @Test func twelveListWordsAreAPhraseAsOneArgumentOrMany() {
        let words = Self.phrase.map { $0[...] }
        #expect(SecretArguments.secrets(in: Self.phrase) == [.words(words)])
        #expect(SecretArguments.secrets(in: [Self.phrase.joined(separator: " ")]) == [.words(words)])
        // A name that is a list word before the phrase still leaves a run of twelve or more.
        #expect(SecretArguments.secrets(in: ["--name", "wallet"] + Self.phrase).count == 1)
    }

    @Test func elevenWordsOrAnOptionBetweenThemAreNoPhrase() {
        #expect(SecretArguments.secrets(in: Array(Self.phrase.prefix(11))).isEmpty)
        #expect(SecretArguments.secrets(in: Array(Self.phrase.prefix(6)) + ["--json"] + Array(Self.phrase.suffix(6))).isEmpty)
        #expect(SecretArguments.secrets(in: ["I control this account"]).isEmpty)
        #expect(SecretArguments.secrets(in: Self.phrase.map { "q" + $0 }).isEmpty)
    }

    @Test func twelveCharactersOfASeedInAMessageAreAQuote() {
        let arguments = ["login", "--name", Self.seed]
        #expect(SecretArguments.isQuoted(in: "Unexpected argument '\(Self.seed)'", arguments: arguments))
        // A quote cut to fit a line still carries a piece.
        #expect(SecretArguments.isQuoted(in: "no identity named '…\(Self.seed.dropFirst(30).prefix(12))…'", arguments: arguments))
        #expect(!SecretArguments.isQuoted(in: "no identity named '\(Self.seed.prefix(11))'", arguments: arguments))
        #expect(!SecretArguments.isQuoted(in: "Unknown option '--no-such-option'", arguments: arguments))
    }

    @Test func twoWordsInARowOfAPhraseAreAQuoteInAnyCase() {
        #expect(SecretArguments.isQuoted(in: "Unexpected arguments 'illness', 'spike'", arguments: Self.phrase))
        #expect(SecretArguments.isQuoted(in: "name 'CLOCK BRAIN' is too long", arguments: Self.phrase))
        #expect(!SecretArguments.isQuoted(in: "Unexpected argument 'illness'", arguments: Self.phrase))
        // Without a secret among the arguments nothing is a quote, whatever the message says.
        #expect(!SecretArguments.isQuoted(in: "illness spike retreat", arguments: Array(Self.phrase.prefix(3))))
    }

    @Test(arguments: [["--pin", "1"], ["--pin=1"], ["--PIN", "1"], ["--new-pin", "1"], ["--pin-code", "1"], ["--pin_code"], ["--pincode"]])
    func anOptionNamedForAPINIsSpotted(_ arguments: [String]) {
        #expect(SecretArguments.containPINOption(["login"] + arguments))
    }

    @Test(arguments: [["--pin-stdin"], ["--pin-file", "f"], ["--pin-fd", "3"], ["--new-pin-file", "f"], ["--new-pin-fd", "4"],
                      ["--", "--pin"], ["--spin"], ["-p"]])
    func theRealPINOptionsAndWhatFollowsDashDashAreNot(_ arguments: [String]) {
        #expect(!SecretArguments.containPINOption(["login"] + arguments))
    }

    @Test func onlyAQuotedSixDigitArgumentIsAPIN() {
        #expect(SecretArguments.quotesPIN("Unexpected argument '270419'", arguments: ["login", "270419"]))
        #expect(!SecretArguments.quotesPIN("Unexpected argument '2704190'", arguments: ["login", "2704190"]))
        #expect(!SecretArguments.quotesPIN("Unexpected argument '27041a'", arguments: ["login", "27041a"]))
        #expect(!SecretArguments.quotesPIN("Missing expected argument", arguments: ["login", "270419"]))
    }
}
