import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// `keystore backup` and `restore` (issue 43), in-process, checked against Debian's `age` and stellar-sdk.
@Suite(.offThePool) struct BackupCLITests {
    /// SEP-5 Test 1 (fixtures/sep5-mnemonics.json): accounts 0 and 3.
    static let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe"
    static let account0 = "GDRXE2BQUC3AZNPVFSCEZ76NJ3WWL25FYFK6RGZGIEKWE4SOOHSUJUJ6"
    static let account3 = "GAOD5NRAEORFE34G5D4EOSKIJB6V4Z2FGPBCJNQI6MNICVITE6CSYIAE"
    static let pin = "270419", newPIN = "503816"

    let source = try! KeystoreHome(inProcess: true)
    let target = try! KeystoreHome(inProcess: true)

    /// The source: the SEP-5 phrase's account 0 as `default`, and the golden vault (a random-like seed).
    func sourceWithTwo() throws {
        let recovered = try source.run(["recover", "--pin-stdin", "--kdf", "interactive"], stdin: "\(Self.phrase)\n\(Self.pin)\n")
        try #require(recovered.status == 0, "\(recovered.stderr)")
        try source.addGolden()
    }

    func backUp(_ extra: [String] = []) throws -> (file: String, key: String) {
        let file = source.path + "-backup.age"
        let made = try source.run(["backup", "--output", file, "--print-key", "--pin-stdin"] + extra, stdin: "\(Self.pin)\n")
        try #require(made.status == 0, "\(made.stderr)")
        return (file, made.stdout.trimmingCharacters(in: .newlines))
    }

