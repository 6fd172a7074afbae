import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// One bad input: how the keystore directory is spoiled first, what is run, and the one-line error expected.
struct BadInput: CustomTestStringConvertible, Sendable {
    let name: String
    var arguments: [String] = ["login", "--name", KeystoreHome.golden.name, "--pin-stdin"]
    var stdin = "270419\n"
    /// Files readable on other descriptors, e.g. a PIN on 3 when standard input carries a message.
    var files: [Int32: String] = [:]
    var spoil: @Sendable (KeystoreHome) throws -> Void = { _ in }
    /// Mode bits for the keystore directory during the run; the command then runs as an unprivileged user, since
    /// permission errors do not exist for root (and CI runs as root).
    var directoryMode: mode_t?
    /// A command the run goes through, e.g. a shell that sets a resource limit first.
    var prefix: [String] = []
    let status: Int32
    let message: String

    var testDescription: String { name }

    /// Replaces `old` by `new` in the golden vault's text (a hand edit, check digest left as it was).
    static func edit(_ old: String, _ new: String) -> @Sendable (KeystoreHome) throws -> Void {
        { home in
            let path = home.vaultPath(KeystoreHome.golden.name)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            precondition(text.contains(old), "the golden vault has no \(old)")
            try text.replacingOccurrences(of: old, with: new).write(toFile: path, atomically: false, encoding: .utf8)
        }
    }

    /// The golden vault's value of `key` (a line `"key" : "value"` in its pretty-printed JSON).
    static func field(_ key: String) -> String {
        let path = KeystoreHome.fixtures.appendingPathComponent("vaults/\(KeystoreHome.golden.name).vault").path
        let text = try! String(contentsOfFile: path, encoding: .utf8)
        let line = text.split(separator: "\n").first { $0.contains("\"\(key)\" : ") }!
        return String(line.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: CharacterSet(charactersIn: " ,\"")))
    }

    /// `value` with its first base64 character changed.
    static func flipped(_ value: String) -> String {
        (value.first == "A" ? "B" : "A") + value.dropFirst()
    }

    static let all: [BadInput] = [
        BadInput(name: "wrong PIN", stdin: "503816\n", status: 3, message: "Incorrect PIN; 4 more tries before a waiting period."),
        BadInput(name: "5 digits", stdin: "27041\n", status: 2, message: "A PIN is exactly 6 digits, not 5."),
        BadInput(name: "7 digits", stdin: "2704190\n", status: 2, message: "A PIN is exactly 6 digits, not 7."),
        BadInput(name: "letters", stdin: "27o419\n", status: 2, message: "A PIN is 6 digits 0-9 only (no letters, spaces or other scripts' digits)."),
        BadInput(name: "Arabic-Indic digits", stdin: "٢٧٠٤١٩\n", status: 2, message: "A PIN is 6 digits 0-9 only"),
        BadInput(name: "full-width digits", stdin: "２７０４１９\n", status: 2, message: "A PIN is 6 digits 0-9 only"),
        BadInput(name: "empty", stdin: "\n", status: 2, message: "No PIN was entered; a PIN is 6 digits."),
        BadInput(name: "no input at all", stdin: "", status: 2, message: "No PIN was entered"),
        BadInput(name: "weak PIN", arguments: ["signup", "--name", "new", "--pin-stdin"], stdin: "123123\n", status: 2,
                 message: "That PIN is too easy to guess: it repeats a group of three digits. Choose another."),
        BadInput(name: "weak new PIN", arguments: ["change-pin", "--name", KeystoreHome.golden.name, "--pin-stdin", "--new-pin-fd", "0"],
                 stdin: "270419\n654321\n", status: 2, message: "it is a descending run of digits"),
        BadInput(name: "missing vault", arguments: ["login", "--name", "nobody", "--pin-stdin"], status: 5,
                 message: "No identity named 'nobody' in"),
        BadInput(name: "existing identity", arguments: ["signup", "--name", KeystoreHome.golden.name, "--pin-stdin"],
                 stdin: "918273\n", status: 6, message: "pick another with --name, or replace it with --replace"),
        BadInput(name: "invalid name", arguments: ["address", "--name", "../etc"], status: 2, message: "is not a valid identity name"),
        BadInput(name: "corrupt JSON", spoil: edit("{", "{{"), status: 7, message: "is damaged (it is not valid JSON); restore it from a backup."),
        BadInput(name: "truncated file", spoil: { home in
            let path = home.vaultPath(KeystoreHome.golden.name)
            truncate(path, 200)
        }, status: 7, message: "is damaged (it is not valid JSON)"),
        BadInput(name: "unknown version", spoil: edit("\"version\" : 1", "\"version\" : 7"), status: 7,
                 message: "has format version 7, newer than this program reads; upgrade keystore."),
        BadInput(name: "tampered ciphertext", spoil: edit(field("ciphertext"), flipped(field("ciphertext"))), status: 7,
                 message: "has been tampered with (its check digest does not match its contents)"),
        BadInput(name: "tampered nonce", spoil: edit(field("nonce"), flipped(field("nonce"))), status: 7,
                 message: "has been tampered with"),
        BadInput(name: "tampered salt", spoil: edit(field("salt"), flipped(field("salt"))), status: 7,
                 message: "has been tampered with"),
        BadInput(name: "tampered opslimit", spoil: edit("\"opsLimit\" : 2", "\"opsLimit\" : 3"), status: 7,
                 message: "has been tampered with"),
        BadInput(name: "tampered memlimit", spoil: edit("\"memLimit\" : 67108864", "\"memLimit\" : 33554432"), status: 7,
                 message: "has been tampered with"),
        BadInput(name: "tampered public key", spoil: edit(KeystoreHome.golden.address, "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"),
                 status: 7, message: "has been tampered with"),
        BadInput(name: "oversized memlimit", spoil: edit("\"memLimit\" : 67108864", "\"memLimit\" : 68719476736"), status: 7,
                 message: "asks for key-derivation costs beyond safe bounds"),
        BadInput(name: "oversized opslimit", spoil: edit("\"opsLimit\" : 2", "\"opsLimit\" : 4000000000"), status: 7,
                 message: "asks for key-derivation costs beyond safe bounds"),
        BadInput(name: "throttled identity", stdin: "270419\n", spoil: { home in
            for _ in 0..<5 { _ = try home.run(["login", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "503816\n") }
        }, status: 4, message: "Too many incorrect PINs; try again in "),
        BadInput(name: "unreadable directory", directoryMode: 0o000, status: 8,
                 message: "Permission denied"),
        BadInput(name: "unwritable directory", arguments: ["signup", "--name", "new", "--pin-stdin"], stdin: "918273\n",
                 directoryMode: 0o500, status: 8, message: "Permission denied"),
        BadInput(name: "unwritable directory, change-pin",
                 arguments: ["change-pin", "--name", KeystoreHome.golden.name, "--pin-stdin", "--new-pin-fd", "0"],
                 stdin: "270419\n918273\n", directoryMode: 0o500, status: 8,
                 message: "Permission denied"),
        BadInput(name: "full disk (file size limit)", arguments: ["change-pin", "--name", KeystoreHome.golden.name, "--pin-stdin", "--new-pin-fd", "0"],
                 stdin: "270419\n918273\n", prefix: ["sh", "-c", "ulimit -f 1; exec \"$0\" \"$@\""], status: 8,
                 message: "File too large"),
        // Memory is capped well below what holding the message would take, so this passes only if keystore
        // stops reading at its limit (a 16 MiB message signs within the same cap).
        BadInput(name: "100 MB message on stdin",
                 arguments: ["sign-message", "--name", KeystoreHome.golden.name, "--pin-fd", "3"],
                 stdin: String(repeating: "a", count: 100_000_000), files: [3: "270419\n"],
                 prefix: ["sh", "-c", "ulimit -v 250000; exec \"$0\" \"$@\""], status: 2,
                 message: "Standard input is larger than 16 MiB, the most keystore reads; sign a hash of it instead."),
        BadInput(name: "directory is a file", arguments: ["signup", "--home", "/dev/null/keys", "--pin-stdin"], stdin: "918273\n",
                 status: 8, message: "Not a directory"),
    ]
}

