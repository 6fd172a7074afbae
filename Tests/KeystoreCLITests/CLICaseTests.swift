import Foundation
import Testing
import TestFixtures

/// `keystore` behaviour as readable cases (fixtures/cli/cases/*.txt, in the manner of age's cmd/age/testdata):
/// each block runs one command line in a fresh keystore and says what must come out. A block is:
///
///     ## what the case pins, in a sentence
///     home golden                 (optional: the golden vault copied in; otherwise an empty keystore)
///     stdin 270419                (optional, repeatable: one line of standard input each)
///     $ keystore ARG 'ARG WITH SPACES' …
///     exit 2
///     stderr TEXT                 (the error is one line starting "keystore: ", and contains TEXT; repeatable)
///     stdout TEXT                 (optional: standard output is exactly TEXT and a newline)
///     no-stdout                   (optional: standard output is empty)
///
/// Lines starting with `#` (one) are comments. What needs more than this (a terminal, a TPM, a kill) stays a
/// Swift test.
struct CLICase: CustomTestStringConvertible, Sendable {
    var file = ""
    var title = ""
    var golden = false
    var stdin: [String] = []
    var arguments: [String] = []
    var exit: Int32?
    var stderr: [String] = []
    var stdout: String?
    var noStdout = false

    var testDescription: String { "\(file): \(title)" }

    static let directory = KeystoreHome.fixtures.appendingPathComponent("cli/cases")

    static let all: [CLICase] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.filter { $0.hasSuffix(".txt") }.sorted() ?? []
        return files.flatMap { file in
            parse(try! String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8), file: file)
        }
    }()

    static func parse(_ text: String, file: String) -> [CLICase] {
        var cases: [CLICase] = []
        var current: CLICase?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") {
                if let current { cases.append(current) }
                current = CLICase(file: file, title: String(line.dropFirst(3)))
                continue
            }
            guard !line.isEmpty, !line.hasPrefix("#"), current != nil else { continue }
            let (word, rest) = line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) } ?? (line, "")
            switch word {
            case "home": current!.golden = rest == "golden"
            case "stdin": current!.stdin.append(rest)
            case "$": current!.arguments = Array(words(rest).dropFirst())  // the first word is `keystore`
            case "exit": current!.exit = Int32(rest)
            case "stderr": current!.stderr.append(rest)
            case "stdout": current!.stdout = rest
            case "no-stdout": current!.noStdout = true
            default: preconditionFailure("\(file): unknown line '\(line)'")
            }
        }
        if let current { cases.append(current) }
        return cases
    }

    /// A command line split as a shell would split this much of it: spaces, and '…' or "…" quoting.
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quote: Character?
        var started = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                started = true
            } else if character == " " {
                if started || !word.isEmpty { words.append(word) }
                word = ""
                started = false
            } else {
                word.append(character)
            }
        }
        if started || !word.isEmpty { words.append(word) }
        return words
    }
}

@Suite(.offThePool) struct CLICaseTests {
    @Test func theCasesAreThere() {
        #expect(CLICase.all.count >= 20)
        #expect(CLICase.all.allSatisfy { !$0.arguments.isEmpty && $0.exit != nil && ($0.exit == 0 || !$0.stderr.isEmpty) })
        #expect(CLICase.words(#"sign-message 'a b' "c d" '' e"#) == ["sign-message", "a b", "c d", "", "e"])
    }

    @Test(arguments: CLICase.all)
    func eachCaseBehavesAsWritten(_ example: CLICase) throws {
        let home = try KeystoreHome(inProcess: true)
        if example.golden { try home.addGolden() }
        let before = home.vaults()
        let stdin = example.stdin.map { $0 + "\n" }.joined()
        let result = try home.keystoreWithRuntime().run(example.arguments, stdin: Array(stdin.utf8))
        #expect(result.status == example.exit, "exit \(result.status): \(result.stderr)")
        if !example.stderr.isEmpty {
            #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("keystore: "), "\(result.stderr)")
        }
        for part in example.stderr { #expect(result.stderr.contains(part), "\(result.stderr)") }
        if let stdout = example.stdout { #expect(result.stdout == stdout + "\n", "\(result.stdout)") }
        if example.noStdout { #expect(result.stdout.isEmpty, "\(result.stdout)") }
        // A failure loses nothing: every vault byte for byte as it was.
        if example.exit != 0 { #expect(home.vaults() == before) }
    }
}
