import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures

/// The library against Debian's age 1.1.1, in both directions: age opens what the library writes (to its X25519
/// identity, to a passphrase, armored), and the library opens what age writes (to an identity age-keygen made, to a
/// passphrase, armored). age reads a passphrase from a terminal only, so it is driven through a pseudo-terminal.
/// These tests fail, saying so, where age is not installed: an interop check that skips quietly checks nothing.
@Suite(.offThePool) struct AgeInteropTests {
    let directory = TemporaryDirectory()

    init() throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    }

    static func plaintext(_ count: Int) -> SecureBytes {
        SecureBytes(count: count) { out in for index in 0..<count { out[index] = UInt8(truncatingIfNeeded: index &* 7 &+ 3) } }
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = directory.path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func write(_ name: String, _ secret: SecureBytes) throws -> String {
        let path = directory.path + "/" + name
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try secret.withUnsafeBytes { try handle.write(contentsOf: Data($0)) }
        return path
    }

    func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test func ageKeygenDerivesTheSameRecipient() throws {
        let identity = AgeX25519Identity.generate()
        let key = try write("key.txt", identity.encoded)
        let result = try Tool.run("age-keygen", ["-y", key])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == Array("\(identity.recipient)\n".utf8))
    }

    @Test(arguments: [0, 65536, 150_000])
    func ageDecryptsWhatTheLibraryEncryptedToARecipient(_ count: Int) throws {
        let identity = AgeX25519Identity.generate()
        let key = try write("key.txt", identity.encoded)
        let plaintext = Self.plaintext(count)
        for armored in [false, true] {
            let file = try write("file.age", AgeFile.encrypt(plaintext, to: [AgeX25519Identity.generate().recipient, identity.recipient], armored: armored))
            let result = try Tool.run("age", ["-d", "-i", key, file])
            #expect(result.status == 0, "\(result.error)")
            #expect(SecureBytes(copying: result.output.withUnsafeBytes { UnsafeRawBufferPointer($0) }).isEqual(to: plaintext))
        }
    }

    @Test(arguments: [0, 65536, 150_000])
    func theLibraryDecryptsWhatAgeEncryptedToARecipient(_ count: Int) throws {
        let key = directory.path + "/key.txt"
        #expect(try Tool.run("age-keygen", ["-o", key]).status == 0)
        let recipient = String(decoding: try Tool.run("age-keygen", ["-y", key]).output, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let identities = try AgeFile.identities(inFile: secure(String(decoding: try read(key), as: UTF8.self)), plugins: AgePluginHost())
        #expect(identities.compactMap { ($0 as? AgeX25519Identity)?.recipient.description } == [recipient])
        let plaintext = Self.plaintext(count)
        let input = try write("plain", plaintext)
        for flags in [[], ["-a"]] {
            let output = directory.path + "/file.age"
            let result = try Tool.run("age", ["-e", "-r", recipient, "-o", output] + flags + [input])
            #expect(result.status == 0, "\(result.error)")
            #expect(try AgeFile.decrypt(read(output), with: identities).isEqual(to: plaintext))
            #expect(throws: AgeError.noMatchingIdentity(stanzaTypes: ["X25519"])) {
                try AgeFile.decrypt(read(output), with: [AgeX25519Identity.generate()])
            }
        }
    }

    /// At age's own work factor (18), which age then reads under its own ceiling.
    @Test func ageDecryptsWhatTheLibraryEncryptedToAPassphrase() throws {
        let plaintext = Self.plaintext(70_000)
        let file = try write("file.age", AgeFile.encrypt(plaintext, to: [AgePassphrase(secure("tiger staple battery 7"))]))
        let output = directory.path + "/out"
        let result = try Tool.runWithPassphrase("tiger staple battery 7", "age", ["-d", "-o", output, file])
        #expect(result.status == 0, "\(result.error)")
        #expect(SecureBytes(copying: try read(output).withUnsafeBytes { UnsafeRawBufferPointer($0) }).isEqual(to: plaintext))
        let wrong = try Tool.runWithPassphrase("tiger staple battery 8", "age", ["-d", "-o", output + "2", file])
        #expect(wrong.status != 0)
    }

    @Test func theLibraryDecryptsWhatAgeEncryptedToAPassphrase() throws {
        let plaintext = Self.plaintext(70_000)
        let input = try write("plain", plaintext)
        for flags in [[], ["-a"]] {
            let output = directory.path + "/file.age"
            try? FileManager.default.removeItem(atPath: output)
            let result = try Tool.runWithPassphrase("horse battery 9", "age", ["-p", "-o", output] + flags + [input])
            #expect(result.status == 0, "\(result.error)")
            let file = try read(output)
            #expect(AgeArmor.isArmored(file) == (flags == ["-a"]))
            #expect(try AgeFile.decrypt(file, with: [AgePassphrase(secure("horse battery 9"))]).isEqual(to: plaintext))
            #expect(throws: AgeError.wrongPassphrase) { try AgeFile.decrypt(file, with: [AgePassphrase(secure("horse battery 8"))]) }
        }
    }

    /// age's and age-keygen's binaries, run with their output in files (no pipe to fill up while we wait).
    enum Tool {
        struct Result { var status: Int32; var output: [UInt8]; var error: String }

        static func path(_ name: String) throws -> String {
            let found = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
                .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
            return try #require(found, "\(name) is not installed: Debian's age package has it (apt-get install age)")
        }

        static func run(_ name: String, _ arguments: [String], executable: String? = nil, input: [UInt8] = []) throws -> Result {
            let scratch = TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: true)
            let files = ["in", "out", "err"].map { scratch.path + "/" + $0 }
            try Data(input).write(to: URL(fileURLWithPath: files[0]))
            for file in files.dropFirst() { try #require(FileManager.default.createFile(atPath: file, contents: nil)) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try executable ?? path(name))
            process.arguments = arguments
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: files[0]))
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: files[1]))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: files[2]))
            try process.run()
            process.waitUntilExit()
            return Result(
                status: process.terminationStatus, output: Array(try Data(contentsOf: URL(fileURLWithPath: files[1]))),
                error: String(decoding: try Data(contentsOf: URL(fileURLWithPath: files[2])), as: UTF8.self))
        }

        /// `name` run on a pseudo-terminal (Python's pty module), typing `passphrase` at each of its prompts; the
        /// passphrase goes to Python on its standard input, never on a command line. What the terminal showed is
        /// the result's `error`.
        static func runWithPassphrase(_ passphrase: String, _ name: String, _ arguments: [String]) throws -> Result {
            let script = """
                import os, pty, signal, sys
                signal.alarm(120)  # a prompt not recognised must not hang the tests
                passphrase = sys.stdin.buffer.readline().rstrip(b"\\n")
                pid, fd = pty.fork()
                if pid == 0:
                    os.execv(sys.argv[1], sys.argv[1:])
                shown, answered = b"", 0
                while True:
                    try:
                        data = os.read(fd, 1024)
                    except OSError:
                        break
                    if not data:
                        break
                    shown += data
                    while shown.lower().count(b"passphrase:") + shown.lower().count(b"one):") > answered:
                        answered += 1
                        try:
                            os.write(fd, passphrase + b"\\n")
                        except OSError:
                            pass
                _, status = os.waitpid(pid, 0)
                sys.stderr.buffer.write(shown)
                sys.exit(os.waitstatus_to_exitcode(status))
                """
            return try run("python3", ["-c", script, try path(name)] + arguments, executable: try path("python3"),
                           input: Array((passphrase + "\n").utf8))
        }
    }
}
