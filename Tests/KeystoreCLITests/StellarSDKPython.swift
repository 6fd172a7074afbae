import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The Python with stellar-sdk that the SEP-10 interop tests run their server on (Tests/Interop/sep10-server.py):
/// `$KEYSTORE_STELLAR_SDK_PYTHON` as it is, else the virtualenv in `~/.cache/keystore-ci/stellar-sdk`, made here
/// when it is missing or lacks the pinned stellar-sdk (`python3 -m venv`, then `pip install stellar-sdk==16.1.1`,
/// from PyPI). That happens once per test run, whichever suite asks first (a static let), under a lock on the
/// cache directory so that two runs on one machine do not build it at once; the virtualenv stays, as a cache.
/// What cannot be had is an error of every test that needs it: the README says these tests run with `swift
/// test`, so they must never be skipped in silence.
enum StellarSDKPython {
    static let version = "16.1.1"
    static let variable = "KEYSTORE_STELLAR_SDK_PYTHON"
    /// `$HOME/.cache/keystore-ci`, as a shell spells `~` (Foundation's home directory is the password file's).
    static var cache: String { (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.cache/keystore-ci" }

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The Python's path, or why there is none.
    static func path() throws -> String { try found.get() }

    private static let found: Result<String, Unavailable> = {
        do {
            return .success(try find())
        } catch let unavailable as Unavailable {
            return .failure(unavailable)
        } catch {
            return .failure(Unavailable(description: "the stellar-sdk virtualenv could not be made: \(error)"))
        }
    }()

    private static func find() throws -> String {
        if let given = ProcessInfo.processInfo.environment[variable] {
            guard try imports(given, version: nil) else {
                throw Unavailable(description: "$\(variable) is \(given), which cannot import stellar_sdk")
            }
            return given
        }
        let venv = cache + "/stellar-sdk", python = venv + "/bin/python"
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
        let hint = "the README's set-up line installs python3-venv; or set $\(variable) to a Python that has stellar-sdk \(version)"
        if !FileManager.default.isExecutableFile(atPath: python) {
            let made = try KeystoreProcess(program: "python3").run(["-m", "venv", venv], timeout: 300)
            guard made.status == 0 else {
                try? FileManager.default.removeItem(atPath: venv)  // half made: the next run starts again
                throw Unavailable(description: "python3 -m venv \(venv) failed (\(lastLines(made))): \(hint)")
            }
        }
        let installed = try KeystoreProcess(program: python)
            .run(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "stellar-sdk==\(version)"], timeout: 600)
        guard installed.status == 0, try imports(python, version: version) else {
            throw Unavailable(description: "pip could not install stellar-sdk \(version) into \(venv) (\(lastLines(installed))): \(hint), "
                              + "or delete \(venv) to start again")
        }
        return python
    }

    /// Whether `python` imports stellar_sdk, at `version` if one is given.
    private static func imports(_ python: String, version: String?) throws -> Bool {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let check = version.map { "import stellar_sdk, sys; sys.exit(stellar_sdk.__version__ != '\($0)')" } ?? "import stellar_sdk"
        return try KeystoreProcess(program: python).run(["-c", check], timeout: 120).status == 0
    }

    private static func lastLines(_ result: KeystoreProcess.Result) -> String {
        let lines = (result.stderr + result.stdout).split(separator: "\n").suffix(3).joined(separator: " / ")
        return lines.isEmpty ? "exit \(result.status)" : lines
    }
}