    @Test func aBackupRestoresOnAnotherMachineUnderANewPIN() throws {
        try sourceWithTwo()
        let (file, key) = try backUp()
        defer { unlink(file) }
        #expect(key.hasPrefix("AGE-SECRET-KEY-1 ") && key.count == 89, "\(key)")
        // Restored from the key as shown, through a descriptor; the new PIN on standard input.
        let restored = try target.run(["restore", file, "--secret-fd", "3", "--pin-stdin", "--kdf", "interactive"],
                                      stdin: "\(Self.newPIN)\n", files: [3: key + "\n"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout == "default\t\(Self.account0)\n\(KeystoreHome.golden.name)\t\(KeystoreHome.golden.address)\n", "\(restored.stdout)")
        #expect(restored.stderr.contains("default (\(Self.account0)): new, from a recovery phrase"), "\(restored.stderr)")
        // The phrase's accounts are the same SEP-5 addresses at the same indexes.
        let derived = try target.run(["derive", "--account", "3", "--pin-stdin"], stdin: "\(Self.newPIN)\n")
        #expect(derived.stdout == Self.account3 + "\n", "\(derived.stderr)")
        #expect(try target.run(["login", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "\(Self.newPIN)\n").status == 0)
        // Neither keystore says its identities are in no backup: the restored ones are in the backup they came from.
        #expect(try source.run(["list"]).stderr.isEmpty)
        #expect(try target.run(["list"]).stderr.isEmpty)
        #expect(try target.run(["signup", "--name", "new", "--pin-stdin", "--kdf", "interactive"], stdin: "\(Self.newPIN)\n").status == 0)
        #expect(try target.run(["list"]).stderr == "keystore: in no backup made since its key last changed: new (keystore backup)\n")
    }

    /// `status` says of the identity it shows what `list` says: in no backup made since its key last changed, until
    /// one is made; `--json` says it per session.
    @Test func statusSaysWhenTheSignedInIdentityIsInNoBackup() throws {
        try source.addGolden()
        var keystore = try source.keystoreWithRuntime()
        let login = try keystore.run(["login", "--session", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: Array("\(Self.pin)\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
        keystore.environment["KEYSTORE_SESSION"] = String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count)).trimmingCharacters(in: .newlines)
        let note = "keystore: in no backup made since its key last changed: \(KeystoreHome.golden.name) (keystore backup)\n"
        let before = try keystore.run(["status"])
        #expect(before.status == 0 && before.stdout.contains(KeystoreHome.golden.address) && before.stderr == note, "\(before.stderr)")
        #expect(try keystore.run(["status", "--json"]).stdout.contains("\"inBackup\":false"))
        let file = source.path + "-backup.age"
        defer { unlink(file) }
        let made = try source.run(["backup", "--output", file, "--print-key", "--pin-stdin"], stdin: "\(Self.pin)\n")
        try #require(made.status == 0, "\(made.stderr)")
        let after = try keystore.run(["status"])
        #expect(after.status == 0 && after.stderr.isEmpty, "\(after.stderr)")
        #expect(try keystore.run(["status", "--json"]).stdout.contains("\"inBackup\":true"))
        // No session: still the one line that says so.
        keystore.environment["KEYSTORE_SESSION"] = nil
        #expect(try keystore.run(["status"]).stderrLines.count == 1)
    }

    @Test func dryRunChecksEverythingAndWritesNothing() throws {
        try sourceWithTwo()
        let (file, key) = try backUp(["--name", "default"])
        defer { unlink(file) }
        let checked = try target.run(["restore", file, "--dry-run", "--secret-fd", "3"], files: [3: key + "\n"])
        #expect(checked.status == 0 && checked.stdout.isEmpty, "\(checked.stderr)")
        #expect(checked.stderr.contains("nothing was written (--dry-run)"), "\(checked.stderr)")
        #expect(target.snapshot().isEmpty)
    }

    /// A dry run refuses what the restore itself would refuse, with its exit code: a different key under a name
    /// here (without --replace). Before, it said "nothing was written" and exited 0 for a restore that would fail.
    @Test func dryRunRefusesWhatTheRestoreWould() throws {
        try sourceWithTwo()
        let (file, key) = try backUp(["--name", "default"])
        defer { unlink(file) }
        let signup = try target.run(["signup", "--name", "default", "--kdf", "interactive", "--pin-stdin"], stdin: "\(Self.newPIN)\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let before = target.snapshot()
        let checked = try target.run(["restore", file, "--dry-run", "--secret-fd", "3"], files: [3: key + "\n"])
        #expect(checked.status == 6 && checked.stdout.isEmpty, "exit \(checked.status): \(checked.stderr)")
        #expect(checked.stderrLines.last?.contains("'default' here is") == true, "\(checked.stderr)")
        #expect(!checked.stderr.contains("nothing was written (--dry-run)"), "\(checked.stderr)")
        #expect(target.snapshot() == before)
    }

    /// A file past the largest backup is refused before it is decrypted, named as given (not capitalised, which
    /// would name another file) and without the signing commands' advice to sign its hash.
    @Test func aFileTooLargeToBeABackupIsNamedAsGiven() throws {
        let big = target.path + "-big.age"
        let fd = open(big, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { unlink(big) }
        try #require(ftruncate(fd, off_t(Keystore.largestBackupFile + 1)) == 0)
        close(fd)
        let result = try target.run(["restore", big, "--secret-fd", "3"], files: [3: "AGE-SECRET-KEY-1\n"])
        #expect(result.status == 2 && result.stdout.isEmpty && result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr == "keystore: \(big) is larger than \(Keystore.largestBackupFile >> 20) MiB, the most keystore reads.\n", "\(result.stderr)")
        #expect(target.snapshot().isEmpty)
    }

    @Test func aWrongKeyOrADamagedFileIsOneLineAndWritesNothing() throws {
        try sourceWithTwo()
        let (file, key) = try backUp()
        defer { unlink(file) }
        let other = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes[bytes.count - 10] ^= 0x01
        let damaged = target.path + "-damaged.age"
        try bytes.write(to: URL(fileURLWithPath: damaged))
        defer { unlink(damaged) }
        try Data(count: 200).write(to: URL(fileURLWithPath: target.path + "-zeros"))
        defer { unlink(target.path + "-zeros") }
        for (arguments, secret, status) in [([file], other, Int32(3)), ([damaged], key, 2), ([target.path + "-zeros"], key, 2),
                                            ([file + "-missing"], key, 2)] {
            let result = try target.run(["restore"] + arguments + ["--secret-fd", "3", "--pin-stdin"], stdin: "\(Self.newPIN)\n",
                                        files: [3: secret + "\n"])
            #expect(result.status == status && result.stderrLines.count == 1 && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains(String(key.dropFirst(17).prefix(8))), "the key is never echoed")
        }
        #expect(target.snapshot().isEmpty)
    }

    @Test func aNewKeyIsNotPrintedToAPipeUnlessAsked() throws {
        try sourceWithTwo()
        let file = source.path + "-backup.age"
        let refused = try source.run(["backup", "--output", file, "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(refused.status == 10 && refused.stdout.isEmpty && !FileManager.default.fileExists(atPath: file), "\(refused.stderr)")
        // Only a regular file is written, and replaced only with --force: never a device (through a link to
        // /dev/full here, so that a regression replaces the link, not the machine's device), a FIFO or a directory.
        let link = source.path + "-full", fifo = source.path + "-fifo"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/full")
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(link); unlink(fifo) }
        for (output, words) in [(link, "a symbolic link"), (fifo, "a FIFO"), (source.path, "a directory")] {
            let refused = try source.run(["backup", "--output", output, "--force", "--print-key", "--pin-stdin"], stdin: "\(Self.pin)\n")
            #expect(refused.status == 2 && refused.stderrLines.count == 1 && refused.stdout.isEmpty, "\(refused.stderr)")
            #expect(refused.stderr.contains("it is \(words), not a regular file"), "\(refused.stderr)")
        }
        var status = stat()
        #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
        #expect(!FileManager.default.fileExists(atPath: source.path + "/.backup-record"), "nothing recorded as backed up")
        // A file there already is replaced only with --force.
        let existing = source.path + "-existing.age"
        #expect(FileManager.default.createFile(atPath: existing, contents: Data("mine".utf8)))
        defer { unlink(existing) }
        let kept = try source.run(["backup", "--output", existing, "--print-key", "--pin-stdin"], stdin: "\(Self.pin)\n")
        let content = try String(contentsOfFile: existing, encoding: .utf8)
        #expect(kept.status == 6 && content == "mine", "\(kept.stderr)")
    }

    /// Debian's `age` opens what keystore writes with the recovery key as an age identity, and keystore restores what
    /// `age` encrypted itself.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age"), "needs Debian's age"))
    func ageOpensTheBackupAndKeystoreRestoresWhatAgeEncrypted() throws {
        try sourceWithTwo()
        let (file, key) = try backUp()
        let identity = source.path + "-identity.txt", plaintext = source.path + "-bundle.txt", again = source.path + "-again.age"
        defer { for path in [file, identity, plaintext, again] { unlink(path) } }
        try Data((key.replacingOccurrences(of: " ", with: "") + "\n").utf8).write(to: URL(fileURLWithPath: identity))
        chmod(identity, 0o600)
        let opened = try KeystoreProcess(program: "/usr/bin/age").run(["-d", "-i", identity, "-o", plaintext, file])
        #expect(opened.status == 0, "\(opened.stderr)")
        let bundle = try String(contentsOfFile: plaintext, encoding: .utf8)
        #expect(bundle.hasPrefix("stellar-keystore-backup v1\ncreated "))
        #expect(bundle.contains("\nidentity default\naddress \(Self.account0)\nseed S") && bundle.contains("\nseed \(KeystoreHome.golden.seed)\n"))
        // stellar-sdk finds each seed's address where the bundle says.
        let sdk = try KeystoreProcess(program: try StellarSDKPython.path()).run(["-c", """
            import sys
            from stellar_sdk import Keypair
            lines = open(sys.argv[1]).read().split("\\n")
            pairs = [(lines[i][8:], lines[i + 1][5:]) for i in range(len(lines) - 1) if lines[i].startswith("address ") and lines[i + 1].startswith("seed ")]
            assert len(pairs) == 2 and all(Keypair.from_secret(seed).public_key == address for address, seed in pairs), pairs
            print("ok")
            """, plaintext])
        #expect(sdk.stdout == "ok\n", "\(sdk.stderr)")
        // age encrypts the same bundle to the key's recipient; keystore restores it from the identity file.
        let recipient = try KeystoreProcess(program: "/usr/bin/age-keygen").run(["-y", identity]).stdout.trimmingCharacters(in: .newlines)
        let encrypted = try KeystoreProcess(program: "/usr/bin/age").run(["-e", "-a", "-r", recipient, "-o", again, plaintext])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let restored = try target.run(["restore", again, "--identity", identity, "--pin-stdin", "--kdf", "interactive"], stdin: "\(Self.newPIN)\n")
        #expect(restored.status == 0 && restored.stdout.contains(Self.account0), "\(restored.stderr)")
        // The restored keys sign what stellar-sdk verifies.
        let message = "00112233"
        let signed = try target.run(["sign", "--hex", message, "--pin-stdin"], stdin: "\(Self.newPIN)\n")
        let verified = try KeystoreProcess(program: try StellarSDKPython.path()).run(["-c", """
            import sys, base64
            from stellar_sdk import Keypair
            Keypair.from_public_key(sys.argv[1]).verify(bytes.fromhex(sys.argv[2]), base64.b64decode(sys.argv[3]))
            print("ok")
            """, Self.account0, message, signed.stdout.trimmingCharacters(in: .newlines)])
        #expect(verified.stdout == "ok\n", "\(signed.stdout) \(verified.stderr)")
    }

    /// docs/guides/backup.md's scripted backup and restore, run as written: its first two commands on one machine (a
    /// keystore home), the rest on another.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age-keygen"), "needs Debian's age"))
    func theGuidesScriptRunsAsWritten() throws {
        try sourceWithTwo()
        let block = try ReadmeTests.block("sh", containing: "--identity backup-key.txt", in: ReadmeTests.document("docs/guides/backup.md"))
        let parts = block.components(separatedBy: "# the laptop is lost")
        try #require(parts.count == 2, "\(block)")
        let work = source.path + "-guide"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try "\(Self.pin)\n".write(toFile: work + "/pin.txt", atomically: false, encoding: .utf8)
        var bash = KeystoreProcess(program: "/bin/bash")
        bash.environment["PATH"] = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
        for (home, part) in [(source.path, parts[0]), (target.path, "#" + parts[1])] {
            bash.environment["KEYSTORE_HOME"] = home
            let run = try bash.run(["-c", "set -e\ncd '\(work)'\n" + part])
            #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        }
        #expect(try target.run(["address"]).stdout == Self.account0 + "\n")
        #expect(try target.run(["address", "--name", KeystoreHome.golden.name]).stdout == KeystoreHome.golden.address + "\n")
    }

    /// A restore killed anywhere leaves each vault whole or absent, never half-written; run again, it finishes.
    @Test func aRestoreKilledAnywhereLeavesNoVaultHalfWritten() throws {
        try sourceWithTwo()
        let (file, key) = try backUp()
        defer { unlink(file) }
        let addresses = [Self.account0, KeystoreHome.golden.address]
        let spawned = try KeystoreHome()
        for _ in 0..<CrashConsistencyTests.kills {
            for name in ["default", KeystoreHome.golden.name] { unlink(spawned.vaultPath(name)) }
            let running = try spawned.keystore.start(["restore", file, "--secret-fd", "3", "--pin-stdin", "--kdf", "interactive"],
                                                     stdin: Array("\(Self.newPIN)\n".utf8), files: [3: Array((key + "\n").utf8)])
            usleep(UInt32(Double.random(in: 0...0.4) * 1_000_000))
            kill(running.pid, SIGKILL)
            _ = try running.wait()
            let list = try spawned.run(["list"])
            #expect(list.status == 0, "\(list.stderr)")
            for line in list.stdout.split(separator: "\n") {
                #expect(addresses.contains { line.hasSuffix("\t\($0)") }, "\(line)")
            }
        }
        let again = try spawned.run(["restore", file, "--secret-fd", "3", "--pin-stdin", "--kdf", "interactive"],
                                    stdin: "\(Self.newPIN)\n", files: [3: key + "\n"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try spawned.run(["list"]).stdout.split(separator: "\n").count == 2)
    }

    /// A new key that could not be written out (standard output on a full disk) leaves no backup it alone would
    /// open: exit 11, one line, no file, nothing recorded. Before, the file was written and recorded and its key lost.
    @Test func aKeyLostToAFullDiskLeavesNoBackup() throws {
        try sourceWithTwo()
        let file = source.path + "-lost.age"
        defer { unlink(file) }
        var bash = KeystoreProcess(program: "/bin/bash")
        bash.environment["KEYSTORE_HOME"] = source.path
        let run = try bash.run(["-c", "exec \"$0\" backup --output \"$1\" --name default --print-key --pin-stdin > /dev/full",
                                KeystoreProcess.binary, file], stdin: Array("\(Self.pin)\n".utf8))
        #expect(run.status == 11 && run.stderrLines.count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("No space left on device") && run.stderr.contains("the backup was not written"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file) && !FileManager.default.fileExists(atPath: source.path + "/.backup-record"))
        #expect(try source.run(["list"]).stderr.contains("in no backup made since its key last changed: default"))
    }
}
