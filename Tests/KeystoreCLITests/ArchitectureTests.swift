import Foundation
import Testing

/// The architecture as checks that can fail: what the targets may reach, what the libraries may say, and which
/// file may call which C library.
@Suite struct ArchitectureTests {
    static let root = KeystoreHome.fixtures.deletingLastPathComponent()
    static let libraries = ["StellarText", "StellarKeys", "StellarTransactions", "StellarKeystore", "StellarKeystoreAgent", "StellarKeystoreTPM", "StellarWebAuth"]

    /// The Swift files of `target`, by path relative to the package.
    static func sources(_ target: String) -> [String] {
        let directory = root.appendingPathComponent("Sources/\(target)")
        let files = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.map { "Sources/\(target)/\($0)" }.sorted()
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The string literals of a Swift file, one-line and multi-line, comments left out.
    static func literals(_ source: String) -> [String] {
        var found: [String] = []
        var multiline: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var open = multiline {
                if trimmed.hasPrefix("\"\"\"") {
                    found.append(open.joined(separator: "\n"))
                    multiline = nil
                } else {
                    open.append(String(line))
                    multiline = open
                }
                continue
            }
            if trimmed.hasPrefix("//") { continue }
            if trimmed.hasSuffix("\"\"\"") && !trimmed.hasPrefix("\"\"\"") { multiline = []; continue }
            var index = line.startIndex
            var current: String?
            var escaped = false
            while index < line.endIndex {
                let character = line[index]
                if var literal = current {
                    if escaped { escaped = false; literal.append(character) } else if character == "\\" { escaped = true; literal.append(character) } else if character == "\"" { found.append(literal); current = nil; index = line.index(after: index); continue } else { literal.append(character) }
                    current = literal
                } else if character == "\"" {
                    current = ""
                } else if character == "/", line[index...].hasPrefix("//") {
                    break
                }
                index = line.index(after: index)
            }
        }
        return found
    }

    /// Generated files are what their generators write today (scripts/check-generated): one edited by hand, or a
    /// generator changed without a run, fails here. A test, not a step of `.ci/run`, so that CI runs the README's
    /// line as written and nothing before it needs a package the line installs (python3).
    @Test func theGeneratedFilesAreWhatTheirGeneratorsWrite() async throws {
        let check = try await KeystoreProcess(program: "/bin/bash").run([Self.root.appendingPathComponent("scripts/check-generated").path])
        #expect(check.status == 0, "\(check.stdout)\n\(check.stderr)")
        #expect(check.stdout.contains("check-generated: XDR.generated.swift matches"), "\(check.stdout)")
    }

