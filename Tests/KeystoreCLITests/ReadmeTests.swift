import Foundation
import Testing
import TestFixtures
import StellarKeystore
@testable import KeystoreCLI

/// What the README and the guides in docs/guides tell a person to paste, run as written.
@Suite(.offThePool) struct ReadmeTests {
    static let root = KeystoreHome.fixtures.deletingLastPathComponent()
    static let readme = try! String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)

    /// The guides, by path from the root (`docs/guides/NAME.md`), sorted.
    static let guides: [String] = (try! FileManager.default.contentsOfDirectory(
        atPath: root.appendingPathComponent("docs/guides").path)).filter { $0.hasSuffix(".md") }.sorted().map { "docs/guides/" + $0 }

    /// The docs a person is told to paste from, in the order a marker is looked for: the README, the guides, then
    /// docs/DEVELOPING.md.
    static let pastedFrom: [(path: String, text: String)] = [("README.md", readme)]
        + (guides + ["docs/DEVELOPING.md"]).map { ($0, try! String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)) }

    /// The `sh` code block that contains `marker`, in the first of the README, the guides and docs/DEVELOPING.md
    /// that has one.
    static func block(containing marker: String) throws -> String {
        let blocks = pastedFrom.flatMap { $0.text.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] } }
        return try #require(blocks.first { $0.contains(marker) }, "no block of the README or the guides contains \(marker)")
    }

    /// The benchmarks measure, and the Debian package holds, the binary docs/guides/building.md installs:
    /// bench/build.sh's and scripts/package-deb's `BUILD=(…)` is that guide's build command, word for word, but
    /// for `--product keystore`, which each script adds itself. (PackageTests runs that block and the package script.)
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

    /// The scripted session (the README's quick start): a session started and ended with eval leaves no token behind, so the next
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

    /// The exit-code table (docs/guides/scripting.md) names every code, with the `kind` that --json reports.
    @Test func theExitCodeTableListsEveryCode() throws {
        var rows: [Int32: String] = [:]
        for line in try Self.document("docs/guides/scripting.md").split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count >= 3, let code = Int32(cells[0]) { rows[code] = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
        }
        #expect(rows == Dictionary(uniqueKeysWithValues: ExitStatus.allCases.map { ($0.rawValue, $0.kind) }))
    }

    /// Every markdown file under docs/, by path from the root.
    static func markdownUnderDocs() throws -> [String] {
        let docs = root.appendingPathComponent("docs").path
        let files = try #require(FileManager.default.enumerator(atPath: docs)).compactMap { $0 as? String }
        return files.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`.
    static func anchor(_ heading: Substring) -> String {
        String(heading.lowercased().compactMap { $0 == " " ? "-" : ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : nil })
    }

    /// Every relative link in the README and in docs/ names a file that is there, and an anchor after it (`#…`) one
    /// of that file's headings: the guides link to one another and to SECURITY.md, and a file moved or a heading
    /// renamed must not leave a dead link.
    @Test func everyRelativeLinkNamesAFileThatIsThere() throws {
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        var checked = 0
        for path in ["README.md"] + (try Self.markdownUnderDocs()) {
            let text = try Self.document(path)
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().relativePath
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? path : (directory == "." ? "" : directory + "/") + parts[0]
                let url = Self.root.appendingPathComponent(file).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: url.path), "\(path): \(target) names no file")
                if parts.count == 2, url.pathExtension == "md", let linked = try? String(contentsOf: url, encoding: .utf8) {
                    let headings = linked.split(separator: "\n").filter { $0.hasPrefix("#") }
                        .map { Self.anchor($0.drop { $0 == "#" }.drop { $0 == " " }) }
                    #expect(headings.contains(String(parts[1])), "\(path): \(target) names no heading of \(file)")
                }
                checked += 1
            }
        }
        #expect(checked > 20, "only \(checked) links found")
    }

    /// The README is a door, not a manual: at most 15 KB (15,000 bytes), and it links every guide in docs/guides.
    @Test func theREADMEIsShortAndLinksEveryGuide() throws {
        #expect(Self.readme.utf8.count <= 15_000, "README.md is \(Self.readme.utf8.count) bytes")
        #expect(Self.guides.count >= 8, "\(Self.guides)")
        for guide in Self.guides {
            #expect(Self.readme.contains("](\(guide))"), "the README does not link \(guide)")
        }
    }
}
