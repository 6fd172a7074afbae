import Foundation
import Testing
import TestFixtures

/// SEP-5 Test 1 and Test 4 (fixtures/sep5-mnemonics.json).
private let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
private let account0 = "GDRXE2BQUC3AZNPVFSCEZ76NJ3WWL25FYFK6RGZGIEKWE4SOOHSUJUJ6"
private let account3 = "GAOD5NRAEORFE34G5D4EOSKIJB6V4Z2FGPBCJNQI6MNICVITE6CSYIAE"
private let passphrasePhrase = "cable spray genius state float twenty onion head street palace net private method loan turn phrase state blanket interest dry amazing dress blast tube"
private let passphraseAccount2 = "GCLAQF5H5LGJ2A6ACOMNEHSWYDJ3VKVBUBHDWFGRBEPAVZ56L4D7JJID"

@Suite(.offThePool) struct MnemonicCLITests {
    @Test func recoverRestoresTheSEP5AccountsAndDeriveAddsMore() throws {
        let home = try KeystoreHome(inProcess: true)
        let recovered = try home.run(["recover", "--pin-stdin", "--kdf", "interactive"], stdin: "\(phrase)\n270419\n")
        #expect(recovered.status == 0 && recovered.stdout == account0 + "\n", "\(recovered.stderr)")
        let derived = try home.run(["derive", "--account", "3", "--add", "third", "--pin-stdin", "--json"], stdin: "270419\n")
        let object = try JSONSerialization.jsonObject(with: Data(derived.stdoutBytes)) as? [String: Any]
        #expect(object?["address"] as? String == account3 && object?["account"] as? Int == 3 && object?["name"] as? String == "third")
        // What was added is said, not only printed as an address.
        #expect(derived.stderr.contains("added identity third (\(account3)): account 3 of default's recovery phrase, under the same PIN"),
                "\(derived.stderr)")
        #expect(try home.run(["login", "--name", "third", "--pin-stdin"], stdin: "270419\n").stdout == account3 + "\n")
        // The phrase is nowhere on disk or in any output.
        for (_, bytes) in home.snapshot() { #expect(!String(decoding: bytes, as: UTF8.self).contains("illness spike")) }
        #expect(!(recovered.stdout + recovered.stderr + derived.stderr).contains("illness"))
    }

    @Test func aPassphraseIsReadAfterThePhrase() throws {
        let home = try KeystoreHome(inProcess: true)
        let result = try home.run(["recover", "--passphrase", "--account", "2", "--pin-stdin", "--kdf", "interactive"],
                                  stdin: "\(passphrasePhrase)\np4ssphr4se\n270419\n")
        #expect(result.status == 0 && result.stdout == passphraseAccount2 + "\n", "\(result.stderr)")
    }

    @Test func signupWithAPhraseShowsItOnceAndRecoverGivesTheSameKey() throws {
        let home = try KeystoreHome(inProcess: true)
        let refused = try home.run(["signup", "--mnemonic", "--pin-stdin", "--kdf", "interactive"], stdin: "270419\n")
        #expect(refused.status == 10 && refused.stdout.isEmpty && home.vaults().isEmpty)

        let signup = try home.run(["signup", "--mnemonic", "--words", "12", "--print-phrase", "--pin-stdin", "--kdf", "interactive"],
                                  stdin: "270419\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        let lines = signup.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].split(separator: " ").count == 12)
        let restored = try home.run(["recover", "--name", "restored", "--pin-stdin", "--kdf", "interactive"],
                                    stdin: "\(lines[0])\n918273\n")
        #expect(restored.stdout == lines[1] + "\n")
    }

    @Test(arguments: [
        // Off the terminal, only the position: the nearest word would be the secret word itself.
        (phrase.replacingOccurrences(of: "genius", with: "genuis"), "Word 5 of the recovery phrase is not in the BIP39 English list; check its spelling."),
        ("spike illness retreat truth genius clock brain pass fit cave bargain toe", "checksum does not match"),
        ("illness spike retreat truth genius clock brain pass fit cave bargain", "has 12, 15, 18, 21 or 24 words, not 11"),
        ("", "not 0"),
    ])
    func aBadPhraseSaysWhatIsWrongWithoutRepeatingIt(_ bad: String, _ message: String) throws {
        let home = try KeystoreHome(inProcess: true)
        let result = try home.run(["recover", "--pin-stdin"], stdin: "\(bad)\n270419\n")
        #expect(result.status == 2 && result.stderrLines.count == 1 && result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("illness") && !result.stderr.contains("genuis"))
        #expect(home.vaults().isEmpty)
    }

    @Test func typingIsForgiven() throws {
        let home = try KeystoreHome(inProcess: true)
        let messy = "  " + phrase.uppercased().replacingOccurrences(of: " ", with: "   ") + "  "
        let result = try home.run(["recover", "--pin-stdin", "--kdf", "interactive"], stdin: "\(messy)\n270419\n")
        #expect(result.status == 0 && result.stdout == account0 + "\n")
    }

    @Test func deriveNeedsAPhraseIdentity() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let result = try home.run(["derive", "--account", "1", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "270419\n")
        #expect(result.status == 2 && result.stderr.contains("was not made from a recovery phrase"))
    }

    @Test func thePhraseTypedAtTheTerminalIsNotEchoed() throws {
        let home = try KeystoreHome(inProcess: true)
        let terminal = try PseudoTerminal()
        let recover = try home.keystore.start(["recover", "--kdf", "interactive"], terminal: terminal.path)
        terminal.waitFor("Recovery phrase: ")
        terminal.type(phrase)
        terminal.waitFor("New PIN (6 digits): ")
        terminal.type("270419")
        terminal.waitFor("Repeat the PIN: ")
        terminal.type("270419")
        let result = try recover.wait()
        #expect(result.status == 0 && result.stdout == account0 + "\n", "\(result.stderr)")
        #expect(!terminal.screen.contains("illness"))
    }
}
