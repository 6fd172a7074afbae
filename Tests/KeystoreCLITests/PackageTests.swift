import Foundation
import Testing
import Synchronization
import StellarKeystore
@testable import KeystoreCLI

/// One copy of this package per test process, in which the README's install build is made (so that it cannot wait
/// on this test run's own .build lock), with its own HOME and TMPDIR; removed when the process exits. The README's
/// install block and `scripts/package-deb` build the same words in it: the first to run makes the release build
/// (about 5 minutes on 2 cores), the second finds it up to date.
enum ReleaseCopy {
    struct State: Sendable {
        let work: String
        var deb: String?
        var unpacked: String?
    }

    private static let state = Mutex<State?>(nil)

    static var work: String { get throws { try made().work } }
    static var package: String { get throws { try made().work + "/package" } }
    static var home: String { get throws { try made().work + "/home" } }

    /// The copy, made at the first call.
    private static func made() throws -> State {
        try state.withLock { state throws -> State in try made(&state) }
    }

    private static func made(_ state: inout State?) throws -> State {
        if let state { return state }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-release-\(UUID().uuidString)").path
        atexit { ReleaseCopy.remove() }
        state = State(work: work)
        for directory in ["package", "home", "tmp", "out"] {
            try FileManager.default.createDirectory(atPath: work + "/" + directory, withIntermediateDirectories: true)
        }
        for item in ["Package.swift", "Package.resolved", "Sources", "Tests", "docs", "README.md", "SECURITY.md", "ARCHITECTURE.md",
                     "LICENSE", "scripts", "packaging"] {
            try FileManager.default.copyItem(atPath: ReadmeTests.root.appendingPathComponent(item).path, toPath: work + "/package/" + item)
        }
        return State(work: work)
    }

    private static func remove() {
        if let work = state.withLock({ $0?.work }) { try? FileManager.default.removeItem(atPath: work) }
    }

    /// bash running `script` in the copy, with the copy's HOME and TMPDIR.
    static func bash(_ script: String, timeout: Double = 900) async throws -> KeystoreProcess.Result {
        let work = try made().work
        var bash = KeystoreProcess(program: "/bin/bash")
        bash.environment["HOME"] = work + "/home"
        bash.environment["TMPDIR"] = work + "/tmp"
        return try await bash.run(["-e", "-c", "cd '\(work)/package'\n" + script], timeout: timeout)
    }

    /// `scripts/package-deb`'s package, made at the first call.
    static func debianPackage() async throws -> String {
        if let deb = try made().deb { return deb }
        let work = try made().work
        let run = try await bash("scripts/package-deb '\(work)/out'", timeout: 1200)
        try #require(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let deb = run.stdout.trimmingCharacters(in: .newlines)
        state.withLock { $0?.deb = deb }
        return deb
    }

    /// The package unpacked (`dpkg -x`) into a scratch root, made at the first call.
    static func unpacked() async throws -> String {
        if let root = try made().unpacked { return root }
        let deb = try await debianPackage()
        let root = try made().work + "/root"
        let run = try await KeystoreProcess(program: "dpkg").run(["-x", deb, root])
        try #require(run.status == 0, "\(run.stderr)")
        state.withLock { $0?.unpacked = root }
        return root
    }
}

/// What a user installs: the README's install block as written, and the Debian package made from the same build.
/// Serialized: both use one copy of the package and its release build, which must never be made twice at once.
@Suite(.serialized) struct PackageTests {
    static let version = KeystoreCommand.version
    static let architecture = try! KeystoreProcess(program: "dpkg").run(["--print-architecture"]).stdout
        .trimmingCharacters(in: .newlines)

    /// The install block, verbatim, in the copy with a temporary HOME: the binary runs, the man pages and
    /// completions are where it says.
    @Test(.timeLimit(.minutes(15)))
    func theInstallBlockInstallsAsWritten() async throws {
        let block = try ReadmeTests.block(containing: "install -D -s")
        let run = try await ReleaseCopy.bash(block)
        try #require(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let home = try ReleaseCopy.home
        let installed = try await KeystoreProcess(program: home + "/.local/bin/keystore").run(["--version"])
        #expect(installed.status == 0 && installed.stdout.hasPrefix(Self.version), "\(installed.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/keystore.1"))
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/keystore.tpm-protect.1"))
        try Self.expectTheLinksWork(in: home + "/.local/bin")
        let completion = try String(contentsOfFile: home + "/.local/share/bash-completion/completions/keystore", encoding: .utf8)
        #expect(completion.contains("tpm-reset-lockout"))
        try Self.expectNoLibraryIsLoadedFromBesideIt(home + "/.local/bin/keystore")
    }

