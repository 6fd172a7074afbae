import Foundation
import Testing
import TestFixtures
import StellarKeystore
@testable import KeystoreCLI

/// What the README tells a person to paste, run as written.
@Suite(.offThePool) struct ReadmeTests {
    static let root = KeystoreHome.fixtures.deletingLastPathComponent()
    static let readme = try! String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)

    /// The `sh` code block that contains `marker`.
    static func block(containing marker: String) throws -> String {
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains(marker) }, "no README block contains \(marker)")
    }

    /// The benchmarks measure, and the Debian package holds, the binary the README installs: bench/build.sh's and
    /// scripts/package-deb's `BUILD=(…)` is the README's build command, word for word, but for `--product keystore`,
    /// which each script adds itself. (PackageTests runs the README's block and the package script.)
    @Test(arguments: ["bench/build.sh", "scripts/package-deb"])
    func theScriptsBuildWhatTheREADMEInstalls(_ path: String) throws {
        func words(_ text: Substring) -> [Substring] { text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\\" }) }
        let install = try Self.block(containing: "install -D -s")
        var readme = words(try #require(install.split(separator: "&&").first))
        let product = try #require(readme.firstIndex(of: "--product"))
        readme.removeSubrange(product...(product + 1))
        let script = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
        let array = try #require(script.split(separator: "BUILD=(", maxSplits: 1).dropFirst().first?.split(separator: ")", maxSplits: 1).first)
        #expect(words(array) == readme, "README: \(readme)\n\(path): \(words(array))")
    }

    /// The user's install lines name the package scripts/package-deb makes of today's version, and the agent's
    /// socket they export is the one the systemd unit listens on (%t is $XDG_RUNTIME_DIR).
    @Test func theUsersInstallLinesNameTodaysPackageAndTheUnitsSocket() throws {
        let install = try Self.block(containing: "scripts/package-deb")
        #expect(install.contains("$(command -v sudo) apt install ./keystore_\(KeystoreCommand.version)_amd64.deb"), "\(install)")
        let agent = try Self.block(containing: "systemctl --user enable --now keystore-agent.socket")
        let unit = try String(contentsOf: Self.root.appendingPathComponent("packaging/systemd/keystore-agent.socket"), encoding: .utf8)
        let listen = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ListenStream=%t/") }).dropFirst("ListenStream=%t/".count)
        #expect(agent.contains("export KEYSTORE_AGENT=\"$XDG_RUNTIME_DIR/\(listen)\""), "\(agent)")
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
