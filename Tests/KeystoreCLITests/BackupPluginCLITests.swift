import Foundation
import Testing
import TestFixtures

/// `keystore backup --recipient age1NAME1…` and `restore --identity` with `AGE-PLUGIN-…` lines, against
/// Tests/Interop/age-plugin-keystoretest (a plugin written apart, in Python, from age-plugin.md) and Debian's `age`,
/// which runs the same plugin: each opens what the other wrote. Hostile plugins (picked by the behaviour their key
/// names) get one line, exit 8, and nothing written.
@Suite(.offThePool) struct BackupPluginCLITests {
    static let interop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop").path
    static let path = "\(interop):/usr/bin:/bin"
    static let pin = "270419", newPIN = "503816"

    let source = try! KeystoreHome(inProcess: true)
    let target = try! KeystoreHome(inProcess: true)
    let work = TemporaryDirectory()

    init() throws {
        try FileManager.default.createDirectory(atPath: work.path, withIntermediateDirectories: true)
    }

    /// `home`'s keystore with the test plugin on PATH.
    func keystore(_ home: KeystoreHome) -> KeystoreProcess {
        var process = home.keystore
        process.environment["PATH"] = Self.path
        return process
    }

    /// A new key of the test plugin: its recipient, and its identity file written in the work directory.
    func pluginKey(_ behaviour: Int = 0) throws -> (recipient: String, identityFile: String) {
        let made = try KeystoreProcess(program: Self.interop + "/age-plugin-keystoretest").run(["--keygen", String(behaviour)])
        let lines = made.stdout.split(separator: "\n")
        try #require(made.status == 0 && lines.count == 2, "\(made.stderr)")
        let file = work.path + "/identity-\(UUID().uuidString).txt"
        try Data(made.stdout.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        return (String(lines[0].dropFirst("# recipient: ".count)), file)
    }

    func sourceWithGolden() throws {
        try source.addGolden()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/age"), "needs Debian's age"))
    func ageOpensABackupMadeToAPluginAndKeystoreRestoresWhatAgeEncryptedToIt() throws {
        try sourceWithGolden()
        let (recipient, identityFile) = try pluginKey()
        let backup = work.path + "/backup.age", bundle = work.path + "/bundle.txt", again = work.path + "/again.age"
        // Through a recipients file, as age reads one: a comment, the plugin's recipient.
        let recipients = work.path + "/recipients.txt"
        try "# the test plugin's key\n\(recipient)\n".write(toFile: recipients, atomically: false, encoding: .utf8)
        let made = try keystore(source).run(["backup", "--recipients-file", recipients, "--output", backup, "--pin-stdin"],
                                             stdin: Array("\(Self.pin)\n".utf8))
        #expect(made.status == 0 && made.stdout.isEmpty, "\(made.stderr)")
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: backup)).prefix(200), as: UTF8.self).contains("\n-> keystoretest "))
        // Debian's age, running the same plugin, opens it.
        var age = KeystoreProcess(program: "/usr/bin/age")
        age.environment["PATH"] = Self.path
        let opened = try age.run(["-d", "-i", identityFile, "-o", bundle, backup])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(try String(contentsOfFile: bundle, encoding: .utf8).contains("\nseed \(KeystoreHome.golden.seed)\n"))
        // age encrypts the bundle to the plugin's recipient; keystore restores it with the plugin's identity.
        let encrypted = try age.run(["-e", "-r", recipient, "-o", again, bundle])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let restored = try keystore(target).run(["restore", again, "--identity", identityFile, "--pin-stdin", "--kdf", "interactive"],
                                                stdin: Array("\(Self.newPIN)\n".utf8))
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout == "\(KeystoreHome.golden.name)\t\(KeystoreHome.golden.address)\n")
        // And keystore opens its own backup with the plugin's identity, an X25519 key beside it in the file.
        let checked = try keystore(target).run(["restore", backup, "--identity", identityFile, "--dry-run"])
        #expect(checked.status == 0 && checked.stderr.contains("the same key is here already"), "\(checked.stderr)")
    }

    /// Each failing plugin is one line, exit 8, and nothing written: no backup file, no backup record, no vault.
    @Test func aFailingPluginIsOneLineAndWritesNothing() throws {
        try sourceWithGolden()
        let backup = work.path + "/backup.age"
        let cases: [(Int, String)] = [
            (1, "The age plugin age-plugin-keystoretest stopped before it finished (exit status 3): it said \"age-plugin-keystoretest: the test token went away\"."),
            (2, "The age plugin age-plugin-keystoretest broke the plugin protocol: it wrote something that is not a stanza; it was stopped."),
            (3, "The age plugin age-plugin-keystoretest broke the plugin protocol: it sent a stanza of over 64 KiB; it was stopped."),
            (5, "The age plugin age-plugin-keystoretest failed: no PIN, no key (it asked for a secret, and there was nobody to ask)."),
        ]
        for (behaviour, message) in cases {
            let made = try keystore(source).run(["backup", "--recipient", try pluginKey(behaviour).recipient, "--output", backup, "--pin-stdin"],
                                                 stdin: Array("\(Self.pin)\n".utf8))
            #expect(made.status == 8 && made.stdout.isEmpty && made.stderr == "keystore: \(message)\n", "\(behaviour): \(made.stderr)")
            #expect(!FileManager.default.fileExists(atPath: backup))
            #expect(!FileManager.default.fileExists(atPath: source.path + "/.backup-record"))
        }
        // Not installed: found before any PIN is asked (none is given here).
        var withoutPlugin = source.keystore
        withoutPlugin.environment["PATH"] = "/usr/bin:/bin"
        let notFound = try withoutPlugin.run(["backup", "--recipient", try pluginKey().recipient, "--output", backup, "--pin-stdin"])
        #expect(notFound.status == 8 && notFound.stderrLines.count == 1
                && notFound.stderr.contains("age-plugin-keystoretest is not installed"), "\(notFound.stderr)")
        #expect(!FileManager.default.fileExists(atPath: backup))
    }

    @Test func aFailingPluginIdentityRestoresNothing() throws {
        try sourceWithGolden()
        let (recipient, _) = try pluginKey()
        let backup = work.path + "/backup.age"
        let made = try keystore(source).run(["backup", "--recipient", recipient, "--output", backup, "--pin-stdin"],
                                             stdin: Array("\(Self.pin)\n".utf8))
        try #require(made.status == 0, "\(made.stderr)")
        for behaviour in [1, 2] {
            let restored = try keystore(target).run(["restore", backup, "--identity", try pluginKey(behaviour).identityFile, "--pin-stdin"],
                                                    stdin: Array("\(Self.newPIN)\n".utf8))
            #expect(restored.status == 8 && restored.stderrLines.count == 1 && restored.stdout.isEmpty, "\(behaviour): \(restored.stderr)")
        }
        // A well-behaved plugin whose key is another: no file key, as a wrong key.
        let other = try keystore(target).run(["restore", backup, "--identity", try pluginKey().identityFile, "--pin-stdin"],
                                             stdin: Array("\(Self.newPIN)\n".utf8))
        #expect(other.status == 3 && other.stderrLines.count == 1, "\(other.stderr)")
        #expect(target.snapshot().isEmpty)
    }

    /// A plugin's PIN request on a real terminal: asked with echo off, as keystore's own prompts are.
    @Test(.enabled(if: Tmux.isInstalled, "needs tmux"))
    func aPluginAsksItsPINOnTheTerminalWithEchoOff() throws {
        try sourceWithGolden()
        let (recipient, _) = try pluginKey(5)
        let backup = work.path + "/backup.age", pinFile = work.path + "/pin.txt"
        try "\(Self.pin)\n".write(toFile: pinFile, atomically: false, encoding: .utf8)
        chmod(pinFile, 0o600)
        let tmux = try Tmux(running: "env PATH=\(Self.path) KEYSTORE_HOME=\(source.path) \(KeystoreProcess.binary) backup "
            + "--recipient \(recipient) --output \(backup) --pin-file \(pinFile); echo exit=$?; sleep 30")
        let asked = try tmux.screen(until: "PIN of the keystoretest key:")
        #expect(asked.contains("age-plugin-keystoretest: PIN of the keystoretest key:"), "\(asked)")
        try tmux.type("123456", "Enter")
        let done = try tmux.screen(until: "exit=")
        #expect(done.contains("exit=0") && !done.contains("123456"), "\(done)")
        #expect(FileManager.default.fileExists(atPath: backup))
    }
}
