import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// More of what the README, SECURITY.md and docs/LIBRARY.md tell a person to paste, checked as written.
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
    static func withScratch<R>(_ body: (String) throws -> R) throws -> R {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-snippet-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return try body(scratch)
    }

    /// The README's Library block, verbatim, type-checks against the library this run built (swiftc with the
    /// build's modules: a second of work, not a package build). `path` is the app's own, given beside it.
    @Test func theLibraryBlockCompilesAsWritten() throws {
        let block = try Self.block("swift", containing: "import StellarKeystore", in: Self.readme)
        let build = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent()
        try Self.withScratch { scratch in
            try block.write(toFile: scratch + "/main.swift", atomically: false, encoding: .utf8)
            try "let path = \"/nonexistent\"\n".write(toFile: scratch + "/given.swift", atomically: false, encoding: .utf8)
            var swiftc = KeystoreProcess(program: "swiftc")
            swiftc.environment["TMPDIR"] = scratch
            let result = try swiftc.run([
                "-typecheck", "-warnings-as-errors", scratch + "/main.swift", scratch + "/given.swift",
                "-I", build.appendingPathComponent("Modules").path,
                "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CPlatform.build/module.modulemap").path,
                "-I", Self.root.appendingPathComponent("Sources/CSodium").path,
                "-module-cache-path", scratch + "/module-cache",
            ], timeout: 300)
            #expect(result.status == 0, "\(result.stderr)")
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
}
