import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private SoftHSM2 token for a test: its own configuration file and token directory under the temporary
/// directory, one token initialised in it, all removed by `remove()` (or when the object goes).
///
/// SoftHSM2 reads `SOFTHSM2_CONF` when it is initialised, once per process: a subprocess gets `environment`; a
/// test that loads the module in its own process uses `forThisProcess()`, the one token directory the module
/// sees there.
public final class SoftwareToken: Sendable {
    /// Debian's softhsm2 package.
    public static let defaultModulePath = "/usr/lib/softhsm/libsofthsm2.so"

    /// Whether SoftHSM2 and OpenSC's pkcs11-tool are installed; PKCS#11 suites are skipped without them.
    public static let isInstalled = access(defaultModulePath, R_OK) == 0
        && ["softhsm2-util", "pkcs11-tool"].allSatisfy { tool in
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
                access("\($0)/\(tool)", X_OK) == 0
            }
        }

    public let modulePath: String
    public let label: String
    /// The user PIN and the security officer's PIN the token was initialised with (test values, on the tools'
    /// command lines: nothing secret).
    public let pin: String
    public let soPIN: String
    /// The token's serial number, as the module reports it.
    public let serial: String
    public let directory: String
    public var confPath: String { directory + "/softhsm2.conf" }
    /// What a subprocess needs to see this token.
    public var environment: [String: String] { ["SOFTHSM2_CONF": confPath] }

    public convenience init(label: String = "keystore-test", pin: String = "123456", soPIN: String = "12345678",
                            modulePath: String = SoftwareToken.defaultModulePath) throws {
        try self.init(label: label, pin: pin, soPIN: soPIN, modulePath: modulePath, directory: Self.newDirectory())
    }

    private static func newDirectory() -> String {
        NSTemporaryDirectory() + "keystore-softhsm-" + UUID().uuidString
    }

    private init(label: String, pin: String, soPIN: String, modulePath: String, directory: String) throws {
        self.modulePath = modulePath
        self.label = label
        self.pin = pin
        self.soPIN = soPIN
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory + "/tokens", withIntermediateDirectories: true)
        do {
            let conf = "directories.tokendir = \(directory)/tokens\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
            try conf.write(toFile: directory + "/softhsm2.conf", atomically: true, encoding: .utf8)
            let environment = ["SOFTHSM2_CONF": directory + "/softhsm2.conf"]
            _ = try Self.run(["softhsm2-util", "--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", soPIN], environment: environment)
            serial = try Self.serial(of: label, in: try Self.run(["softhsm2-util", "--show-slots"], environment: environment))
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit { remove() }

    /// The token that in-process tests share: SoftHSM2 is loaded once per process, with the token directory
    /// `SOFTHSM2_CONF` named at that moment, so every in-process test uses this one (made on first use, with the
    /// variable set, and removed when the process exits). A test keeps to keys it made and deletes them.
    public static func forThisProcess() throws -> SoftwareToken {
        try processToken.get()
    }

    private static let processDirectory = newDirectory()

    private static let processToken = Result<SoftwareToken, any Error> {
        let token = try SoftwareToken(label: "keystore-in-process", pin: "123456", soPIN: "12345678",
                                      modulePath: defaultModulePath, directory: processDirectory)
        token.useInThisProcess()
        atexit { try? FileManager.default.removeItem(atPath: SoftwareToken.processDirectory) }
        return token
    }

    /// Deletes the token and its directory. Safe to call more than once.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Points this process's SoftHSM2 at this token's directory. Call it before the module is first loaded in
    /// the process: SoftHSM2 reads the variable only then.
    public func useInThisProcess() {
        setenv("SOFTHSM2_CONF", confPath, 1)
    }

    /// Runs OpenSC's `pkcs11-tool` on this token (module, token label and environment given), with
    /// `--login --pin` first when `login` is set, and returns its standard output; throws with its standard
    /// error when it fails.
    @discardableResult
    public func pkcs11Tool(_ arguments: [String], login: Bool = true) throws -> String {
        let prefix = ["pkcs11-tool", "--module", modulePath, "--token-label", label] + (login ? ["--login", "--pin", pin] : [])
        return try Self.run(prefix + arguments, environment: environment)
    }

    private static func serial(of label: String, in slots: String) throws -> String {
        // softhsm2-util prints each slot's token info, the serial number before the label.
        var serial: String?
        for line in slots.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            if parts[0] == "Serial number" { serial = parts[1] }
            if parts[0] == "Label", parts[1] == label, let serial, !serial.isEmpty { return serial }
        }
        throw SoftwareTokenError(message: "softhsm2-util did not show the token \(label)")
    }

    static func run(_ arguments: [String], environment: [String: String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes drained before the wait, so that neither fills up and blocks the tool.
        let errorText = ReadBox()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errorText.data = errors.fileHandleForReading.readDataToEndOfFile() }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SoftwareTokenError(message: "\(arguments.joined(separator: " ")) failed: " + String(decoding: errorText.data, as: UTF8.self))
        }
        return String(decoding: outputData, as: UTF8.self)
    }
}

/// The standard error of a tool, read on another thread while its standard output is read on this one.
private final class ReadBox: @unchecked Sendable {
    // @unchecked: written by the reading thread before the group is left, read after `wait`.
    var data = Data()
}

public struct SoftwareTokenError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