    /// Libraries opened at run time come from the system's library path only, never from beside the binary; and
    /// every symbol is bound at start (BIND_NOW), so that with RELRO no relocation stays writable while it runs.
    static func expectNoLibraryIsLoadedFromBesideIt(_ binary: String) throws {
        let searchPaths = try PlantedLibrary.searchPaths(of: binary)
        #expect(!searchPaths.contains { $0.contains("$ORIGIN") }, "\(searchPaths)")
        let elf = try KeystoreProcess(program: "readelf").run(["-d", "-l", binary])
        #expect(elf.stdout.contains("GNU_RELRO") && elf.stdout.contains("BIND_NOW"), "no full RELRO: \(elf.stdout)")
        #expect(try !PlantedLibrary.constructorRuns(beside: binary),
                "a libcurl.so.4 or libtss2 library planted beside \(binary) was loaded")
    }

    /// stellar-cli's two ways in: `stellar keystore …` runs stellar-keystore, a signer plugin stellar-signer-keystore.
    static func expectTheLinksWork(in bin: String) throws {
        let plugin = try KeystoreProcess(program: bin + "/stellar-keystore").run(["--help"])
        #expect(plugin.status == 0 && plugin.stdout.contains("USAGE: stellar keystore <subcommand>"), "\(plugin.stderr)")
        let signer = try KeystoreProcess(program: bin + "/stellar-signer-keystore").run(["x"])
        #expect(signer.status == 2 && signer.stderr.contains("takes no arguments"), "\(signer.stderr)")
    }

    /// Every path in the package with its mode and owner, and each link's target: nothing missing, nothing more.
    @Test(.timeLimit(.minutes(20)))
    func thePackageHoldsExactlyTheseFiles() async throws {
        let deb = try await ReleaseCopy.debianPackage()
        #expect(URL(fileURLWithPath: deb).lastPathComponent == "keystore_\(Self.version)_\(Self.architecture).deb")
        let listing = try await KeystoreProcess(program: "dpkg-deb").run(["-c", deb])
        try #require(listing.status == 0, "\(listing.stderr)")
        // "drwxr-xr-x root/root 0 2026-11-24 17:25 ./usr/" → "drwxr-xr-x root/root ./usr/", a link's " -> target" kept.
        let entries = listing.stdout.split(separator: "\n").map { line in
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            return (words.prefix(2) + words.dropFirst(5)).joined(separator: " ")
        }
        let directories = ["./", "./usr/", "./usr/bin/", "./usr/lib/", "./usr/lib/systemd/", "./usr/lib/systemd/user/",
                           "./usr/share/", "./usr/share/bash-completion/", "./usr/share/bash-completion/completions/",
                           "./usr/share/doc/", "./usr/share/doc/keystore/", "./usr/share/doc/keystore/docs/",
                           "./usr/share/doc/keystore/docs/guides/", "./usr/share/fish/",
                           "./usr/share/fish/vendor_completions.d/", "./usr/share/man/", "./usr/share/man/man1/",
                           "./usr/share/zsh/", "./usr/share/zsh/vendor-completions/"]
        let pages = try FileManager.default.contentsOfDirectory(atPath: ReadmeTests.root.appendingPathComponent("docs/man").path)
        #expect(pages.count > 30 && pages.contains("keystore.1"))
        let files = ["./usr/lib/systemd/user/keystore-agent.service", "./usr/lib/systemd/user/keystore-agent.socket",
                     "./usr/share/bash-completion/completions/keystore", "./usr/share/doc/keystore/README.md.gz",
                     "./usr/share/doc/keystore/changelog.gz", "./usr/share/doc/keystore/copyright",
                     "./usr/share/fish/vendor_completions.d/keystore.fish", "./usr/share/zsh/vendor-completions/_keystore"]
            + pages.map { "./usr/share/man/man1/\($0).gz" }
            + Self.documents.filter { $0 != "README.md" }.map { "./usr/share/doc/keystore/\($0).gz" }
        let links = ["./usr/bin/stellar-keystore -> keystore", "./usr/bin/stellar-signer-keystore -> keystore",
                     "./usr/share/man/man1/stellar-keystore.1.gz -> keystore.1.gz",
                     "./usr/share/man/man1/stellar-signer-keystore.1.gz -> keystore.1.gz"]
        let expected = directories.map { "drwxr-xr-x root/root \($0)" } + ["-rwxr-xr-x root/root ./usr/bin/keystore"]
            + files.map { "-rw-r--r-- root/root \($0)" } + links.map { "lrwxrwxrwx root/root \($0)" }
        #expect(entries.sorted() == expected.sorted(),
                "missing: \(Set(expected).subtracting(entries).sorted())\nextra: \(Set(entries).subtracting(expected).sorted())")
    }

    /// The documents the package ships beside README.md, by their paths in the repository: the ones README.md
    /// links to, and the ones they link to in turn.
    static let documents: [String] = {
        var found: Set<String> = [], next = ["README.md"]
        while let document = next.popLast() {
            guard found.insert(document).inserted else { continue }
            let text = (try? String(contentsOf: ReadmeTests.root.appendingPathComponent(document), encoding: .utf8)) ?? ""
            let directory = URL(fileURLWithPath: "/" + document).deletingLastPathComponent()
            // [text](relative/path.md) or (relative/path.md#part): a link to another document of this repository.
            for match in text.matches(of: try! Regex(#"\]\(([^)#:\s]+\.md)(#[^)]*)?\)"#)) {
                guard let link = match.output[1].substring else { continue }
                next.append(String(directory.appendingPathComponent(String(link)).standardized.path.dropFirst()))
            }
        }
        return found.sorted()
    }()

    /// Every document README.md links to, and every one those link to, is in the package, at the same path under
    /// /usr/share/doc/keystore (compressed, as Debian compresses documentation), so that a link read in one finds
    /// the other beside it. Each exists in the repository too: a link to a missing file fails here.
    @Test(.timeLimit(.minutes(20)))
    func everyDocumentTheReadmeLinksToIsInThePackage() async throws {
        #expect(Self.documents.count > 15 && Self.documents.contains("docs/guides/backup.md") && Self.documents.contains("SECURITY.md"),
                "\(Self.documents)")
        for document in Self.documents {
            #expect(FileManager.default.fileExists(atPath: ReadmeTests.root.appendingPathComponent(document).path), "\(document)")
        }
        let root = try await ReleaseCopy.unpacked() + "/usr/share/doc/keystore/"
        let missing = Self.documents.filter { !FileManager.default.fileExists(atPath: root + $0 + ".gz") }
        #expect(missing.isEmpty, "not in the package: \(missing)")
    }

    /// The control fields: the version `--version` prints, libsodium (which every command needs) a dependency found
    /// by dpkg-shlibdeps, the libraries loaded only when used recommended (by their Debian 12 and 13 names), the
    /// tools of the TPM and token tests suggested.
    @Test(.timeLimit(.minutes(20)))
    func itsControlFieldsAreTheBinarysVersionAndLibraries() async throws {
        let deb = try await ReleaseCopy.debianPackage()
        let info = try await KeystoreProcess(program: "dpkg-deb").run(["-f", deb])
        try #require(info.status == 0, "\(info.stderr)")
        var fields: [String: String] = [:]
        var last = ""
        for line in info.stdout.split(separator: "\n") {
            if line.hasPrefix(" ") { fields[last, default: ""] += "\n" + line; continue }
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            last = parts[0]
            fields[last] = parts.count > 1 ? parts[1] : ""
        }
        let printed = try await KeystoreProcess(program: ReleaseCopy.unpacked() + "/usr/bin/keystore").run(["--version"])
        #expect(fields["Version"] == Self.version && printed.stdout.split(separator: " ").first.map(String.init) == Self.version,
                "control: \(fields["Version"] ?? "none"), --version: \(printed.stdout)")
        #expect(fields["Package"] == "keystore" && fields["Architecture"] == Self.architecture)
        #expect(fields["Section"] == "utils" && fields["Priority"] == "optional")
        let depends = (fields["Depends"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(depends.contains { $0.hasPrefix("libsodium23 ") }, "\(depends)")
        #expect(depends.contains { $0.hasPrefix("libc6 ") }, "\(depends)")
        #expect(!depends.contains { $0.contains("tss2") || $0.contains("curl") }, "loaded only when used: \(depends)")
        #expect(fields["Recommends"] == "libtss2-esys-3.0.2-0 | libtss2-esys-3.0.2-0t64, libtss2-tctildr0 | libtss2-tctildr0t64, "
                + "libtss2-mu0 | libtss2-mu-4.0.1-0t64, libtss2-rc0 | libtss2-rc0t64, libcurl4 | libcurl4t64, bash-completion")
        #expect(fields["Suggests"] == "swtpm, tpm2-tools, softhsm2")
        // Installed-Size is in KiB and counts at least the binary.
        let binary = try await FileManager.default.attributesOfItem(atPath: ReleaseCopy.unpacked() + "/usr/bin/keystore")[.size] as? Int ?? 0
        let installed = try #require(fields["Installed-Size"].flatMap { Int($0) })
        #expect(binary > 0 && installed >= binary / 1024 && installed < binary / 1024 + 2048, "\(installed) KiB")
        #expect(fields["Homepage"] == nil && fields["Description"]?.hasPrefix("encrypted local keystore for Stellar keys\n") == true)
    }

    /// packaging/deb/changelog's top entry is the version `--version` prints, and the script refuses to build a
    /// package whose changelog says another.
    @Test(.timeLimit(.minutes(20)))
    func theChangelogCarriesTheVersionAndADifferentOneIsRefused() async throws {
        let changelog = ReadmeTests.root.appendingPathComponent("packaging/deb/changelog").path
        let top = try await KeystoreProcess(program: "dpkg-parsechangelog").run(["-l", changelog, "-S", "Version"])
        #expect(top.status == 0 && top.stdout == Self.version + "\n", "\(top.stdout)\(top.stderr)")
        _ = try await ReleaseCopy.debianPackage()
        let copy = try ReleaseCopy.package + "/packaging/deb/changelog"
        let original = try Data(contentsOf: URL(fileURLWithPath: copy))
        defer { try? original.write(to: URL(fileURLWithPath: copy)) }
        let text = String(decoding: original, as: UTF8.self)
        try text.replacingOccurrences(of: "keystore (\(Self.version))", with: "keystore (0.0.1)").write(toFile: copy, atomically: false, encoding: .utf8)
        let out = try ReleaseCopy.work + "/tmp/refused"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try await ReleaseCopy.bash("scripts/package-deb '\(out)'", timeout: 1200)
        #expect(run.status == 1 && run.stderr.contains("keystore --version says \(Self.version), packaging/deb/changelog's top entry 0.0.1"),
                "\(run.stdout)\n\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
    }

    /// lintian, with the package's own overrides (if any) honoured: no error and no warning. It leaves a file of
    /// its ELF cache (`mldbm-elf-*`) in its temporary directory: a private one, removed, so that nothing of it
    /// outlives the test.
    @Test(.timeLimit(.minutes(20)))
    func lintianFindsNoErrorOrWarning() async throws {
        let deb = try await ReleaseCopy.debianPackage()
        let system = FileManager.default.temporaryDirectory.path
        func leftovers() -> Set<String> {
            Set(((try? FileManager.default.contentsOfDirectory(atPath: system)) ?? []).filter { $0.hasPrefix("mldbm-") })
        }
        let before = leftovers()
        let scratch = system + "/keystore-lintian-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var lintian = KeystoreProcess(program: "lintian")
        lintian.environment["HOME"] = try ReleaseCopy.home
        lintian.environment["TMPDIR"] = scratch
        let run = try await lintian.run(["--fail-on", "error,warning", deb], timeout: 300)
        let findings = run.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        #expect(run.status == 0 && findings.isEmpty, "\(run.stdout)\n\(run.stderr)")
        #expect(leftovers().subtracting(before).isEmpty, "lintian left \(leftovers().subtracting(before)) in \(system)")
    }

    /// Unpacked into a scratch root, the packaged binary runs without the build around it: `--version`, `list` on
    /// an empty keystore, a new identity, a session and a signature made with it that checks out; its links work,
    /// and no library is loaded from beside it.
    @Test(.timeLimit(.minutes(20)))
    func unpackedItSignsWithASession() async throws {
        let root = try await ReleaseCopy.unpacked()
        let home = try KeystoreHome()
        var keystore = try home.keystoreWithRuntime()
        keystore.program = root + "/usr/bin/keystore"
        let version = try await keystore.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix(Self.version + " "), "\(version.stderr)")
        let list = try await keystore.run(["list"])
        #expect(list.status == 0 && list.stdout.isEmpty && list.stderr.contains("no identities"), "\(list.stderr)")
        let signup = try await keystore.run(["signup", "--kdf", "interactive", "--pin-stdin"], stdin: Array("270419\n".utf8))
        try #require(signup.status == 0, "\(signup.stderr)")
        let address = signup.stdout.trimmingCharacters(in: .newlines)
        let login = try await keystore.run(["login", "--session", "--pin-stdin"], stdin: Array("270419\n".utf8))
        let prefix = "export KEYSTORE_SESSION="
        try #require(login.status == 0 && login.stdout.hasPrefix(prefix), "\(login.stderr)")
        keystore.environment["KEYSTORE_SESSION"] = String(login.stdout.dropFirst(prefix.count)).trimmingCharacters(in: .newlines)
        let payload: [UInt8] = [0x70, 0x6b, 0x67]
        let signed = try await keystore.run(["sign", "--hex", "706b67"])
        #expect(signed.status == 0 && signed.stderr.isEmpty, "\(signed.stderr)")
        let signature = try #require(Data(base64Encoded: signed.stdout.trimmingCharacters(in: .newlines)), "\(signed.stdout)")
        #expect(try PublicKey(accountID: address).isValidSignature(Array(signature), for: payload))
        #expect(try await keystore.run(["logout"]).status == 0)
        try Self.expectTheLinksWork(in: root + "/usr/bin")
        try Self.expectNoLibraryIsLoadedFromBesideIt(root + "/usr/bin/keystore")
    }

    /// `man --warnings` renders every page in the package (the links' too) with nothing on stderr, and whatis can
    /// read each page's NAME. A page with an empty line, as argument-parser once wrote them, does warn: the check
    /// can fail.
    @Test(.timeLimit(.minutes(20)))
    func itsManPagesRenderWithoutWarnings() async throws {
        let directory = try await ReleaseCopy.unpacked() + "/usr/share/man/man1"
        var man = KeystoreProcess(program: "man")
        man.environment["MANWIDTH"] = "80"
        man.environment["LC_ALL"] = "C.UTF-8"
        man.environment["MANROFFSEQ"] = ""
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(pages.count > 30)
        for page in pages {
            let run = try await man.run(["--warnings", "-l", directory + "/" + page])
            #expect(run.status == 0 && run.stderr.isEmpty && run.stdout.contains("NAME"), "\(page): \(run.stderr)")
            let whatis = try await KeystoreProcess(program: "lexgrog").run([directory + "/" + page])
            #expect(whatis.status == 0 && !whatis.stdout.contains("parse failed"), "\(page): \(whatis.stdout)")
        }
        let home = try KeystoreHome()
        let broken = home.path + "/broken.1"
        try ".Dd November 23, 2026\n.Dt BROKEN 1\n.Os\n.Sh NAME\n.Nm broken\n.Nd a page\n.Sh DESCRIPTION\nOne.\n\nTwo.\n"
            .write(toFile: broken, atomically: false, encoding: .utf8)
        let warned = try await man.run(["--warnings", "-l", broken])
        #expect(warned.stderr.contains("Empty input line"), "\(warned.stderr)")
    }

    /// systemd-analyze reads the two user units as systemd would, their ExecStart pointed at the unpacked binary and
    /// MANPATH at the unpacked pages (their Documentation=); a misspelt key is reported, so the check can fail.
    @Test(.timeLimit(.minutes(20)))
    func itsSystemdUnitsVerify() async throws {
        let root = try await ReleaseCopy.unpacked()
        let home = try KeystoreHome()
        let units = home.path + "/units"
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        for unit in ["keystore-agent.socket", "keystore-agent.service"] {
            let text = try String(contentsOfFile: root + "/usr/lib/systemd/user/" + unit, encoding: .utf8)
            #expect(unit.hasSuffix(".socket") || text.contains("ExecStart=/usr/bin/keystore "), "\(text)")
            try text.replacingOccurrences(of: "/usr/bin/keystore", with: root + "/usr/bin/keystore")
                .write(toFile: units + "/" + unit, atomically: false, encoding: .utf8)
        }
        var analyze = try home.keystoreWithRuntime()
        analyze.program = "systemd-analyze"
        analyze.environment["HOME"] = home.path
        analyze.environment["MANPATH"] = root + "/usr/share/man"
        let run = try await analyze.run(["verify", "--user", units + "/keystore-agent.socket", units + "/keystore-agent.service"])
        #expect(run.status == 0 && run.stdout.isEmpty && run.stderr.isEmpty, "\(run.stdout)\n\(run.stderr)")
        try "[Service]\nExecStrat=/bin/true\nExecStart=/bin/true\n".write(toFile: units + "/typo.service", atomically: false, encoding: .utf8)
        let typo = try await analyze.run(["verify", "--user", units + "/typo.service"])
        #expect(typo.stderr.contains("Unknown key 'ExecStrat'"), "\(typo.stderr)")
    }
}
