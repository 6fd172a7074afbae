import Foundation
import Testing
@testable import KeystoreCLI
#if canImport(Glibc)
import Glibc
#endif

/// A run in-process fails on a full disk as the process does (OutputFailureCLITests runs the binary): the failure
/// is the run's own, remembered in its console, not in a global that another test's run would see.
@Suite struct InProcessOutputFailureTests {
    /// `command` run with standard output on /dev/full (every write fails with ENOSPC): its status and stderr.
    func runToAFullDisk(_ command: [String]) throws -> (status: Int32, stderr: String) {
        let home = try KeystoreHome()
        let error = home.path + "/stderr"
        let fds = [open("/dev/null", O_RDONLY | O_CLOEXEC), open("/dev/full", O_WRONLY | O_CLOEXEC),
                   open(error, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)]
        defer { fds.forEach { close($0) } }
        try #require(fds.allSatisfy { $0 >= 0 })
        let console = Console.Run(input: fds[0], output: fds[1], error: fds[2], terminal: nil,
                                  environment: ["KEYSTORE_HOME": home.path, "HOME": home.path])
        let status = KeystoreTool.run(["keystore"] + command, on: console)
        return (status, try String(contentsOfFile: error, encoding: .utf8))
    }

    @Test(arguments: [["address", "--help"], ["--version"], ["strkey", "decode", KeystoreHome.golden.address]])
    func outputLostToAFullDiskIsExit11(_ command: [String]) throws {
        let (status, stderr) = try runToAFullDisk(command)
        #expect(status == 11 && stderr.contains("Could not write to standard output (No space left on device)"), "exit \(status): \(stderr)")
    }

    /// The same command with its output kept exits 0: the failure above was that run's, and it did not stay behind.
    @Test func aLostOutputIsTheRunsAlone() throws {
        _ = try runToAFullDisk(["--version"])
        let result = try KeystoreInProcess().run(["--version"])
        #expect(result.status == 0 && result.stdout.hasPrefix(KeystoreCommand.version), "exit \(result.status): \(result.stderr)")
    }
}
