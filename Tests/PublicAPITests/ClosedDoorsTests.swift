import Foundation
import Testing
import TestFixtures

/// Every way to a signature that skips the review, tried as an app would write it, each a build error in an
/// app's code: a token's login and its raw signature, and the TPM's raw signature (each would sign with a vault's
/// key with no review and no wrong-PIN count). A control that reaches a signature through the review compiles,
/// so that a broken compiler run cannot pass for a closed door. The per-kind sign-ups and the start of a session
/// from a `Signer`, which the one `signUp` and `startSession(name:ttl:pin:)` replaced, are gone from an app too.
///
/// `swift test` builds this target inside the package, where `package` members are visible: the probes are
/// type-checked apart, by swiftc, as module `AnApp` against the modules this run built.
@Suite struct ClosedDoorsTests {
    /// What an app must not compile, each on its own line, with the name the compiler's error must give.
    static let doors: [(line: String, name: String)] = [
        ("try session.login(pin: pin.bytes)", "login"),
        ("let _ = try session.sign([1, 2, 3], key: [1])", "sign"),
        ("let _ = try tpm.signature(for: [UInt8](repeating: 0, count: 32), with: key, authValue: pin.bytes)", "signature"),
        ("let _: (any TPMKeySigning)? = nil", "TPMKeySigning"),
    ]

    /// The old sign-ups and start of a session, one per key kind, which an app no longer has: `signUp` takes a
    /// `NewKey` of any kind and `startSession` a name and PIN. An overload the app still sees answers for a name
    /// that went, so each is told by the error that its line must give.
    static let gone: [(line: String, error: String)] = [
        ("let _ = try keystore.signUpP256(name: \"card\") { pin }", "has no member 'signUpP256'"),
        ("let _ = try keystore.signUp(name: \"a\", inTokenOf: \"/m.so\", token: nil, key: .new(label: \"a\")) { pin }",
         "extra arguments at positions #2, #3"),
        ("let _ = try keystore.signUp(name: \"a\", key: reference)",
         "cannot convert value of type 'PKCS11KeyReference' to expected argument type 'Keystore.NewKey'"),
        ("let _: Keystore.CreatedInToken? = nil", "'CreatedInToken' is not a member type"),
        ("let _ = try keystore.logInToToken(module: \"/m.so\", label: nil) { pin }", "'logInToToken' is inaccessible"),
        ("let _ = try keystore.startSession(signer, ttl: .seconds(60))",
         "cannot convert value of type 'Signer' to expected argument type 'IdentityName'"),
    ]

    static let prelude = [
        "import StellarKeystore", "import StellarKeystoreTPM", "import StellarKeys",
        "func probe(keystore: Keystore, session: PKCS11Session, tpm: TPM, key: TPMSigningKey, pin: PIN, signer: Signer,",
        "           reference: PKCS11KeyReference) throws {",
    ]

    /// The reviewed way, and what of the same types stays public (a token's keys, the TPM's state).
    static let control = prelude + [
        "    let review = try keystore.review(.message([1, 2, 3]), as: \"alice\")",
        "    let _ = try review.approve { pin }.signed",
        "    let _ = try session.keys(label: nil, id: nil)",
        "    let _ = try tpm.dictionaryAttackState()",
        "    let _ = try keystore.signUp(name: \"a\", key: .inToken(module: \"/m.so\", token: nil, key: .new(label: \"a\"))) { _ in pin }",
        "    let _ = try keystore.signUp(name: \"card\", key: .p256InTPM) { _ in pin }",
        "    let _ = try keystore.startSession(name: \"a\", ttl: .seconds(60)) { pin }",
        "}",
    ]

    @Test func eachOldDoorToASignatureFailsToCompileInAnApp() async throws {
        // swiftc takes seconds: waited for off the cooperative pool.
        let (compiled, result) = try await OffThePool.run { try Self.withScratch { scratch in
            try Self.control.joined(separator: "\n").write(toFile: scratch + "/control.swift", atomically: false, encoding: .utf8)
            let compiled = try Self.typecheckAsAnApp(scratch + "/control.swift", in: scratch)
            let probe = Self.prelude + (Self.doors.map(\.line) + Self.gone.map(\.line)).map { "    " + $0 } + ["}"]
            try probe.joined(separator: "\n").write(toFile: scratch + "/app.swift", atomically: false, encoding: .utf8)
            return (compiled, try Self.typecheckAsAnApp(scratch + "/app.swift", in: scratch))
        } }
        try #require(compiled.status == 0, "the control does not compile: \(compiled.stderr)")
        #expect(result.status != 0)
        let errors = result.stderr.split(separator: "\n").filter { $0.contains(": error: ") }
        for (index, door) in Self.doors.enumerated() {
            let line = "app.swift:\(Self.prelude.count + index + 1):"
            let error = errors.first { $0.contains(line) }
            #expect(error.map { ($0.contains("inaccessible") || $0.contains("cannot find")) && $0.contains("'\(door.name)'") } == true,
                    "an app can: \(door.line)\n\(result.stderr)")
        }
        for (index, door) in Self.gone.enumerated() {
            let line = "app.swift:\(Self.prelude.count + Self.doors.count + index + 1):"
            #expect(errors.contains { $0.contains(line) && $0.contains(door.error) }, "an app can: \(door.line)\n\(result.stderr)")
        }
    }

    // MARK: Compiling as an app

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The directory this run's modules were built into: the test bundle's.
    static var build: URL {
        let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
                          URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modules/StellarKeystore.swiftmodule").path) }
            ?? candidates[0]
    }

    static func typecheckAsAnApp(_ file: String, in scratch: String) throws -> (status: Int32, stderr: String) {
        let swiftc = Process()
        swiftc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        swiftc.arguments = ["swiftc", "-typecheck", "-module-name", "AnApp", file,
                            "-I", build.appendingPathComponent("Modules").path,
                            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CPlatform.build/module.modulemap").path,
                            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CTSS2.build/module.modulemap").path,
                            "-Xcc", "-fmodule-map-file=" + build.appendingPathComponent("CPKCS11.build/module.modulemap").path,
                            "-I", root.appendingPathComponent("Sources/CSodium").path,
                            "-module-cache-path", scratch + "/module-cache"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = scratch
        swiftc.environment = environment
        let errors = Pipe()
        swiftc.standardError = errors
        swiftc.standardOutput = FileHandle.nullDevice
        try swiftc.run()
        // Read before waiting: a full pipe would hold swiftc forever.
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        swiftc.waitUntilExit()
        return (swiftc.terminationStatus, stderr)
    }

    static func withScratch<R>(_ body: (String) throws -> R) throws -> R {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-doors-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return try body(scratch)
    }
}