@Suite(.offThePool) struct BadInputCLITests {
    /// Drops root for the permission cases: root reads and writes through any mode bits.
    static let unprivilegedPrefix: [String] = geteuid() == 0
        ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        : []

    @Test(arguments: BadInput.all)
    func badInputIsOneClearLineAndLosesNothing(_ input: BadInput) throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        try input.spoil(home)
        let before = home.vaults()
        var prefix = input.prefix
        if let mode = input.directoryMode {
            prefix = Self.unprivilegedPrefix
            // The unprivileged user owns the keystore, as a real user would; only the mode bits say no.
            if geteuid() == 0 {
                for file in [home.path] + home.snapshot().keys.map({ "\(home.path)/\($0)" }) { chown(file, 65534, 65534) }
            }
            chmod(home.path, mode)
        }
        let result = try home.run(input.arguments, stdin: input.stdin, files: input.files, prefix: prefix)
        chmod(home.path, 0o700)

        #expect(result.status == input.status, "\(result.stderr)")
        #expect(result.stderrLines.count == 1, "one line, no stack trace: \(result.stderr)")
        #expect(result.stderr.hasPrefix("keystore: ") && result.stderr.contains(input.message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        for secret in ["270419", "918273", "503816", "123123", "654321", KeystoreHome.golden.seed] {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a secret in the output")
        }
        #expect(home.vaults() == before, "every vault file is byte-for-byte as before")
        #expect(!home.snapshot().keys.contains { $0.contains(".tmp-") }, "no temporary file is left")
    }

    @Test func throttlingTellsTheWaitOnTheFifthWrongPIN() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        var last: KeystoreProcess.Result?
        for _ in 0..<5 { last = try home.run(["login", "--name", KeystoreHome.golden.name, "--pin-stdin"], stdin: "503816\n") }
        #expect(last?.status == 3 && last?.stderr == "keystore: Incorrect PIN; too many in a row, try again in 30 s.\n")
    }
}
