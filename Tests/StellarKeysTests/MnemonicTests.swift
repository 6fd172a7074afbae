import Foundation
import Testing
@testable import StellarKeys
import TestFixtures

struct SEP5Vectors: Decodable {
    struct Account: Decodable { let path, address, secretSeed: String }
    struct Vector: Decodable {
        let name, mnemonic, passphrase, bip39Seed, key44148: String
        let entropy: String?
        let accounts: [Account]
    }
    let vectors: [Vector]
    static func load() throws -> [Vector] { try Fixtures.load(Self.self, "sep5-mnemonics.json").vectors }
}


@Suite struct MnemonicTests {
    @Test func theWordlistIsTheCanonicalOne() throws {
        let joined = BIP39Wordlist.english.map { $0 + "\n" }.joined()
        let digest = Array(joined.utf8).withUnsafeBytes { Sodium.sha256($0) }
        // The SHA-256 published for bip-0039/english.txt.
        #expect(Hex.string(digest) == "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda")
        let fixture = try String(contentsOf: Fixtures.root.appendingPathComponent("bip39-english.txt"), encoding: .utf8)
        #expect(fixture == joined && BIP39Wordlist.english.count == 2048 && BIP39Wordlist.index.count == 2048)
    }

    @Test func everySEP5VectorDerivesItsSeedRootAndTenAccounts() throws {
        let vectors = try SEP5Vectors.load()
        #expect(vectors.count == 5)
        for vector in vectors {
            let mnemonic = try Mnemonic(secure(vector.mnemonic))
            #expect(text(mnemonic.phrase) == vector.mnemonic)
            let seed = try mnemonic.seed(passphrase: vector.passphrase.isEmpty ? nil : secure(vector.passphrase))
            #expect(seed.withUnsafeBytes { Hex.string($0) } == vector.bip39Seed, "\(vector.name)")
            let root = AccountRoot(bip39Seed: seed)
            #expect(root.key.withUnsafeBytes { Hex.string($0) } == vector.key44148)
            #expect(vector.accounts.count == 10)
            for (index, account) in vector.accounts.enumerated() {
                #expect(account.path == "m/44'/148'/\(index)'")
                let keyPair = try root.keyPair(account: UInt32(index))
                #expect(keyPair.publicKey.accountID == account.address)
                #expect(text(keyPair.secretSeedStrKey()) == account.secretSeed)
            }
            if let entropy = vector.entropy {
                var bytes = Fixtures.hex(entropy)
                #expect(text(try Mnemonic(entropy: SecureBytes(consuming: &bytes)).phrase) == vector.mnemonic)
            }
        }
    }

    @Test func generatedPhrasesRoundTrip() throws {
        for count in Mnemonic.wordCounts {
            for _ in 0..<20 {
                let mnemonic = try Mnemonic.generate(wordCount: count)
                #expect(mnemonic.wordCount == count)
                #expect(text(try Mnemonic(mnemonic.phrase).phrase) == text(mnemonic.phrase))
            }
        }
    }

    @Test func typingIsForgivenButMistakesAreNamed() throws {
        let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
        let messy = "  ILLNESS spike\tRetreat truth  genius clock\nbrain pass fit cave bargain toe \r\n"
        #expect(text(try Mnemonic(secure(messy)).phrase) == phrase)
        // Full-width letters normalise (NFKD) to the ASCII word.
        #expect(text(try Mnemonic(secure(phrase.replacingOccurrences(of: "toe", with: "ｔｏｅ"))).phrase) == phrase)

        #expect(throws: MnemonicError.wrongWordCount(11)) { try Mnemonic(secure(phrase.replacingOccurrences(of: " toe", with: ""))) }
        #expect(throws: MnemonicError.wrongWordCount(13)) { try Mnemonic(secure(phrase + " toe")) }
        #expect(throws: MnemonicError.wrongWordCount(0)) { try Mnemonic(secure("  ")) }
        let typo = try #require(throws: MnemonicError.self) {
            try Mnemonic(secure(phrase.replacingOccurrences(of: "genius", with: "genuis")), offeringCorrections: true)
        }
        guard case .unknownWord(let position, let suggestions) = typo else { Issue.record("\(typo)"); return }
        #expect(position == 5 && suggestions.contains("genius"))
        #expect(!typo.message.contains("genuis"), "the typed word is not echoed")
        // Two words swapped: every word valid, checksum wrong.
        let swapped = "spike illness retreat truth genius clock brain pass fit cave bargain toe"
        #expect(throws: MnemonicError.badChecksum) { try Mnemonic(secure(swapped)) }
    }

    /// Found by fuzzing: a pasted block of text as one "word" was compared with all 2048 words in full.
    @Test func suggestionsComeOnlyFromWordsWithinTwoEdits() {
        #expect(Mnemonic.nearest(to: Array("abandonn".utf8)) == ["abandon"])
        #expect(Mnemonic.nearest(to: Array("zo".utf8)).contains("zoo"))
        #expect(Mnemonic.nearest(to: Array(String(repeating: "abandon", count: 500).utf8)) == [])
        #expect(Mnemonic.nearest(to: Array("qqqqqqqqqq".utf8)) == [])
        #expect(BIP39Wordlist.longestWord == 8)
    }

    @Test func aPassphraseIsNormalisedToo() throws {
        let mnemonic = try Mnemonic(secure("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"))
        // "é" precomposed and decomposed give the same seed; full-width "ｐ" equals "p".
        let precomposed = try mnemonic.seed(passphrase: secure("caf\u{E9}"))
        let decomposed = try mnemonic.seed(passphrase: secure("cafe\u{301}"))
        #expect(precomposed.isEqual(to: decomposed))
        #expect(try mnemonic.seed(passphrase: secure("ｐ4ss")).isEqual(to: mnemonic.seed(passphrase: secure("p4ss"))))
        #expect(try !mnemonic.seed(passphrase: secure("p4ss")).isEqual(to: mnemonic.seed()))
    }

    @Test func secretsArePrintedRedacted() throws {
        let mnemonic = try Mnemonic.generate()
        let root = AccountRoot(bip39Seed: try mnemonic.seed())
        #expect("\(mnemonic)" == "Mnemonic(24 words, redacted)" && "\(root)" == "AccountRoot(redacted)")
    }
}

