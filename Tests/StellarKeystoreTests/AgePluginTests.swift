import Foundation
import Synchronization
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures

/// The age plugin client against Tests/Interop/age-plugin-keystoretest, a plugin written apart from it (Python,
/// from age-plugin.md), well-behaved and hostile by the behaviour its key names. Every plugin started here is
/// stopped and reaped by the client before the call returns, whatever happened.
@Suite(.offThePool) struct AgePluginTests {
    static let interop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop").path
    /// The test plugin's directory first, then the system's (for python3).
    static let environment = ["PATH": "\(interop):/usr/bin:/bin", "KEYSTORE_SESSION": "a-session-token-is-a-secret"]
    static func host(_ presenter: any AgePluginPresenter = NobodyToAsk(), timeout: Duration = .seconds(30)) -> AgePluginHost {
        AgePluginHost(presenter: presenter, environment: environment, timeout: timeout)
    }

    /// A new key of the test plugin with `behaviour`: its recipient and its identity file's text.
    static func key(_ behaviour: Int = 0) throws -> (recipient: String, identityFile: SecureBytes) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: interop + "/age-plugin-keystoretest")
        process.arguments = ["--keygen", String(behaviour)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = output.split(separator: "\n")
        try #require(process.terminationStatus == 0 && lines.count == 2, "\(output)")
        return (String(lines[0].dropFirst("# recipient: ".count)), SecureBytes(copying: Array(output.utf8).withUnsafeBytes { $0 }))
    }

    static let plaintext = SecureBytes(copying: Array("a bundle of keys".utf8).withUnsafeBytes { $0 })

    /// What `behaviour`'s plugin does when it wraps a file key.
    static func wrapping(_ behaviour: Int, _ presenter: any AgePluginPresenter = NobodyToAsk(), timeout: Duration = .seconds(30)) throws -> AgeError? {
        let (recipient, _) = try key(behaviour)
        do throws(AgeError) {
            _ = try AgeFile.encrypt(plaintext, to: [AgeFile.recipient(recipient, plugins: host(presenter, timeout: timeout))])
            return nil
        } catch {
            return error
        }
    }

    /// What `behaviour`'s plugin does when it unwraps a file key wrapped by a well-behaved one with the same key.
    static func unwrapping(_ behaviour: Int, _ presenter: any AgePluginPresenter = NobodyToAsk()) throws -> Result<SecureBytes, AgeError> {
        let (recipient, identityFile) = try key(behaviour)
        // The well-behaved twin of that key wraps; the behaviour is the identity's.
        let (prefix, data) = try Array(recipient.utf8).withUnsafeBytes { try Bech32.decodeWithPrefix($0) }
        let wellBehaved = String(decoding: ([0] + data.dropFirst()).withUnsafeBytes { Bech32.encode(prefix: prefix, data: $0) }, as: UTF8.self)
        let file = try AgeFile.encrypt(plaintext, to: [AgeFile.recipient(wellBehaved, plugins: host())])
        return Result { () throws(AgeError) in
            try AgeFile.decrypt(file, with: AgeFile.identities(inFile: identityFile, plugins: host(presenter)))
        }
    }

    @Test func aFileEncryptedToAPluginRecipientOpensWithItsIdentity() throws {
        let (recipient, identityFile) = try Self.key()
        let other = AgeX25519Identity.generate()
        let file = try AgeFile.encrypt(Self.plaintext, to: [AgeFile.recipient(recipient, plugins: Self.host()), other.recipient])
        let header = try AgeHeader.parse(file)
        #expect(header.stanzas.map(\.type) == ["keystoretest", "X25519"])
        #expect(try AgeFile.decrypt(file, with: AgeFile.identities(inFile: identityFile, plugins: Self.host())).isEqual(to: Self.plaintext))
        // The X25519 identity opens it too; another key of the plugin's does not (the plugin sends no file key).
        #expect(try AgeFile.decrypt(file, with: [other]).isEqual(to: Self.plaintext))
        #expect(throws: AgeError.noMatchingIdentity(stanzaTypes: ["keystoretest", "X25519"])) {
            try AgeFile.decrypt(file, with: AgeFile.identities(inFile: Self.key().identityFile, plugins: Self.host()))
        }
    }

    @Test func aPluginWhoseIdentityComesSecondIsStillTried() throws {
        let (recipient, identityFile) = try Self.key()
        let file = try AgeFile.encrypt(Self.plaintext, to: [AgeFile.recipient(recipient, plugins: Self.host())])
        let mixed = "# an X25519 key that is not the file's\n\(String(decoding: AgeX25519Identity.generate().encoded.withUnsafeBytes { Array($0) }, as: UTF8.self))\n"
            + identityFile.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let identities = try AgeFile.identities(inFile: SecureBytes(copying: Array(mixed.utf8).withUnsafeBytes { $0 }), plugins: Self.host())
        #expect(identities.count == 2 && identities[1] is AgePluginIdentity)
        #expect(try AgeFile.decrypt(file, with: identities).isEqual(to: Self.plaintext))
    }

    /// The plugin runs with no `KEYSTORE_` variable (a session token is a secret), no argument but the state
    /// machine's, in the temporary directory, with no descriptor of this process's.
    @Test func thePluginGetsNoSecretInItsEnvironmentOrArguments() throws {
        let error = try Self.wrapping(11)
        // The host's environment has no TMPDIR: /tmp, as age's os.TempDir gives.
        // Nor any descriptor of this process's but the three of the protocol.
        let expected = "variables: ; arguments: --age-plugin=recipient-v1; directory: /tmp; descriptors: 0,1,2"
        #expect(error == .pluginRefused("keystoretest", message: expected, unanswered: nil))
    }

    @Test func aPluginIsLookedForInAbsoluteDirectoriesOfPATHOnly() throws {
        let (recipient, _) = try Self.key()
        // The plugin's directory, as a path relative to the working directory: never searched.
        let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
        let relative = String(repeating: "../", count: depth) + Self.interop.dropFirst()
        #expect(FileManager.default.isExecutableFile(atPath: relative + "/age-plugin-keystoretest"))
        for path in [relative, "", ":/usr/bin", "/nonexistent"] {
            #expect(throws: AgeError.pluginNotFound("keystoretest"), "PATH=\(path)") {
                try AgeFile.recipient(recipient, plugins: AgePluginHost(environment: ["PATH": path]))
            }
        }
    }

    /// A name is age-plugin.md's letters, digits and `-_.+`: nothing that could name a file elsewhere.
    @Test func aPluginNameWithASlashOrAnotherCharacterIsRefused() throws {
        for name in ["a/b", "../x", "x y", "a\\b", "ä"] {
            let recipient = String(decoding: [UInt8](repeating: 7, count: 8).withUnsafeBytes {
                Bech32.encode(prefix: Array("age1\(name)".utf8), data: $0)
            }, as: UTF8.self)
            #expect(AgePluginRecipient.isPluginRecipient(recipient))
            #expect(throws: AgeError.self, "\(name)") { try AgeFile.recipient(recipient, plugins: Self.host()) }
            let identity = Array(String(decoding: Data().withUnsafeBytes {
                Bech32.encode(prefix: Array("AGE-PLUGIN-\(name.uppercased())-".utf8), data: $0, uppercase: true)
            }, as: UTF8.self).utf8)
            #expect(throws: AgeError.invalidIdentity("line 1 of the identity file is not a plugin's identity (AGE-PLUGIN-NAME-1…)"), "\(name)") {
                try AgeFile.identities(inFile: SecureBytes(copying: identity.withUnsafeBytes { $0 }), plugins: Self.host())
            }
        }
    }

    @Test func aPluginThatDiesIsDescribedInOneLine() throws {
        #expect(try Self.wrapping(1) == .pluginFailed(
            "keystoretest", reason: "stopped before it finished (exit status 3): it said \"age-plugin-keystoretest: the test token went away\""))
        guard case .failure(.pluginFailed("keystoretest", let reason)) = try Self.unwrapping(1) else { Issue.record(); return }
        #expect(reason.hasPrefix("stopped before it finished (exit status 3)"))
    }

    @Test func aPluginThatWritesGarbageOrTooMuchIsStopped() throws {
        #expect(try Self.wrapping(2) == .pluginBrokeProtocol("keystoretest", reason: "it wrote something that is not a stanza"))
        #expect(try Self.wrapping(3) == .pluginBrokeProtocol("keystoretest", reason: "it sent a stanza of over 64 KiB"))
        #expect(try Self.wrapping(8) == .pluginBrokeProtocol("keystoretest", reason: "a recipient-stanza is for a file key that was not sent"))
        #expect(try Self.wrapping(10) == .pluginBrokeProtocol("keystoretest", reason: "it wrote over 1 MiB"))
        guard case .failure(let error) = try Self.unwrapping(9) else { Issue.record(); return }
        #expect(error == .pluginBrokeProtocol("keystoretest", reason: "its file key is not 16 bytes"))
    }

    @Test func aPluginThatNeverAnswersIsStoppedAfterTheTimeout() throws {
        for (timeout, events) in [(2, [String]()), (7, ["waiting keystoretest"])] {
            let start = ContinuousClock.now
            let presenter = Recorder()
            #expect(try Self.wrapping(4, presenter, timeout: .seconds(timeout)) == .pluginTimedOut("keystoretest", seconds: timeout))
            let took = ContinuousClock.now - start
            #expect(took >= .seconds(timeout) && took < .seconds(timeout + 10), "\(took)")
            // The person is told once the plugin has been silent for 5 seconds, and not before.
            #expect(presenter.events.withLock { $0 } == events)
        }
    }

    @Test func aRequestForASecretGoesToThePresenterOrFails() throws {
        // Nobody to ask: the plugin is told so, and its error says what it asked for.
        #expect(try Self.wrapping(5) == .pluginRefused("keystoretest", message: "no PIN, no key", unanswered: "a secret"))
        let asked = Recorder(secret: "123456")
        #expect(try Self.wrapping(5, asked) == nil)
        #expect(asked.events.withLock { $0 } == ["ask secret keystoretest: PIN of the keystoretest key:"])
        let wrong = Recorder(secret: "000000")
        #expect(try Self.wrapping(5, wrong) == .pluginRefused("keystoretest", message: "no PIN, no key", unanswered: nil))
        guard case .success(let opened) = try Self.unwrapping(5, Recorder(secret: "123456")) else { Issue.record(); return }
        #expect(opened.isEqual(to: Self.plaintext))
    }

    @Test func messagesConfirmationsAndUnknownCommandsAreAnswered() throws {
        let yes = Recorder(confirm: true)
        #expect(try Self.wrapping(6, yes) == nil)
        #expect(yes.events.withLock { $0 } == ["show keystoretest: touch the keystoretest key", "confirm keystoretest: Go on? [go on|stop]"])
        #expect(try Self.wrapping(6, Recorder(confirm: false)) == .pluginRefused("keystoretest", message: "stopped, as asked", unanswered: nil))
        // No one to show the message to or to confirm: the plugin decides, and this one goes on.
        #expect(try Self.wrapping(6) == nil)
        #expect(try Self.wrapping(7) == nil)
    }

    @Test func aPluginThatIsNotInstalledIsFoundMissingBeforeItIsNeeded() throws {
        let recipient = String(decoding: [UInt8](repeating: 1, count: 33).withUnsafeBytes {
            Bech32.encode(prefix: Array("age1nosuchplugin".utf8), data: $0)
        }, as: UTF8.self)
        #expect(throws: AgeError.pluginNotFound("nosuchplugin")) { try AgeFile.recipient(recipient, plugins: Self.host()) }
        #expect(AgeError.pluginNotFound("nosuchplugin").message
            == "The age plugin age-plugin-nosuchplugin is not installed: no directory of PATH has it.")
    }

    /// A presenter that answers as told and records what it was asked.
    final class Recorder: AgePluginPresenter {
        let events = Mutex<[String]>([])
        let secret: String?
        let confirmation: Bool?

        init(secret: String? = nil, confirm: Bool? = nil) {
            self.secret = secret
            confirmation = confirm
        }

        func show(_ message: String, plugin: String) -> Bool {
            events.withLock { $0.append("show \(plugin): \(message)") }
            return true
        }

        func confirm(_ message: String, yes: String, no: String?, plugin: String) -> Bool? {
            events.withLock { $0.append("confirm \(plugin): \(message) [\(yes)|\(no ?? "")]") }
            return confirmation
        }

        func ask(_ message: String, secret: Bool, plugin: String) -> SecureBytes? {
            events.withLock { $0.append("ask \(secret ? "secret" : "public") \(plugin): \(message)") }
            return self.secret.map { SecureBytes(copying: Array($0.utf8).withUnsafeBytes { $0 }) }
        }

        func waiting(plugin: String) {
            events.withLock { $0.append("waiting \(plugin)") }
        }
    }
}
