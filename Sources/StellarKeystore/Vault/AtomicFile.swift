#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads and crash-safe replacement of small files.
///
/// A write goes to a temporary file in the same directory, is fsynced, renamed over the target and the directory
/// is fsynced: after a crash at any point the target holds either its old bytes or its new ones, never a mix.
package enum AtomicFile {
    /// Marks temporary files, which listings skip and `VaultStore`'s next write deletes if a crash left them.
    package static let temporaryMarker = ".tmp-"

    package static func write(_ bytes: [UInt8], to path: String, directory: String) throws {
        let temporary = path + temporaryMarker + Hex.string(Sodium.randomBytes(count: 6))
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("create a file in", directory) }
        CrashPoint.reached("temporary file created")
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            // The umask can only remove bits, but say 0600 explicitly in case the file system ignored the mode.
            guard fchmod(fd, 0o600) == 0 else { throw ioError("set permissions on", temporary) }
            try writeAll(fd, bytes, path: temporary)
            CrashPoint.reached("temporary file written")
            guard fsync(fd) == 0 else { throw ioError("flush", temporary) }
            CrashPoint.reached("temporary file flushed")
        }
        guard rename(temporary, path) == 0 else { throw ioError("replace", path) }
        succeeded = true
        CrashPoint.reached("renamed over the old file")
        try syncDirectory(directory)
        CrashPoint.reached("directory flushed")
    }

    /// The file's bytes, or nil when it does not exist. Refuses files over `limit` bytes without reading them.
    package static func read(_ path: String, limit: Int) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError("read", path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// The names in `directory`, or nil when it cannot be opened (errno says why).
    package static func fileNames(in directory: String) -> [String]? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) })
        }
        return names
    }

    static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 || errno == EINVAL else { throw ioError("flush", directory) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw ioError("write", path)
                }
                offset += written
            }
        }
    }

    package static func ioError(_ operation: String, _ path: String, code: Int32 = errno) -> VaultError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM:
            return .io(operation: operation, path: path, reason: "\(reason); check its permissions or choose another directory with --home")
        case ENOSPC, EDQUOT, EFBIG:
            return .io(operation: operation, path: path, reason: "\(reason); free some space and try again")
        default:
            return .io(operation: operation, path: path, reason: reason)
        }
    }
}
