import Foundation
import Testing
import StellarKeystore

/// Examples/BasicPayAuth: an app that depends on the StellarKeystore product only. It must build, run the
/// sign-up, sign-in, PIN change and session flow, and print a SEP-53 signature that verifies.
@Suite struct ExampleAppTests {
    @Test(.timeLimit(.minutes(10)))
    func theBasicPayAuthExampleBuildsRunsAndSigns() async throws {
        let package = KeystoreHome.fixtures.deletingLastPathComponent().appendingPathComponent("Examples/BasicPayAuth").path
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-example-\(UUID().uuidString)").path
        // SwiftPM keeps its lock files for a scratch path in TMPDIR: a directory of the test's own, removed after.
        let temporary = scratch + "-tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        // SwiftPM also writes Package.resolved beside the example's Package.swift; it goes too, if it was not there.
        let resolved = package + "/Package.resolved"
        let hadResolved = FileManager.default.fileExists(atPath: resolved)
        defer {
            for path in [scratch, temporary] + (hadResolved ? [] : [resolved]) { try? FileManager.default.removeItem(atPath: path) }
        }
        var swift = KeystoreProcess(program: "swift")
        swift.environment["TMPDIR"] = temporary
        // Built once, so whole-module (two code-generation threads keep the object per file SwiftPM links) and
        // without the index store: less CPU than batch mode, and what is checked (an app that depends on the
        // StellarKeystore product alone builds, and runs) is the same.
        let build = try await swift.run(["build", "--package-path", package, "--scratch-path", scratch, "--product", "BasicPayAuth",
                                         "--disable-index-store", "-Xswiftc", "-wmo", "-Xswiftc", "-num-threads", "-Xswiftc", "2"], timeout: 600)
        try #require(build.status == 0, "\(build.stdout)\n\(build.stderr)")
        // Run as a person would, with no directory given: it works in one of its own in TMPDIR (a directory of
        // the test's), and leaves nothing there.
        let runTemporary = scratch + "-run"
        try FileManager.default.createDirectory(atPath: runTemporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: runTemporary) }
        var example = KeystoreProcess(program: scratch + "/debug/BasicPayAuth")
        example.environment["TMPDIR"] = runTemporary
        let run = try await example.run([])
        try #require(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runTemporary) == [], "the example left files behind")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        let signature = try #require(Data(base64Encoded: lines[2]))
        #expect(try PublicKey(accountID: lines[0]).isValidMessageSignature(Array(signature), for: Array(lines[1].utf8)))
    }
}
