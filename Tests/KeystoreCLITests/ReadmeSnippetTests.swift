import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// More of what the README, the guides, SECURITY.md and docs/LIBRARY.md tell a person to paste, checked as written.
extension ReadmeTests {
    /// The code block in `language` of `text` that contains `marker`.
    static func block(_ language: String, containing marker: String, in text: String) throws -> String {
        let blocks = text.components(separatedBy: "```\(language)\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains(marker) }, "no \(language) block contains \(marker)")
    }

    static func document(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A directory of the test's own, removed by `body`'s end.
    /// `swiftc -typecheck` of `files` against the modules this run built, as an app's code (module `AnApp`, not
    /// this package: `package` members are invisible), in `scratch`. `throughSIL`: compiled on through the SIL
    /// diagnostics (`-emit-sil`), where ownership is checked: a `~Copyable` value that cannot be consumed where the
    /// code consumes it is an error there, not in a type check.
    static func typecheckAsAnApp(_ files: [String], in scratch: String, flags: [String] = [],
                                 throughSIL: Bool = false) throws -> KeystoreProcess.Result {
        let build = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent()
        var swiftc = KeystoreProcess(program: "swiftc")
        swiftc.environment["TMPDIR"] = scratch
        let mode = throughSIL ? ["-emit-sil", "-wmo", "-o", scratch + "/app.sil"] : ["-typecheck"]
        return try swiftc.run(mode + ["-module-name", "AnApp"] + flags + files + [
            "-I", build.appendingPathComponent("Modules").path,
            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CPlatform.build/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CTSS2.build/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CPKCS11.build/module.modulemap").path,
            "-I", root.appendingPathComponent("Sources/CSodium").path,
            "-module-cache-path", scratch + "/module-cache",
        ], timeout: 300)
    }

    static func withScratch<R>(_ body: (String) throws -> R) throws -> R {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-snippet-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return try body(scratch)
    }

    /// The set-up is two lines, each run verbatim on a fresh Debian machine as root (no sudo there) or as a user
    /// with sudo: the first updates the package lists, installs what the tool needs and runs `keystore signup`;
    /// the second installs what the tests need too and runs them. `.ci/run` runs the second as written.
    @Test func theSetUpLinesInstallWhatEachNeedsAndCIRunsTheSecond() throws {
        // In the README itself: where a person installing looks first (the guides' apt-get lines come after).
        let lines = try Self.block("sh", containing: "apt-get install", in: Self.readme).split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "the set-up is two commands: \(lines)")
        func packages(_ command: String) throws -> Set<String> {
            let install = try #require(command.range(of: "apt-get install")).upperBound
            let words = command[install...].prefix { $0 != "'" && $0 != "&" }.split(whereSeparator: \.isWhitespace).map(String.init)
            return Set(words.filter { !$0.hasPrefix("-") })
        }
        let (tool, tests) = (try packages(lines[0]), try packages(lines[1]))
        #expect(lines[0].hasSuffix("&& swift run keystore signup") && lines[1].hasSuffix("&& swift test"), "\(lines)")
        #expect(tool == ["libsodium-dev", "libtss2-dev", "pkg-config", "libcurl4-openssl-dev"], "the tool needs only these: \(tool)")
        #expect(tool.isSubset(of: tests) && tests.contains("python3-venv") && tests.contains("swtpm"), "\(tests)")
        let ci = try Self.document(".ci/run").split(separator: "\n").map(String.init)
        #expect(ci.contains(lines[1]), "CI does not run the README's second line")
        #expect(!ci.contains { $0.contains("apt-get install") && $0 != lines[1] }, "CI installs packages the README does not")

        // As root where sudo is not installed, and as a user through sudo: apt-get updates first, then installs,
        // then the tool or the tests run. apt-get, sudo and swift are stand-ins that say how they were called, and
        // the only commands on PATH.
        try Self.withScratch { scratch in
            for (name, script) in [("apt-get", "echo \"apt-get $1\""), ("swift", "echo \"swift $*\""), ("sudo", "echo sudo; exec \"$@\"")] {
                try Program.write(Array("#!/bin/sh\n\(script)\n".utf8), to: "\(scratch)/\(name)")
            }
            try FileManager.default.createSymbolicLink(atPath: scratch + "/sh", withDestinationPath: "/bin/sh")
            var shell = KeystoreProcess(program: "/bin/sh")
            shell.environment["PATH"] = scratch
            for line in lines {
                let expected = ["apt-get update", "apt-get install", line.hasSuffix("signup") ? "swift run keystore signup" : "swift test"]
                let user = try shell.run(["-c", line])
                #expect(user.status == 0 && user.stdout.split(separator: "\n").map(String.init) == ["sudo"] + expected, "\(line): \(user.stdout)\(user.stderr)")
                try FileManager.default.moveItem(atPath: scratch + "/sudo", toPath: scratch + "/sudo.off")
                let root = try shell.run(["-c", line])
                try FileManager.default.moveItem(atPath: scratch + "/sudo.off", toPath: scratch + "/sudo")
                #expect(root.status == 0 && root.stdout.split(separator: "\n").map(String.init) == expected, "\(line): \(root.stdout)\(root.stderr)")
            }
        }
    }

    /// `scripts/package-deb` with no OUTDIR writes the package into the clone: git leaves it out.
    @Test func aPackageMadeInTheCloneIsIgnored() throws {
        let ignored = try KeystoreProcess(program: "/usr/bin/git").run(["-C", Self.root.path, "check-ignore", "-q", "keystore_\(PackageTests.version)_amd64.deb"])
        #expect(ignored.status == 0, "\(ignored.stderr)")
    }

    /// docs/LIBRARY.md's whole flow in one screen (once the README's Library block), verbatim, compiles as an app's `main.swift` (top-level code, as `swift package
    /// init --type executable` makes it, where a `let` is a global) against the library this run built: swiftc
    /// with the build's modules, through the SIL diagnostics that check what is consumed (seconds, not a package
    /// build). `path` is the app's own, given beside it.
    @Test func theLibraryBlockCompilesAsAnAppsMain() throws {
        let block = try Self.block("swift", containing: "let signature = try await sign(\"hi\")", in: Self.document("docs/LIBRARY.md"))
        try Self.withScratch { scratch in
            try block.write(toFile: scratch + "/main.swift", atomically: false, encoding: .utf8)
            try "let path = \"/nonexistent\"\n".write(toFile: scratch + "/given.swift", atomically: false, encoding: .utf8)
            let result = try Self.typecheckAsAnApp([scratch + "/main.swift", scratch + "/given.swift"], in: scratch,
                                                   flags: ["-warnings-as-errors"], throughSIL: true)
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    /// Tests/PublicAPITests type-check as an app's code would: without this package's name, so that a `package`
    /// member (a signer's raw signing, the vault store) is an error there as it is in an app. (`swift test`
    /// builds that target inside this package, where `package` members are visible.)
    @Test func thePublicAPITestsUseOnlyPublicAPI() throws {
        let sources = Self.root.appendingPathComponent("Tests/PublicAPITests")
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count >= 3)
        try Self.withScratch { scratch in
            let result = try Self.typecheckAsAnApp(files.map { sources.appendingPathComponent($0).path }, in: scratch)
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    /// What an app must not reach, each a build error in an app's code: every way to a key that skips the
    /// review (and, for the vault, the count of wrong PINs). Each line of the probe must fail on its own line.
    @Test func anAppCannotSignWithoutAReview() throws {
        let probes = [
            "let _ = keystore.vaults",
            "let _ = keystore.sessions",
            "let _ = try VaultStore(directory: \"/x\").unlock(\"alice\", pin: pin)",
            "let _ = try VaultStore(directory: \"/x\").vault(named: \"alice\").open(pin: pin)",
            "let _ = try signer.sign([1, 2, 3])",
            "let _ = try signer.signMessage([1, 2, 3])",
            "let _ = try AgentClient(socketPath: \"/x\").signer(for: \"G\", name: \"alice\")",
            "let _ = try SessionStore(directory: \"/x\").keyPair(for: token, identity: nil)",
        ]
        let prelude = ["import StellarKeystore", "import StellarKeys",
                       "func probe(keystore: Keystore, signer: Signer, pin: PIN, token: SessionToken) throws {"]
        try Self.withScratch { scratch in
            try (prelude + probes + ["}"]).joined(separator: "\n").write(toFile: scratch + "/app.swift", atomically: false, encoding: .utf8)
            let result = try Self.typecheckAsAnApp([scratch + "/app.swift"], in: scratch)
            #expect(result.status != 0)
            for (index, probe) in probes.enumerated() {
                #expect(result.stderr.contains("app.swift:\(prelude.count + index + 1):"), "an app can: \(probe)")
            }
        }
    }

    /// docs/LIBRARY.md's package lines, in an app next to a clone whose folder is not named `keystore`: SwiftPM
    /// names a path dependency after its folder unless `name:` says otherwise, and `package: "keystore"` must
    /// still find it. `swift package describe` loads the package graph without building anything.
    @Test func theLibraryPackageLinesWorkWhateverTheClonesFolderIsCalled() throws {
        let lines = try Self.block("swift", containing: "// Package.swift", in: Self.document("docs/LIBRARY.md"))
        try #require(lines.contains("\"../keystore\""), "the package line no longer names ../keystore")
        try Self.withScratch { scratch in
            try FileManager.default.createSymbolicLink(atPath: scratch + "/keystore-clone", withDestinationPath: Self.root.path)
            try FileManager.default.createDirectory(atPath: scratch + "/app/Sources/MyApp", withIntermediateDirectories: true)
            let manifest = "// swift-tools-version:6.0\nimport PackageDescription\n\nlet package = Package(\n    name: \"MyApp\",\n"
                + lines.replacingOccurrences(of: "\"../keystore\"", with: "\"../keystore-clone\"") + ")\n"
            try manifest.write(toFile: scratch + "/app/Package.swift", atomically: false, encoding: .utf8)
            try "import StellarKeystore\n".write(toFile: scratch + "/app/Sources/MyApp/main.swift", atomically: false, encoding: .utf8)
            var swift = KeystoreProcess(program: "swift")
            swift.environment["TMPDIR"] = scratch
            let result = try swift.run(["package", "describe", "--package-path", scratch + "/app",
                                        "--scratch-path", scratch + "/build"], timeout: 300)
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    /// The two lines that start a software TPM and point keystore at it, as docs/guides/tpm.md and SECURITY.md give them, run
    /// in a temporary HOME (on free ports rather than 2321 and 2322, which someone's TPM may hold): `tpm-status`
    /// then reads that TPM. The swtpm is stopped and its state removed.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm"), "swtpm is not installed"))
    func theSoftwareTPMLinesStartATPMKeystoreUses() throws {
        let block = try Self.block(containing: "swtpm socket")
        #expect(try Self.block("sh", containing: "swtpm socket", in: Self.document("SECURITY.md")) == block)
        let port = try Self.freePortPair()
        try Self.withScratch { home in
            let lines = block.replacingOccurrences(of: "2321", with: "\(port)").replacingOccurrences(of: "2322", with: "\(port + 1)")
            var bash = KeystoreProcess(program: "/bin/bash")
            bash.environment["HOME"] = home
            bash.environment.updateValue(nil, forKey: "KEYSTORE_TPM_TCTI")
            bash.environment["PATH"] = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
            let script = "cd \"$HOME\"\n" + lines + """
                swtpm=$!
                for _ in $(seq 100); do keystore tpm-status > status 2>&1 && break; sleep 0.1; done
                kill $swtpm; wait $swtpm
                cat status
                """
            let result = try bash.run(["-c", script])
            // `$!` must have been swtpm itself, or it outlives the test: none with this HOME's state is left.
            let left = try KeystoreProcess(program: "pgrep").run(["-f", "dir=\(home)/"]).stdout.split(separator: "\n").compactMap { pid_t($0) }
            for pid in left { kill(pid, SIGKILL) }
            #expect(left.isEmpty, "the swtpm started by the lines was still running")
            #expect(result.stdout.contains("TPM:               swtpm:host=127.0.0.1,port=\(port)\n"), "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("lockout auth set:"), "\(result.stdout)")
        }
    }

    /// A loopback port with the next one free too, as SoftwareTPM picks them.
    static func freePortPair() throws -> Int {
        func isFree(_ port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: UInt16(port).bigEndian,
                                      sin_addr: in_addr(s_addr: UInt32(0x7F00_0001).bigEndian), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
        return try #require((0..<50).lazy.map { _ in Int.random(in: 20_000...60_000) }.first { isFree($0) && isFree($0 + 1) })
    }
}
