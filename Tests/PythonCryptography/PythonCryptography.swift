import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An independent check of NIST P-256 ECDSA signatures: pyca/cryptography (OpenSSL underneath), which shares no
/// code with a TPM or with keystore. Its Python is `$KEYSTORE_CRYPTOGRAPHY_PYTHON` as it is, else the virtualenv
/// in `~/.cache/keystore-ci/cryptography`, made here when it is missing or lacks the pinned cryptography
/// (`python3 -m venv`, then `pip install cryptography==50.0.2`, from PyPI). That happens once per test run,
/// whichever test asks first (a static let), under a lock on the cache directory so that two runs on one machine
/// do not build it at once; the virtualenv stays, as a cache. What cannot be had is an error of every test that
/// needs it, never a skip in silence.
public enum PythonCryptography {
    public static let version = "50.0.2"
    public static let stellarSDKVersion = "16.1.1"

    /// Runs a script of `fixtures/` (e.g. make-webauthn.py's `verify`) with that Python: its status and output.
    public static func runScript(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try run(try path(), [script] + arguments, timeout: 120)
    }
    public static let variable = "KEYSTORE_CRYPTOGRAPHY_PYTHON"
    /// `$HOME/.cache/keystore-ci`, as a shell spells `~` (Foundation's home directory is the password file's).
    static var cache: String { (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.cache/keystore-ci" }

    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Whether `r` and `s` (big-endian) are an ECDSA signature over the SHA-256 `digest`, as signed (not hashed
    /// again: `Prehashed`), by the P-256 `publicKey` (SEC 1 uncompressed or compressed). Throws when the check
    /// could not be made at all, a point not on the curve among them.
    public static func isValidP256Signature(r: [UInt8], s: [UInt8], digest: [UInt8], publicKey: [UInt8]) throws -> Bool {
        let script = """
            import sys
            from cryptography.exceptions import InvalidSignature
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.asymmetric import ec, utils
            point, digest, r, s = (bytes.fromhex(a) for a in sys.argv[1:5])
            key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
            signature = utils.encode_dss_signature(int.from_bytes(r, "big"), int.from_bytes(s, "big"))
            try:
                key.verify(signature, digest, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
                print("valid")
            except InvalidSignature:
                print("invalid")
            """
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let result = try run(try path(), ["-c", script, hex(publicKey), hex(digest), hex(r), hex(s)], timeout: 120)
        switch (result.status, result.output.trimmingCharacters(in: .whitespacesAndNewlines)) {
        case (0, "valid"): return true
        case (0, "invalid"): return false
        default: throw Unavailable(description: "cryptography could not check the signature (exit \(result.status)): \(result.output)")
        }
    }

    /// The Python's path, or why there is none.
    public static func path() throws -> String { try found.get() }

    private static let found: Result<String, Unavailable> = {
        do {
            return .success(try find())
        } catch let unavailable as Unavailable {
            return .failure(unavailable)
        } catch {
            return .failure(Unavailable(description: "the cryptography virtualenv could not be made: \(error)"))
        }
    }()

    private static func find() throws -> String {
        if let given = ProcessInfo.processInfo.environment[variable] {
            guard try imports(given, version: nil) else {
                throw Unavailable(description: "$\(variable) is \(given), which cannot import cryptography")
            }
            return given
        }
        let venv = cache + "/cryptography", python = venv + "/bin/python"
        if try imports(python, version: version) { return python }
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let lock = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw Unavailable(description: "\(cache) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(lock) }  // and with it the lock
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Unavailable(description: "\(cache) cannot be locked: \(String(cString: strerror(errno)))") }
        }
        // Another run may have made it while this one waited.
        if try imports(python, version: version) { return python }
        let hint = "the README's set-up line installs python3-venv; or set $\(variable) to a Python that has cryptography \(version)"
        if !FileManager.default.isExecutableFile(atPath: python) {
            let made = try run("python3", ["-m", "venv", venv], timeout: 300)
            guard made.status == 0 else {
                try? FileManager.default.removeItem(atPath: venv)  // half made: the next run starts again
                throw Unavailable(description: "python3 -m venv \(venv) failed (\(lastLines(made.output))): \(hint)")
            }
        }
        // stellar-sdk too: fixtures/make-webauthn.py, the reference of OpenZeppelin's WebAuthn verifier, builds its
        // ScVals with it.
        let installed = try run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "cryptography==\(version)",
                                         "stellar-sdk==\(stellarSDKVersion)"],
                                timeout: 600)
        guard installed.status == 0, try imports(python, version: version) else {
            throw Unavailable(description: "pip could not install cryptography \(version) into \(venv) (\(lastLines(installed.output))): "
                              + "\(hint), or delete \(venv) to start again")
        }
        return python
    }

    /// Whether `python` imports cryptography, at `version` if one is given.
    private static func imports(_ python: String, version: String?) throws -> Bool {
        guard python.contains("/") ? FileManager.default.isExecutableFile(atPath: python) : true else { return false }
        let check = version.map {
            "import cryptography, stellar_sdk, sys; sys.exit(cryptography.__version__ != '\($0)' or stellar_sdk.__version__ != '\(stellarSDKVersion)')"
        } ?? "import cryptography"
        return try run(python, ["-c", check], timeout: 120).status == 0
    }

    /// Runs `program` under coreutils' `timeout` (which ends it with status 124), its standard output and error
    /// together, read to the end before waiting so that a full pipe never blocks it.
    private static func run(_ program: String, _ arguments: [String], timeout: Int) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "--kill-after=5", String(timeout), program] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    private static func lastLines(_ output: String) -> String {
        let lines = output.split(separator: "\n").suffix(3).joined(separator: " / ")
        return lines.isEmpty ? "no output" : lines
    }
}