    /// No code keeps a value read out of a review: what is printed after signing comes from the `Approval` that
    /// `approve` returns. Swift 6.3.1's optimizer held such a copy as a borrow of the review's storage, which the
    /// consuming `approve` freed (`sign-tx --json` crashed in the install build only).
    @Test func nothingReadFromAReviewIsKept() throws {
        let kept = try Regex(#"(let|var) [a-zA-Z_, ()]+ =\s*(try\s+)?(await\s+)?\(?review\.(summary|signer)"#)
        for target in Self.libraries + ["KeystoreCLI"] {
            for path in Self.sources(target) {
                for (number, line) in try Self.text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains(kept) {
                    Issue.record("\(path):\(number + 1) keeps a value read from a review: \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }

    /// A stored key's kind is known in one place: its conformer of `StoredKey`, and the list `VaultStore` picks
    /// one from (StoredKey.swift). Nothing else names a conformer or asks a vault which kind it holds.
    @Test func aKeysKindIsKnownOnlyToItsConformer() throws {
        let kindCheck = try Regex(#"\b(KeyInToken|KeyInTPM)\b|\bSealedSeed\.self|(as\??|is) SealedSeed\b|\b(isInToken|tpmKeyVault|isP256Key|logIn\(toTokenOf|logIn\(toTPMKeyOf|addTokenToAgent|addTPMKeyToAgent)\b"#)
        let allowed: Set = ["Sources/StellarKeystore/Vault/StoredKey.swift", "Sources/StellarKeystore/Vault/SealedSeed.swift",
                            "Sources/StellarKeystore/Token/KeyInToken.swift", "Sources/StellarKeystore/TPM/KeyInTPM.swift"]
        for target in Self.libraries + ["KeystoreCLI", "keystore-fuzz"] {
            for path in Self.sources(target) where !allowed.contains(path) {
                for (number, line) in try Self.text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains(kindCheck) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    Issue.record("\(path):\(number + 1) tells kinds of key apart: \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect("if (try? vaults.vault(named: name))?.isInToken == true {".contains(kindCheck))
        #expect("guard let key = stored as? KeyInTPM else {".contains(kindCheck))
        #expect(!"let kind = Self.storedKeyKinds.first".contains(kindCheck))
    }

    /// The tool signs only through the library's one conversation (`SigningRunner`: review → show → consent and
    /// PIN → approve): no command reviews or approves on its own, so what is shown and asked is the library's rule.
    @Test func theToolSignsOnlyThroughTheRunner() throws {
        let ownConversation = try Regex(#"\.(review|approve|approveUnshown)\("#)
        for path in Self.sources("KeystoreCLI") {
            for (number, line) in try Self.text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(ownConversation) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                Issue.record("\(path):\(number + 1) reviews or approves outside SigningRunner: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(Self.sources("KeystoreCLI").count > 10)
        #expect("let review = try key.review(request)".contains(ownConversation))
    }

    /// One request per command: what was typed (text, a network's name, account files, a service's address, an
    /// account's parts) goes to one library request, which decodes it, resolves its network, reads its accounts,
    /// builds its account, fetches, and finds the key (`TransactionSigning`, `SignIn`, `AuthorizationEntriesSigning`,
    /// `TransactionShowing`, …). So the tool calls none of those steps itself. The files that still do are named
    /// below, each a command not yet folded; a new one, or a folded command taking a step back, fails here.
    @Test func theToolLeavesEveryDecisionToTheRequest() throws {
        let step = try Regex(#"TransactionEnvelope\((base64|xdr):|StellarNetwork\(|AccountSigners\.read|TransactionRequest\(uri:|\.verifiedOrigin\(|\.discover\(|WebAuthService\.clientDomain\(|\.signInKey\(|\.signingKey\(|AuthorizationAccount\(|AuthorizationPreimage\(|PublicKey\(accountID:|\.resolve\(\)|accountFiles\.read\(|input\.read\("#)
        // Empty since share-tx made its one request (`TransactionRequest.sharing`); a command that cannot yet goes here.
        let notYetOneRequest: Set<String> = []
        var stepping: Set<String> = []
        for path in Self.sources("KeystoreCLI") {
            for (number, line) in try Self.text(path).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(step) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                stepping.insert(path)
                if !notYetOneRequest.contains(path) {
                    Issue.record("\(path):\(number + 1) takes a step of a library request itself: \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        // The list is kept short: a file that no longer takes a step leaves it.
        #expect(stepping == notYetOneRequest, "files that take a step: \(stepping.sorted())")
        #expect("let network = try networkOptions.resolve()".contains(step))
        #expect("let envelope = try TransactionEnvelope(base64: text)".contains(step))
        #expect("return try keystore.signInKey(as: name, keys: key.sources)".contains(step))
        #expect(!"let signed = try key.run(TransactionSigning(text, network: networkOptions.choice), quiet: quiet)".contains(step))
    }

    /// ARCHITECTURE.md is a five-minute read, and what it names is there: each type it quotes is declared in
    /// Sources, each file it names exists, each target it draws is one of Package.swift's.
    @Test func theArchitecturePageNamesWhatIsThere() throws {
        let page = try Self.text("ARCHITECTURE.md")
        #expect(page.utf8.count <= 8 * 1024)
        let tests = (FileManager.default.enumerator(atPath: Self.root.appendingPathComponent("Tests").path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }.map { "Tests/" + $0 }
        let sources = Self.libraries.flatMap(Self.sources) + Self.sources("KeystoreCLI") + tests
        let declared = Self.declaredNames(try sources.map(Self.text).joined(separator: "\n"))
        var quoted: Set<String> = []
        for match in page.matches(of: try Regex(#"`([A-Za-z_][A-Za-z0-9_]*)(\([^`]*\))?`"#)) {
            if let name = match.output[1].substring { quoted.insert(String(name)) }
        }
        let types = quoted.filter { $0.first!.isUppercase }
        #expect(types.count > 10)
        for type in types.sorted() {
            #expect(declared.contains(type) || type == "String",
                    "ARCHITECTURE.md names \(type), which Sources do not declare")
        }
        for match in page.matches(of: try Regex(#"`([A-Za-z]+/[A-Za-z0-9_/+.]+\.swift)`"#)) {
            let path = String(match.output[1].substring!)
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("Sources/" + path).path),
                    "ARCHITECTURE.md names Sources/\(path), which is not there")
        }
    }

    /// The names that follow `struct `, `enum `, `class `, `protocol `, `actor `, `typealias ` or `extension ` in
    /// `source`: one pass over the text, where a regular expression per name ARCHITECTURE.md quotes took 16 s of CPU.
    static func declaredNames(_ source: String) -> Set<String> {
        var names: Set<String> = []
        for keyword in ["struct", "enum", "class", "protocol", "actor", "typealias", "extension"] {
            for following in source.components(separatedBy: keyword + " ").dropFirst() {
                let name = following.unicodeScalars.prefix { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
                if !name.isEmpty { names.insert(String(String.UnicodeScalarView(name))) }
            }
        }
        return names
    }

    /// An app's user has no `keystore` command and no options: the command line adds those (Hints).
    @Test func noLibraryStringNamesAKeystoreCommandOrAnOption() throws {
        let forbidden = try Regex(#"keystore |(^|[\s'(])--[a-z]"#)
        var offenders: [String] = []
        for target in Self.libraries {
            for path in Self.sources(target) where !path.hasSuffix(".generated.swift") {
                for literal in Self.literals(try Self.text(path)) where literal.contains(forbidden) {
                    offenders.append("\(path): \(literal)")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
        // The check itself finds what it looks for.
        #expect(Self.literals(#"let a = "run 'keystore login'" // "--not-this""#) == ["run 'keystore login'"])
    }

    /// The comments of a Swift file (what follows `//` outside a string literal), by line number.
    static func comments(_ source: String) -> [(line: Int, text: String)] {
        var found: [(line: Int, text: String)] = []
        var inMultiline = false
        for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if inMultiline {
                if trimmed.hasPrefix("\"\"\"") { inMultiline = false }
                continue
            }
            if trimmed.hasSuffix("\"\"\"") && !trimmed.hasPrefix("\"\"\"") && !trimmed.hasPrefix("//") { inMultiline = true; continue }
            var inString = false
            var escaped = false
            var index = line.startIndex
            while index < line.endIndex {
                let character = line[index]
                if inString {
                    if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                } else if character == "\"" {
                    inString = true
                } else if line[index...].hasPrefix("//") {
                    found.append((number + 1, String(line[index...])))
                    break
                }
                index = line.index(after: index)
            }
        }
        return found
    }

    /// What a library comment must not name: an option (`--name`), an exit code (`exit 9`), or a command of the
    /// tool (`keystore login`, `sign-tx`). Command names that are also plain words (`address`, `list`, `bind`)
    /// count only after "keystore ".
    /// `patterns` are `toolPatterns()`, compiled once by a caller that checks many comments.
    static func namesTheTool(_ comment: String, _ patterns: [Regex<AnyRegexOutput>]? = nil) throws -> Bool {
        try (patterns ?? toolPatterns()).contains { comment.contains($0) }
    }

    static func toolPatterns() throws -> [Regex<AnyRegexOutput>] {
        let names = ["signup", "login", "logout", "status", "agent", "change-pin", "export", "list", "remove", "address",
                     "whoami", "sign", "sign-message", "sign-tx", "sign-auth", "show-tx", "web-auth", "verify", "recover",
                     "derive", "upgrade", "import-stellar-cli", "bench-kdf", "bind", "unbind", "tpm-status", "tpm-protect",
                     "tpm-reset-lockout", "strkey"].sorted { $0.count > $1.count }
        let quoted = names.filter { $0.contains("-") } + ["signup", "login", "logout"]
        let patterns = [
            #"(^|[\s'(`])--[a-z]"#,
            #"\bexit (code |status )?[0-9]+"#,
            #"\bkeystore ("# + names.joined(separator: "|") + #")\b"#,
            #"`("# + quoted.joined(separator: "|") + #")[ `]"#,
        ]
        return try patterns.map { try Regex($0) }
    }

    /// Comments in files that their owners are rewriting now (issue 29's review/approve API, the agent, the
    /// summaries), by file: how many still name the tool. The counts may only go down (a lower one fails here
    /// until it is written down), so that none is added meanwhile.
    static let commentsBeingRewritten: [String: Int] = [:]

    /// Library doc comments speak the library's words too: an app's developer reads them, and has no `keystore`
    /// command, option or exit code.
    @Test func noLibraryCommentNamesAKeystoreCommandOptionOrExitCode() throws {
        var offenders: [String: [String]] = [:]
        let patterns = try Self.toolPatterns()
        for target in Self.libraries {
            for path in Self.sources(target) where !path.hasSuffix(".generated.swift") {
                for comment in Self.comments(try Self.text(path)) where try Self.namesTheTool(comment.text, patterns) {
                    offenders[path, default: []].append("\(path):\(comment.line): \(comment.text)")
                }
            }
        }
        let unexpected = offenders.filter { $0.value.count > Self.commentsBeingRewritten[$0.key, default: 0] }.values.flatMap { $0 }
        #expect(unexpected.isEmpty, "\(unexpected.sorted().joined(separator: "\n"))")
        let fewer = Self.commentsBeingRewritten.filter { offenders[$0.key, default: []].count < $0.value }.keys
        #expect(fewer.isEmpty, "fewer comments name the tool now: lower their count in commentsBeingRewritten: \(fewer.sorted())")
        // The check itself finds what it looks for, and passes what is not the tool's.
        #expect(Self.comments(#"let a = "// not a comment" // a comment"#).map(\.text) == ["// a comment"])
        for named in ["/// Refuses (exit 9)", "/// kept by `--replace`", "/// as `keystore bench-kdf` does", "/// `sign-tx` shows"] {
            #expect(try Self.namesTheTool(named), "\(named)")
        }
        for plain in ["/// the keystore directory", "/// `address` of the key", "/// a `--` separator", "/// exit the loop"] {
            #expect(try !Self.namesTheTool(plain), "\(plain)")
        }
    }

    /// The generated XDR reader compiles without warnings: every offset it keeps for an error is used.
    @Test func theGeneratedReaderKeepsNoUnusedOffset() throws {
        let generated = try Self.text("Sources/StellarTransactions/XDR.generated.swift")
        let kept = generated.components(separatedBy: "let at = r.offset").count - 1
        let used = generated.components(separatedBy: "at: at)").count - 1
        #expect(kept > 0 && kept == used, "\(kept) offsets kept, \(used) used")
    }

    /// The exit codes are in `--help` (and so in the main man page): an installed binary has no README.
    @Test func helpListsEveryExitCode() throws {
        let help = try KeystoreProcess().run(["--help"]).stdout
        for line in ["  0   success", "  3   incorrect-pin", "  10  refused", "  11  output-failed", "  64  usage"] {
            #expect(help.contains(line), "\(line)")
        }
        #expect(!help.contains("README"))
        let page = try Self.text("docs/man/keystore.1")
        #expect(page.contains("output-failed") && page.contains("incorrect-pin"))
    }

    /// One boundary file per C library: libsodium behind Sodium.swift, tpm2-tss behind TPM.swift, libcurl
    /// behind HTTP.swift, a PKCS#11 module behind PKCS11.swift.
    @Test func eachCLibraryIsCalledFromOneFile() throws {
        let sodium = try Regex(#"\b(crypto_[a-z0-9_]+|sodium_[a-z_]+|randombytes_[a-z_]+)\("#)
        let tss = try Regex(#"\b(Esys_|Tss2_|keystore_tss2_)"#)
        let curl = try Regex(#"\b(curl_|keystore_curl_|CURLOPT_)"#)
        let pkcs11 = try Regex(#"\b(C_[A-Z][A-Za-z]+\?\(|keystore_pkcs11_|CK_FUNCTION_LIST)"#)
        var callers: [String: Set<String>] = [:]
        for target in Self.libraries + ["KeystoreCLI", "keystore", "keystore-fuzz"] {
            for path in Self.sources(target) {
                let text = try Self.text(path)
                if text.contains(sodium) { callers["libsodium", default: []].insert(path) }
                if text.contains(tss) { callers["tpm2-tss", default: []].insert(path) }
                if text.contains(curl) { callers["libcurl", default: []].insert(path) }
                if text.contains(pkcs11) { callers["PKCS#11", default: []].insert(path) }
            }
        }
        #expect(callers["libsodium"] == ["Sources/StellarKeys/Sodium/Sodium.swift"])
        #expect(callers["tpm2-tss"] == ["Sources/StellarKeystoreTPM/TPM.swift"])
        #expect(callers["libcurl"] == ["Sources/StellarWebAuth/HTTP.swift"])
        #expect(callers["PKCS#11"] == ["Sources/StellarKeystore/Token/PKCS11.swift"])
    }

    /// The command line adds a hint by the error's case, never by its message's words: a reworded message must
    /// not lose its hint in silence.
    @Test func hintsMatchCasesNotText() throws {
        let textMatch = try Regex(#"case .*where .*\.(hasPrefix|hasSuffix|contains|starts)\("#)
        let lines = try Self.text("Sources/KeystoreCLI/Hints.swift").split(separator: "\n").filter { $0.contains(textMatch) }
        #expect(lines.isEmpty, "\(lines)")
        #expect(#"case .io(_, _, let reason) where reason.hasPrefix("HOME"): "x""#.contains(textMatch))
    }

    /// No C module leaks into a library's public interface: each is imported `internal`, so an app that imports a
    /// library sees Swift types only, and a library's C types cannot appear in its public API.
    @Test func everyCModuleIsImportedInternally() throws {
        let plainImport = try Regex(#"^(public |package )?import (CSodium|CPlatform|CTSS2|CCurl|CPKCS11)\b"#)
        var offenders: [String] = []
        for target in Self.libraries {
            for path in Self.sources(target) {
                for line in try Self.text(path).split(separator: "\n") where line.contains(plainImport) {
                    offenders.append("\(path): \(line)")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
        #expect("import CCurl".contains(plainImport) && !"internal import CCurl".contains(plainImport))
    }

    /// No target of the binary imports Foundation itself, only FoundationEssentials: one `import Foundation` links
    /// swift-corelibs-foundation, FoundationInternationalization and ICU's data into the static binary (88 MB
    /// against 40 MB) and every start pays for their initializers, relocations and conformance records
    /// (bench/startup.sh; issue 42). What Foundation alone had is written out where it was needed.
    @Test func noTargetOfTheBinaryImportsFoundation() throws {
        let foundation = try Regex(#"^\s*(@\w+ )?((public|package|internal|fileprivate|private) )?import (\w+ )?(Foundation|FoundationInternationalization|FoundationNetworking)(\.|\s|$)"#)
        var offenders: [String] = []
        for target in Self.libraries + ["KeystoreCLI", "keystore", "keystore-fuzz"] {
            for path in Self.sources(target) {
                for line in try Self.text(path).split(separator: "\n") where line.contains(foundation) {
                    offenders.append("\(path): \(line)")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
        #expect("import Foundation".contains(foundation) && "internal import struct Foundation.NSString".contains(foundation))
        #expect(!"import FoundationEssentials".contains(foundation))
    }

    /// The product an app depends on reaches no tpm2-tss, as SwiftPM itself resolves the graph.
    @Test(.timeLimit(.minutes(5)))
    func theAppProductHasNoTPM2TSSInItsGraph() async throws {
        var swift = KeystoreProcess(program: "swift")
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-describe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        swift.environment["TMPDIR"] = temporary
        let described = try await swift.run(["package", "--package-path", Self.root.path, "describe", "--type", "json"], timeout: 240)
        try #require(described.status == 0, "\(described.stderr)")
        let package = try #require(try JSONSerialization.jsonObject(with: Data(described.stdoutBytes)) as? [String: Any])
        let targets = try #require(package["targets"] as? [[String: Any]])
        let dependencies = Dictionary(uniqueKeysWithValues: targets.map { ($0["name"] as! String, $0["target_dependencies"] as? [String] ?? []) })
        func closure(_ name: String) -> Set<String> {
            var seen: Set<String> = []
            var next = [name]
            while let target = next.popLast() {
                for dependency in dependencies[target] ?? [] where seen.insert(dependency).inserted { next.append(dependency) }
            }
            return seen
        }
        let products = try #require(package["products"] as? [[String: Any]])
        let app = try #require(products.first { $0["name"] as? String == "StellarKeystore" })
        let reached = (app["targets"] as? [String] ?? []).reduce(into: Set<String>()) { $0.formUnion(closure($1).union([$1])) }
        // CPKCS11 is headers and a loader only: a module is opened with dlopen when a token's key is used.
        #expect(reached == ["StellarKeystore", "StellarTransactions", "StellarKeys", "StellarText", "CSodium", "CPlatform", "CPKCS11"], "\(reached)")
        #expect(closure("StellarKeystoreTPM").contains("CTSS2"))
        // No HTTP in an app's graph either: the SEP-10 checks are in StellarTransactions, the transport apart.
        #expect(closure("StellarWebAuth").contains("CCurl") && !reached.contains("CCurl"))
        // The layers point one way.
        #expect(!closure("StellarKeys").contains("StellarTransactions") && !closure("StellarTransactions").contains("StellarKeystore"))
        // Text is the bottom: it reads and shows text, and reaches nothing (no key, no C library).
        #expect(closure("StellarText").isEmpty && closure("StellarKeys").contains("StellarText"))
        // The agent's server (threads, signals, a log) is a target of its own above the app library, which keeps
        // the client and the protocol; no product an app depends on reaches it, and it reaches no TPM library.
        #expect(closure("StellarKeystoreAgent").contains("StellarKeystore") && !closure("StellarKeystore").contains("StellarKeystoreAgent"))
        #expect(!reached.contains("StellarKeystoreAgent") && !closure("StellarKeystoreAgent").contains("CTSS2"))
        // Sign-in needs the SEP-10 checks (StellarTransactions) and HTTP, not the vaults: the caller brings signers.
        #expect(!closure("StellarWebAuth").contains("StellarKeystore"))
    }
}
