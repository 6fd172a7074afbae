import Foundation
import TestFixtures
@testable import KeystoreCLI
#if canImport(Glibc)
import Glibc
#endif

/// `keystore` run in this process, as a library call: the command line, standard input, and what it wrote to
/// standard output and error with its exit status, in `KeystoreProcess`'s terms, so that a test moves from one to
/// the other by changing the type it runs.
///
/// Each run has files of its own for its standard descriptors (opened close-on-exec: a process another test starts
/// meanwhile inherits none of them), no controlling terminal (a prompt fails at once, as under `KeystoreProcess`,
/// whose runs start in a new session), and its own environment: the tests' own with `environment` on top. Nothing
/// of the process changes, so runs go on in parallel; the one command that would change it (a completion script,
/// `NeedsAProcess`) is refused. What a process is needed for stays with `KeystoreProcess`:
/// a terminal, a signal, an inherited descriptor (`--pin-fd`), a crash, a resource limit, another program.
struct KeystoreInProcess {
    /// Environment variables set for every run on top of the test's own; `nil` removes a variable.
    var environment: [String: String?] = [:]

    /// What a run in-process cannot do without changing the process for every other run: write a completion script
    /// (argument-parser then formats each later completion answer in the process for that script's shell).
    struct NeedsAProcess: Error, CustomStringConvertible {
        let arguments: [String]
        var description: String { "keystore \(arguments.joined(separator: " ")) changes argument-parser's state for the whole process: run it with KeystoreProcess" }
    }

    /// Runs `keystore arguments…` with `stdin` on standard input. There is no `timeout`: a run in-process cannot
    /// be killed, and none waits for anything but its files (no terminal, no descriptor of the test's).
    func run(_ arguments: [String], stdin: [UInt8] = []) throws -> KeystoreProcess.Result {
        if arguments.contains(where: { $0 == "--generate-completion-script" || $0.hasPrefix("--generate-completion-script=") }) {
            throw NeedsAProcess(arguments: arguments)
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-inprocess-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let input = scratch.appendingPathComponent("stdin"), output = scratch.appendingPathComponent("stdout"),
            error = scratch.appendingPathComponent("stderr")
        try Data(stdin).write(to: input)
        let fds = [open(input.path, O_RDONLY | O_CLOEXEC),
                   open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600),
                   open(error.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)]
        defer { fds.filter { $0 >= 0 }.forEach { close($0) } }
        guard fds.allSatisfy({ $0 >= 0 }) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }

        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value ?? nil }
        let console = Console.Run(input: fds[0], output: fds[1], error: fds[2], terminal: nil, environment: variables)
        let status = KeystoreTool.run(["keystore"] + arguments, on: console)
        return KeystoreProcess.Result(status: status, stdoutBytes: Array(try Data(contentsOf: output)),
                                      stderrBytes: Array(try Data(contentsOf: error)))
    }

    /// `run` for `async` tests: the same, on a thread of its own, so that a command that derives a key (Argon2id,
    /// a second or so) holds no thread of the cooperative pool meanwhile.
    func run(_ arguments: [String], stdin: [UInt8] = []) async throws -> KeystoreProcess.Result {
        try await OffThePool.run { try run(arguments, stdin: stdin) }
    }
}
