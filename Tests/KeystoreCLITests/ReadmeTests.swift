import Foundation
import Testing
import StellarKeystore
@testable import keystore

/// What the README tells a person to paste, run as written.
@Suite struct ReadmeTests {
    static let root = KeystoreHome.fixtures.deletingLastPathComponent()
    static let readme = try! String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)

    /// The `sh` code block that contains `marker`.
    static func block(containing marker: String) throws -> String {
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains(marker) }, "no README block contains \(marker)")
    }

    /// The install block, verbatim, in a copy of the package (so that its build cannot wait on this test run's
    /// own .build lock) with a temporary HOME: the binary runs, the man pages and completions are where it says.
    @Test(.timeLimit(.minutes(15)))
    func theInstallBlockInstallsAsWritten() throws {
        let block = try Self.block(containing: "install -D -s")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-readme-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        let package = work + "/package", home = work + "/home", temporary = work + "/tmp"
        for directory in [package, home, temporary] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        for item in ["Package.swift", "Sources", "Tests", "docs"] {
            try FileManager.default.copyItem(atPath: Self.root.appendingPathComponent(item).path, toPath: package + "/" + item)
        }
        var bash = KeystoreProcess(program: "/bin/bash")
        bash.environment["HOME"] = home
        bash.environment["TMPDIR"] = temporary
        let run = try bash.run(["-e", "-c", "cd '\(package)'\n" + block], timeout: 900)
        try #require(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let installed = try KeystoreProcess(program: home + "/.local/bin/keystore").run(["--version"])
        #expect(installed.status == 0 && installed.stdout.hasPrefix(KeystoreCommand.version), "\(installed.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/keystore.1"))
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/keystore.tpm-protect.1"))
        let plugin = try KeystoreProcess(program: home + "/.local/bin/stellar-keystore").run(["--help"])
        #expect(plugin.status == 0 && plugin.stdout.contains("USAGE: stellar keystore <subcommand>"), "\(plugin.stderr)")
        let signer = try KeystoreProcess(program: home + "/.local/bin/stellar-signer-keystore").run(["x"])
        #expect(signer.status == 2 && signer.stderr.contains("takes no arguments"), "\(signer.stderr)")
        let completion = try String(contentsOfFile: home + "/.local/share/bash-completion/completions/keystore", encoding: .utf8)
        #expect(completion.contains("tpm-reset-lockout"))
        // Libraries opened at run time come from the system's library path only, never from beside the binary.
        let searchPaths = try PlantedLibrary.searchPaths(of: home + "/.local/bin/keystore")
        #expect(!searchPaths.contains { $0.contains("$ORIGIN") }, "\(searchPaths)")
        #expect(try !PlantedLibrary.constructorRuns(beside: home + "/.local/bin/keystore"),
                "a libcurl.so.4 or libtss2 library planted beside the installed binary was loaded")
    }

    /// The benchmarks measure the binary the README installs: bench/build.sh's `BUILD=(…)` is the README's build
    /// command, word for word, but for `--product keystore`, which the script adds itself.
    @Test func theBenchmarksBuildWhatTheREADMEInstalls() throws {
        func words(_ text: Substring) -> [Substring] { text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\\" }) }
        let install = try Self.block(containing: "install -D -s")
        var readme = words(try #require(install.split(separator: "&&").first))
        let product = try #require(readme.firstIndex(of: "--product"))
        readme.removeSubrange(product...(product + 1))
        let script = try String(contentsOf: Self.root.appendingPathComponent("bench/build.sh"), encoding: .utf8)
        let array = try #require(script.split(separator: "BUILD=(", maxSplits: 1).last?.split(separator: ")", maxSplits: 1).first)
        #expect(words(array) == readme, "README: \(readme)\nbench/build.sh: \(words(array))")
    }

    /// The scripted session: a session started and ended with eval leaves no token behind, so the next
    /// scripted command does not fail on a dead one.
    @Test func theSessionScriptRunsAsWrittenAndLeavesNoToken() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let keystore = try home.keystoreWithRuntime()
        let work = home.path + "-script"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try (KeystoreHome.golden.pin + "\n").write(toFile: work + "/pin.txt", atomically: false, encoding: .utf8)
        var bash = keystore
        bash.program = "/bin/bash"
        bash.environment["PATH"] = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
        bash.environment["TX_HASH_HEX"] = String(repeating: "ab", count: 32)
        bash.environment["KEYSTORE_SESSION"] = nil
        let script = "set -e\ncd '\(work)'\nkeystore() { command keystore \"$@\" --name \(KeystoreHome.golden.name); }\n"
            + (try Self.block(containing: "login --session --ttl 1h"))
            + "echo \"left: ${KEYSTORE_SESSION-none}\"\n"
        let run = try bash.run(["-c", script])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.hasSuffix("left: none\n"), "\(run.stdout)")
    }

    /// The README's exit-code table names every code, with the `kind` that --json reports.
    @Test func theExitCodeTableListsEveryCode() throws {
        var rows: [Int32: String] = [:]
        for line in Self.readme.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count >= 3, let code = Int32(cells[0]) { rows[code] = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
        }
        #expect(rows == Dictionary(uniqueKeysWithValues: ExitStatus.allCases.map { ($0.rawValue, $0.kind) }))
    }
}
