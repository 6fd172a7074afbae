import Foundation
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// The built `keystore` binary run as a subprocess, the way a user or a script runs it.
///
/// Standard input comes from a file and standard output and error go to files, so that no pipe can fill up and
/// deadlock however much the command prints, and the two streams stay apart.
struct KeystoreProcess {
    struct Result {
        let status: Int32
        let stdoutBytes: [UInt8]
        let stderrBytes: [UInt8]
        var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
        var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
        var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
    }

    static let binary = builtProduct("keystore")

    /// A product of this package, found beside the tests.
    static func builtProduct(_ name: String) -> String {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            fatalError("the \(name) binary was not found beside the tests: \(candidates.map(\.path))")
        }
        return found.path
    }

    /// What to run; `keystore` unless a test says otherwise.
    var program = Self.binary
    /// Environment variables set for every run on top of the test's own; `nil` removes a variable.
    var environment: [String: String?] = [:]
    /// Whether `run` calls the command in this process (`KeystoreInProcess`) instead of starting the binary. A run
    /// that needs a process all the same starts one: inherited descriptors (`files`, or a `--…-fd` option, whose
    /// number names the process's descriptor), a `prefix` (a limit, another user), another `program`, or a variable
    /// that the process reads itself rather than through the run's environment (the loader's `LD_…`, the
    /// library's crash and pause points `KEYSTORE_TEST_…`). `start` always starts one.
    var runsInProcess = false

    /// The same, in this process where it can be.
    var inProcess: KeystoreProcess {
        var copy = self
        copy.runsInProcess = true
        return copy
    }

    /// A started `keystore`, for tests that talk to it (through a pseudo-terminal) while it runs.
    struct Running {
        let pid: pid_t
        let scratch: URL

        /// What it has written to standard error so far.
        var stderrSoFar: String {
            (try? String(contentsOf: scratch.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        }

        /// Whether it has exited; it is not reaped, so `wait` still collects its result.
        var hasExited: Bool {
            var info = siginfo_t()
            return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
        }

        /// A helper (a fake agent, an agent) that must be ready before its test goes on: waits up to `seconds` for
        /// `isReady`, and throws at once if it exits first, or at the deadline, saying so with its standard error.
        func waitUntilReady(_ what: String, seconds: Double = 10, _ isReady: () -> Bool) throws {
            let deadline = Date() + seconds
            while !isReady() {
                if hasExited { throw DidNotStart(description: "\(what) exited before it was ready; its stderr: \(stderrSoFar)") }
                if Date() > deadline { throw DidNotStart(description: "\(what) was not ready after \(seconds) s; its stderr: \(stderrSoFar)") }
                usleep(10_000)
            }
        }

        /// Waits for the exit; after `timeout` seconds the process is killed and the result says so (status 137),
        /// so that a hang (a prompt nobody answers) fails its test instead of stalling the suite.
        ///
        /// This blocks the calling thread: from an `async` test, `await` the `async` form, which waits off the pool.
        func wait(timeout: Double? = 120) throws -> Result {
            try blockingWait(timeout: timeout)
        }

        /// `wait(timeout:)` on a thread of its own: the calling task is suspended and holds no pool thread meanwhile,
        /// so a process that runs for minutes (a `swift build`) stops no other test.
        func wait(timeout: Double? = 120) async throws -> Result {
            try await OffThePool.run { try blockingWait(timeout: timeout) }
        }

        private func blockingWait(timeout: Double?) throws -> Result {
            defer { try? FileManager.default.removeItem(at: scratch) }
            var status: Int32 = 0
            if let timeout {
                let deadline = Date() + timeout
                while waitpid(pid, &status, WNOHANG) == 0 {
                    if Date() > deadline {
                        kill(pid, SIGKILL)
                        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                        break
                    }
                    usleep(10_000)
                }
            } else {
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            }
            let exited = status & 0x7F == 0
            return Result(
                status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F),
                stdoutBytes: Array(try Data(contentsOf: scratch.appendingPathComponent("stdout"))),
                stderrBytes: Array(try Data(contentsOf: scratch.appendingPathComponent("stderr"))))
        }
    }

    /// Runs `keystore arguments…`, feeding `stdin` and making each `files[n]` readable on descriptor n.
    func run(_ arguments: [String], stdin: [UInt8] = [], files: [Int32: [UInt8]] = [:], prefix: [String] = [],
             timeout: Double? = 120) throws -> Result {
        if inThisProcess(arguments, files: files, prefix: prefix) { return try KeystoreInProcess(environment: environment).run(arguments, stdin: stdin) }
        return try start(arguments, stdin: stdin, files: files, prefix: prefix).wait(timeout: timeout)
    }

    /// `run` for `async` tests: the same, waiting off the pool.
    func run(_ arguments: [String], stdin: [UInt8] = [], files: [Int32: [UInt8]] = [:], prefix: [String] = [],
             timeout: Double? = 120) async throws -> Result {
        if inThisProcess(arguments, files: files, prefix: prefix) { return try await KeystoreInProcess(environment: environment).run(arguments, stdin: stdin) }
        return try await start(arguments, stdin: stdin, files: files, prefix: prefix).wait(timeout: timeout)
    }

    private func inThisProcess(_ arguments: [String], files: [Int32: [UInt8]], prefix: [String]) -> Bool {
        runsInProcess && files.isEmpty && prefix.isEmpty && program == Self.binary
            && !arguments.contains { $0.hasPrefix("--") && ($0.hasSuffix("-fd") || $0.contains("-fd=")) }
            && !environment.keys.contains { $0.hasPrefix("LD_") || $0.hasPrefix("KEYSTORE_TEST_") }
    }

    /// Starts `keystore arguments…` in a new session. Without `terminal` it has no controlling terminal, so a
    /// prompt fails at once instead of waiting on the terminal of whoever runs the tests; with `terminal` (a
    /// pseudo-terminal's path) that terminal is its standard input and controlling terminal. `prefix` runs the
    /// binary through another program (e.g. `setpriv` to drop root).
    func start(_ arguments: [String], stdin: [UInt8] = [], files: [Int32: [UInt8]] = [:], terminal: String? = nil,
               prefix: [String] = []) throws -> Running {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inputs = files
        if terminal == nil { inputs[0] = stdin }
        for (fd, content) in inputs {
            let path = scratch.appendingPathComponent("fd\(fd)").path
            try Data(content).write(to: URL(fileURLWithPath: path))
            posix_spawn_file_actions_addopen(&actions, fd, path, O_RDONLY, 0)
        }
        // Opened after setsid(), so the terminal becomes the controlling one.
        if let terminal { posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0) }
        posix_spawn_file_actions_addopen(&actions, 1, scratch.appendingPathComponent("stdout").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, scratch.appendingPathComponent("stderr").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (0x80, glibc ≥ 2.26; hidden behind _GNU_SOURCE), and signals as a shell gives them: none
        // blocked, none ignored. The test runner's threads block some, and a child inherits that mask.
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(0x80 | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value ?? nil }
        // Counting the tests that still start the binary: each start, named, on a line of this file.
        if let log = env["KEYSTORE_TEST_SPAWN_LOG"], let file = fopen(log, "a") {
            fputs("\((prefix + [program]).joined(separator: " ")) \(arguments.first ?? "")\n", file)
            fclose(file)
        }
        let argv = prefix + [program] + arguments
        let pid = try withCStrings(argv) { argv in
            try withCStrings(env.map { "\($0.key)=\($0.value)" }) { envp in
                var pid: pid_t = 0
                let rc = posix_spawnp(&pid, argv[0]!, &actions, &attributes, argv, envp)
                guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
                return pid
            }
        }
        return Running(pid: pid, scratch: scratch)
    }
}

/// A helper process that did not get ready, with what it said.
struct DidNotStart: Error, CustomStringConvertible {
    let description: String
}

private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) throws -> R) rethrows -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return try body(pointers)
}
