import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A private swtpm for a test suite: its own state directory and a free loopback port pair, started when the
/// suite starts (`.softwareTPM`) and stopped by its process id when the suite ends, state and all. Without a
/// resource manager in between, as a leaked handle would show. One a test starts itself stops when the test lets
/// go of it: a test that forgot to (or threw before its `defer`) once left seven swtpm and their state each run.
public final class SoftwareTPM: Sendable {
    /// The suite's TPM, inside a suite that has the `.softwareTPM` trait.
    @TaskLocal public static var current: SoftwareTPM?

    /// Whether swtpm (and tpm2-tools, for the owner's side) are installed; TPM suites are skipped without them.
    public static let isInstalled = ["swtpm", "tpm2_dictionarylockout"].allSatisfy { tool in
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            access("\($0)/\(tool)", X_OK) == 0
        }
    }

    public let port: Int
    public let stateDirectory: String
    private let pid: pid_t
    /// Whether `stop` ran: it runs once, so a later call (the release after the trait's) never signals a process
    /// id the system has since given to another process.
    private let stopped = Mutex(false)

    /// The TCTI configuration keystore's `KEYSTORE_TPM_TCTI` takes.
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// A TPM with a fresh state (its own new primary seeds), or with a copy of `permanentState` (a saved
    /// `tpm2-00.permall`): the same TPM as the one that state was saved from.
    public init(permanentState: String? = nil) throws {
        stateDirectory = NSTemporaryDirectory() + "keystore-swtpm-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: false)
        if let permanentState {
            try FileManager.default.copyItem(atPath: permanentState, toPath: stateDirectory + "/tpm2-00.permall")
        }
        var lastFailure = "no port tried"
        for _ in 0..<20 {
            let port = Int.random(in: 20_000...60_000)
            guard Self.isFree(port), Self.isFree(port + 1) else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "swtpm", "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1", "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                "--flags", "not-need-init,startup-clear",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilListening(port, while: process) {
                self.port = port
                self.pid = process.processIdentifier
                return
            }
            lastFailure = "swtpm did not start on port \(port)"
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: stateDirectory)
        throw SoftwareTPMError(message: lastFailure)
    }

    deinit { stop() }

    /// Stops swtpm and deletes its state; the first call does, a later one nothing.
    public func stop() {
        let wasStopped = stopped.withLock { stopped in
            let was = stopped
            stopped = true
            return was
        }
        guard !wasStopped else { return }
        // SIGKILL: a child of the test process inherits its blocked signals (SIGTERM among them), and its state
        // is deleted anyway.
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    /// What the TPM's owner would run: end a dictionary-attack lockout and reset the failure counter.
    public func clearLockout() throws {
        try ownerTool(["tpm2_dictionarylockout", "--clear-lockout", "-T", tcti])
    }

    /// Sets the dictionary-attack parameters (`tpm2_dictionarylockout --setup-parameters`).
    public func setDictionaryAttackParameters(maximumFailures: Int, intervalSeconds: Int, recoverySeconds: Int) throws {
        try ownerTool(["tpm2_dictionarylockout", "--setup-parameters", "--max-tries=\(maximumFailures)",
                       "--recovery-time=\(intervalSeconds)", "--lockout-recovery-time=\(recoverySeconds)", "-T", tcti])
    }

    /// Sets the owner hierarchy's password (`tpm2_changeauth -c owner`); "" for none.
    public func setOwnerPassword(_ new: String, current: String = "") throws {
        try ownerTool(["tpm2_changeauth", "-c", "owner", "-T", tcti] + (current.isEmpty ? [] : ["-p", current]) + [new])
    }

    /// `storageKey` (a marshalled TPM2B_PUBLIC of a P-256 key, as a move target writes it) with its unique point
    /// replaced by a new P-256 public key that OpenSSL made here: a storage key whose private half is in no TPM but
    /// with whoever made it. The point is the area's last 68 bytes (two TPM2B_ECC_PARAMETERs of 32 bytes).
    public static func forgedStorageKey(like storageKey: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "openssl ecparam -name prime256v1 -genkey -noout | openssl ec -pubout -outform DER 2>/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let der = Array(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        // A P-256 SubjectPublicKeyInfo ends with the uncompressed point: 0x04, X, Y.
        guard process.terminationStatus == 0, der.count == 91, der[26] == 0x04, storageKey.count > 70 else {
            throw SoftwareTPMError(message: "openssl made no P-256 key")
        }
        var forged = storageKey
        forged.replaceSubrange((forged.count - 66)..<(forged.count - 34), with: der[27..<59])
        forged.replaceSubrange((forged.count - 32)..<forged.count, with: der[59..<91])
        return forged
    }

    private func ownerTool(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SoftwareTPMError(message: "\(arguments[0]) failed: \(text)")
        }
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func waitUntilListening(_ port: Int, while process: Process) -> Bool {
        for _ in 0..<250 where process.isRunning {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        return false
    }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return address
    }
}

public struct SoftwareTPMError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Gives a suite its own swtpm for the time it runs (`SoftwareTPM.current`), and skips the suite, by name,
/// where swtpm is not installed.
public struct SoftwareTPMTrait: SuiteTrait, TestScoping, TestTrait {
    public var isRecursive: Bool { false }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        try await SoftwareTPM.$current.withValue(tpm) { try await function() }
    }
}

extension Trait where Self == SoftwareTPMTrait {
    public static var softwareTPM: Self { SoftwareTPMTrait() }
}

extension SoftwareTPM {
    /// The suite's TPM, or a failed test that says the trait is missing.
    public static func required(sourceLocation: SourceLocation = #_sourceLocation) throws -> SoftwareTPM {
        try #require(current, "the suite needs the .softwareTPM trait", sourceLocation: sourceLocation)
    }
}
