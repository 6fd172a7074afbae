import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Python with pinned packages from PyPI, for the tests that check keystore against an independent
/// implementation: `$variable` as it is, else the virtualenv `~/.cache/keystore-ci/NAME`, made when it is missing
/// or lacks a pinned version (`python3 -m venv`, then `pip install`). That happens once per test run, whichever test
/// asks first (each caller keeps the result in a static let), under a lock on the cache directory so that two runs
/// on one machine do not build it at once; the virtualenv stays, as a cache. What cannot be had is an error of
/// every test that needs it, never a skip in silence: the README says these tests run with `swift test`.
public struct PinnedVirtualenv: Sendable {
    /// The directory's name under the cache.
    public let name: String
    /// The environment variable that names a Python to use instead.
    public let variable: String
    /// Each package as pip installs it, the module it imports as, and its pinned version.
    public let packages: [(pip: String, module: String, version: String)]

    public init(name: String, variable: String, packages: [(pip: String, module: String, version: String)]) {
        self.name = name
        self.variable = variable
        self.packages = packages
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// `$HOME/.cache/keystore-ci`, as a shell spells `~` (Foundation's home directory is the password file's).
    static var cache: String { (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.cache/keystore-ci" }

    /// The Python's path, or why there is none.
    public func find() -> Result<String, Unavailable> {
        do {
            return .success(try make())
        } catch let unavailable as Unavailable {
            return .failure(unavailable)
        } catch {
            return .failure(Unavailable(description: "the \(name) virtualenv could not be made: \(error)"))
        }
    }

    private var what: String { packages.map { "\($0.pip) \($0.version)" }.joined(separator: " and ") }

    private func make() throws -> String {
        if let given = ProcessInfo.processInfo.environment[variable] {
            guard try imports(given, pinned: false) else { throw Unavailable(description: "$\(variable) is \(given), which cannot import \(what)") }
            return given
        }
        let cache = Self.cache, venv = cache + "/" + name, python = venv + "/bin/python"
        if try imports(python, pinned: true) { return python }
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let lock = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw Unavailable(description: "\(cache) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(lock) }  // and with it the lock
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Unavailable(description: "\(cache) cannot be locked: \(String(cString: strerror(errno)))") }
        }
        // Another run may have made it while this one waited.
        if try imports(python, pinned: true) { return python }
        let hint = "the README's set-up line installs python3-venv; or set $\(variable) to a Python that has \(what)"
        if !FileManager.default.isExecutableFile(atPath: python) {
            let made = try Self.run("python3", ["-m", "venv", venv], timeout: 300)
            guard made.status == 0 else {
                try? FileManager.default.removeItem(atPath: venv)  // half made: the next run starts again
                throw Unavailable(description: "python3 -m venv \(venv) failed (\(Self.lastLines(made.output))): \(hint)")
            }
        }
        let installed = try Self.run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                                         + packages.map { "\($0.pip)==\($0.version)" }, timeout: 600)
        guard installed.status == 0, try imports(python, pinned: true) else {
            throw Unavailable(description: "pip could not install \(what) into \(venv) (\(Self.lastLines(installed.output))): "
                              + "\(hint), or delete \(venv) to start again")
        }
        return python
    }

    /// Whether `python` imports every package, at its pinned version if `pinned`.
    private func imports(_ python: String, pinned: Bool) throws -> Bool {
        guard python.contains("/") ? FileManager.default.isExecutableFile(atPath: python) : true else { return false }
        let modules = packages.map(\.module).joined(separator: ", ")
        let versions = packages.map { "\($0.module).__version__ != '\($0.version)'" }.joined(separator: " or ")
        let check = pinned ? "import \(modules), sys; sys.exit(\(versions))" : "import \(modules)"
        return try Self.run(python, ["-c", check], timeout: 120).status == 0
    }

    /// Runs `program` under coreutils' `timeout` (which ends it with status 124), its standard output and error
    /// together, read to the end before waiting so that a full pipe never blocks it.
    public static func run(_ program: String, _ arguments: [String], timeout: Int) throws -> (status: Int32, output: String) {
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
