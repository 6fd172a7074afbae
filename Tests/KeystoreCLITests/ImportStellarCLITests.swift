import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// `keystore import-stellar-cli`: stellar-cli's plaintext identity files (the layout of its config/secret.rs)
/// become vaults; nothing secret is left behind only when asked, and never before the vault opens.
@Suite(.offThePool) struct ImportStellarCLITests {
    static let golden = KeystoreHome.golden
    static let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
    /// Account 1 of that phrase (fixtures/vaults/vaults.json, golden-mnemonic).
    static let phraseAccount1 = "GBAW5XGWORWVFE2XTJYDTLDHXTY2Q2MO73HYCGB3XMFMQ562Q2W2GJQX"
    static let sep53Seed = "SAKICEVQLYWGSOJS4WW7HZJWAHZVEEBS527LHK5V4MLJALYKICQCJXMW"
    static let sep53Address = "GBXFXNDLV4LSWA4VB7YIL5GBD7BVNR22SGBTDKMO2SBZZHDXSKZYCP7L"

    /// A stellar-cli config directory inside the test's home, with `files` under identity/.
    func stellarConfig(_ home: KeystoreHome, _ files: [String: String]) throws -> String {
        let directory = home.path + "/stellar"
        try FileManager.default.createDirectory(atPath: directory + "/identity", withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: "\(directory)/identity/\(name).toml", atomically: false, encoding: .utf8) }
        return directory
    }

    @Test func everyKindOfIdentityFileEndsInOneLine() throws {
        let home = try KeystoreHome(inProcess: true)
        _ = try home.run(["signup", "--name", "taken", "--kdf", "interactive", "--pin-stdin"], stdin: "918273\n")
        let config = try stellarConfig(home, [
            "alice": "secret_key = \"\(Self.golden.seed)\"\n",
            "phrase": "seed_phrase = \"\(Self.phrase)\"\nhd_path = 1\n",
            "ledger": "hardware = \"ledger\"\npublic_key = \"\(Self.golden.address)\"\nhd_path = 0\n",
            "store": "entry_name = \"secure_store:org.stellar.cli-x\"\n",
            "watch": "public_key = \"\(Self.golden.address)\"\n",
            "Bob": "# imported from elsewhere\nsecret_key = '\(Self.sep53Seed)'   # a literal string\n",
            "bad": "secret_key = \(Self.golden.seed)\n",
            "taken": "secret_key = \"\(Self.sep53Seed)\"\n",
        ])
        let result = try home.run(["import-stellar-cli", "--config-dir", config, "--pin-stdin", "--kdf", "interactive"], stdin: "270419\n")
        #expect(result.status == 2 && result.stderr == "keystore: 1 of 8 stellar-cli identities could not be imported; see their lines.\n",
                "\(result.stderr)")
        let lines = Dictionary(uniqueKeysWithValues: result.stdout.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
            return (fields[0], fields[1])
        })
        #expect(lines["alice"] == "imported\tas alice (\(Self.golden.address))")
        #expect(lines["phrase"] == "imported\tas phrase (\(Self.phraseAccount1))")
        #expect(lines["Bob"] == "imported\tas bob (\(Self.sep53Address))")
        #expect(lines["ledger"]?.hasPrefix("skipped\ta hardware wallet") == true)
        #expect(lines["store"]?.hasPrefix("skipped\ta secure-store identity") == true)
        #expect(lines["watch"]?.hasPrefix("skipped\ta public key only") == true)
        #expect(lines["taken"]?.hasPrefix("skipped\tan identity named 'taken' already exists") == true)
        #expect(lines["bad"]?.hasPrefix("failed\t") == true && lines["bad"]?.contains("line 1") == true, "\(lines["bad"] ?? "")")
        #expect(!result.stdout.contains(Self.golden.seed) && !result.stdout.contains("illness"))
        for (name, address) in [("alice", Self.golden.address), ("phrase", Self.phraseAccount1), ("bob", Self.sep53Address)] {
            let login = try home.run(["login", "--name", name, "--pin-stdin"], stdin: "270419\n")
            #expect(login.stdout == address + "\n", "\(name): \(login.stderr)")
        }
        #expect(try home.run(["derive", "--name", "phrase", "--account", "7", "--pin-stdin"], stdin: "270419\n").status == 0,
                "a seed phrase becomes a phrase vault")
        #expect(FileManager.default.fileExists(atPath: config + "/identity/alice.toml"), "plaintext is kept unless asked")
    }

    @Test func deletePlaintextRemovesOnlyWhatWasImported() throws {
        let home = try KeystoreHome(inProcess: true)
        let config = try stellarConfig(home, ["alice": "secret_key = \"\(Self.golden.seed)\"\n", "watch": "public_key = \"\(Self.golden.address)\"\n"])
        let result = try home.run(["import-stellar-cli", "--all", "--config-dir", config, "--delete-plaintext", "--pin-stdin",
                                   "--kdf", "interactive"], stdin: "270419\n")
        #expect(result.status == 0 && result.stdout.contains("plaintext removed"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: config + "/identity/alice.toml"))
        #expect(FileManager.default.fileExists(atPath: config + "/identity/watch.toml"))
    }

    /// Killed at every step of an import with --delete-plaintext: the seed is always in the file or in a vault
    /// that opens with the PIN, and a run to the end leaves only the vault.
    @Test func theSeedSurvivesAKillAtEveryStep() throws {
        let home = try KeystoreHome(inProcess: true)
        let config = try stellarConfig(home, [:])
        let file = config + "/identity/alice.toml"
        var steps: [String] = []
        for stop in 1...40 {
            // Each run starts from the plaintext file alone, and stops at the next step.
            unlink(home.vaultPath("alice"))
            try "secret_key = \"\(Self.golden.seed)\"\n".write(toFile: file, atomically: false, encoding: .utf8)
            var process = home.keystore
            process.environment["KEYSTORE_TEST_CRASH_AT"] = String(stop)
            let result = try process.run(["import-stellar-cli", "alice", "--config-dir", config, "--delete-plaintext", "--pin-stdin",
                                          "--kdf", "interactive"], stdin: Array("270419\n".utf8))
            let inFile = (try? String(contentsOfFile: file, encoding: .utf8))?.contains(Self.golden.seed) == true
            let inVault = try home.run(["login", "--name", "alice", "--pin-stdin"], stdin: "270419\n").stdout == Self.golden.address + "\n"
            #expect(inFile || inVault, "after step \(stop) the seed is in neither place")
            guard result.status == 128 + SIGKILL else {
                #expect(result.status == 0 && !FileManager.default.fileExists(atPath: file) && inVault, "\(result.stderr)")
                break
            }
            steps.append(String(result.stderrLines.last ?? ""))
        }
        #expect(steps.contains { $0.contains("vault written, plaintext kept") } && steps.contains { $0.contains("plaintext overwritten") })
    }

    /// A plaintext file with another name elsewhere (a hard link: a backup, or a planted link to someone's file)
    /// is unlinked from stellar-cli's directory but never zeroed, and the output says the seed is still there.
    @Test func deletingPlaintextNeverZeroesThroughAHardLink() throws {
        let home = try KeystoreHome(inProcess: true)
        let config = try stellarConfig(home, ["alice": "secret_key = \"\(Self.golden.seed)\"\n", "bob": "secret_key = \"\(Self.sep53Seed)\"\n"])
        let outside = home.path + "/outside-copy.toml"
        try #require(link(config + "/identity/alice.toml", outside) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: outside))
        let result = try home.run(["import-stellar-cli", "--config-dir", config, "--delete-plaintext", "--pin-stdin", "--kdf", "interactive"],
                                  stdin: "270419\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == before, "the other link was zeroed")
        #expect(!FileManager.default.fileExists(atPath: config + "/identity/alice.toml"))
        #expect(result.stdout.contains("alice\timported\tas alice (\(Self.golden.address)), plaintext unlinked here but not overwritten: 1 other hard link still holds the seed"),
                "\(result.stdout)")
        // A file with no other name is overwritten and removed as before.
        #expect(result.stdout.contains("bob\timported\tas bob (\(Self.sep53Address)), plaintext removed"), "\(result.stdout)")
        let json = try home.run(["import-stellar-cli", "--config-dir", config, "--json", "--pin-stdin"], stdin: "270419\n")
        #expect(json.status == 2 || json.status == 0, "\(json.stderr)")
    }
}
