import Glibc
import StellarKeys
import StellarTransactions

/// Whole-file reads and crash-safe replacement of small files.
///
/// A write goes to a temporary file in the same directory, is fsynced, renamed over the target and the directory
/// is fsynced: after a crash at any point the target holds either its old bytes or its new ones, never a mix.
package enum AtomicFile {
    /// Marks temporary files, which listings skip and `VaultStore`'s next write deletes if a crash left them.
    package static let temporaryMarker = ".tmp-"
    private static let temporaryTailBytes = 6

    /// Whether `name` is exactly what `write` names its temporary files: the target's name, `.tmp-`, and 12
    /// lower-case hex digits. Nothing else is ever swept away as one.
    package static func isTemporaryName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let tail = temporaryTailBytes * 2
        let marker = Array(temporaryMarker.utf8)
        guard bytes.count > marker.count + tail else { return false }
        let digits = bytes[(bytes.count - tail)...]
        return Array(bytes[(bytes.count - tail - marker.count)..<(bytes.count - tail)]) == marker
            && digits.allSatisfy { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f")) }
    }

    /// The directory a file at `path` is written in, for `write`'s `directory`: what comes before the last `/`,
    /// `/` for a file at the root, and `.` for a bare name.
    package static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    /// `beforeRename` runs once the new bytes are flushed beside `path`, before they replace it: if it throws, the
    /// temporary file is removed and `path` keeps what it held (a backup whose key could not be delivered).
    package static func write(_ bytes: [UInt8], to path: String, directory: String, beforeRename: () throws -> Void = {}) throws {
        let temporary = path + temporaryMarker + Hex.string(Sodium.randomBytes(count: temporaryTailBytes))
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
        try beforeRename()
        guard rename(temporary, path) == 0 else { throw ioError("replace", path) }
        succeeded = true
        CrashPoint.reached("renamed over the old file")
        try syncDirectory(directory)
        CrashPoint.reached("directory flushed")
    }

    /// The file's bytes, or nil when it does not exist. Refuses files over `limit` bytes without reading them,
    /// and anything that is not a regular file: a FIFO would block the read forever, a device could be endless,
    /// and a symbolic link could point anywhere (`FileError` says which).
    package static func read(_ path: String, limit: Int) throws -> [UInt8]? {
        try readWithStatus(path, limit: limit)?.bytes
    }

    /// The file object a path named when it was read: device and inode, so that a later step (overwriting a
    /// plaintext key) can make sure it acts on that same file and not on whatever the path names by then.
    package struct FileIdentity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// What changes whenever a file is replaced or written: its device and inode, size, and modification and
    /// change times to the nanosecond. Writes here are renames of new files, so a replaced file has a new inode;
    /// the times keep a reused inode number from passing for the old file.
    package struct Stamp: Equatable, Sendable {
        let identity: FileIdentity
        let size: Int64
        let modified: [Int]
        let changed: [Int]

        init(_ info: stat) {
            identity = FileIdentity(info)
            size = Int64(info.st_size)
            modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
            changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
        }

        /// The stamp of the regular file at `path` now, without opening it or following a symlink (as the read
        /// does not); nil if there is none.
        init?(of path: String) {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            self.init(info)
        }
    }

    /// `read`, and the status of the file that was read (its identity, owner, mode, time).
    package static func readWithStatus(_ path: String, limit: Int) throws -> (bytes: [UInt8], status: stat)? {
        guard let (fd, info) = try openRegular(path, limit: limit) else { return nil }
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
        return (bytes, info)
    }

    /// A file that holds a secret (a plaintext key), read straight into guarded memory, and its status; nil when
    /// it does not exist. `readWithStatus` goes through a chunk and a growing array that are freed unzeroed, so a
    /// secret read that way stays in ordinary memory; here the size comes from `fstat` (refused over `limit`, as
    /// by `read`) and the bytes from `read(2)` into the guarded buffer, with no copy on the way. A file that grew
    /// or shrank since `fstat` is refused rather than cut.
    package static func readSecret(_ path: String, limit: Int) throws -> (bytes: SecureBytes, status: stat)? {
        guard let (fd, info) = try openRegular(path, limit: limit) else { return nil }
        defer { close(fd) }
        let size = Int(info.st_size)
        var total = 0
        // One byte more than the size: a file that grew fills it, and the read ends at end-of-file otherwise.
        let bytes = try SecureBytes(count: size + 1) { buffer in
            while total < buffer.count {
                let count = Glibc.read(fd, buffer.baseAddress! + total, buffer.count - total)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ioError("read", path)
                }
                if count == 0 { break }
                total += count
            }
        }
        guard total == size else { throw FileError.changedWhileRead(path: path) }
        return (bytes.slice(0..<size), info)
    }

    /// Opens `path` for reading, without following a symbolic link or blocking on a FIFO, and checks that it is a
    /// regular file of at most `limit` bytes; nil when it does not exist. The caller closes the descriptor.
    private static func openRegular(_ path: String, limit: Int) throws -> (fd: Int32, status: stat)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw FileError.notRegular(path: path, kind: "a symbolic link") }
            throw ioError("read", path)
        }
        var info = stat()
        do {
            guard fstat(fd, &info) == 0 else { throw ioError("read", path) }
            guard info.st_mode & S_IFMT == S_IFREG else { throw FileError.notRegular(path: path, kind: kindName(info.st_mode)) }
            guard Int(info.st_size) <= limit else { throw FileError.tooLarge(path: path, size: Int(info.st_size)) }
        } catch {
            close(fd)
            throw error
        }
        return (fd, info)
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
        let failure = bytes.withUnsafeBytes { writeAll(fd, $0) }
        guard failure == 0 else { throw ioError("write", path, code: failure) }
    }

    /// Writes all of `buffer` to `fd`, again after a short or interrupted write: the one write-all loop for files
    /// and standard output (the command line's `Console` uses it too). Returns 0, or the failed write's errno.
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// What kind of file a mode says, for a message.
    package static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a file"
        }
    }

    /// Opens (creating if need be) the lock file at `path` without following a symbolic link or blocking on a
    /// FIFO planted there; returns the descriptor, or -1 with errno set.
    package static func openLock(_ path: String, writing: Bool) throws -> Int32 {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if fd < 0 && !writing && (errno == EACCES || errno == EROFS) { fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        if fd < 0 {
            if errno == ELOOP { throw FileError.notRegular(path: path, kind: "a symbolic link") }
            return -1
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw FileError.notRegular(path: path, kind: kindName(info.st_mode))
        }
        return fd
    }

    package static func ioError(_ operation: String, _ path: String, code: Int32 = errno) -> VaultError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM:
            return .io(operation: operation, path: path, reason: "\(reason); check its permissions")
        case ENOSPC, EDQUOT, EFBIG:
            return .io(operation: operation, path: path, reason: "\(reason); free some space and try again")
        default:
            return .io(operation: operation, path: path, reason: reason)
        }
    }
}

/// A file keystore reads is not one it should: the reader turns this into its own error (a damaged vault, a
/// forged session, a counter that fails closed, a lock it cannot use).
package enum FileError: Error, Equatable {
    case notRegular(path: String, kind: String)
    case tooLarge(path: String, size: Int)
    /// Its size changed between `fstat` and the read: it is being written, or was swapped.
    case changedWhileRead(path: String)

    var reason: String {
        switch self {
        case .notRegular(_, let kind): "it is \(kind), not a regular file"
        case .tooLarge(_, let size): "it is \(size) bytes, far too large"
        case .changedWhileRead: "it changed while it was read"
        }
    }
}
