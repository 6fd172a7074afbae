import Foundation
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// Copies of the files a test runs as another user (uid 65534, `FakeAgent.asNobody`), in a directory of that
/// user's own (mode 0700), removed with the value.
///
/// The checkout may sit where that user cannot read it: a clone under a 0700 home or a `mktemp -d` directory. There
/// `setpriv … python3 Tests/Interop/fake-agent.py` could not even open the script.
final class FilesForAnotherUser {
    static let uid: uid_t = 65534
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-for-65534-\(UUID().uuidString)").path

    init(_ files: [String]) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        for file in files { try Self.copy(file, to: path(of: file)) }
        guard chown(directory, Self.uid, Self.uid) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
    }

    private static func copy(_ file: String, to copy: String) throws {
        var info = stat()
        guard stat(file, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        try Program.write(Array(try Data(contentsOf: URL(fileURLWithPath: file))), to: copy, mode: info.st_mode & 0o755)
        guard chown(copy, uid, uid) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM) }
    }

    /// Where the copy of `file` is.
    func path(of file: String) -> String {
        directory + "/" + URL(fileURLWithPath: file).lastPathComponent
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
