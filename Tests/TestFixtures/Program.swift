import Foundation

/// A file a test then runs (a script, a copy of a binary).
public enum Program {
    /// Written through a close-on-exec descriptor: one open for writing that a process started meanwhile by another
    /// test inherits makes running the file fail with ETXTBSY ("Text file busy"), as FileManager's writes did.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o755) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        try FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(contentsOf: bytes)
    }

    /// A copy of the executable at `source` (its symbolic links resolved), written as `write` writes.
    public static func copy(_ source: String, to path: String) throws {
        let file = URL(fileURLWithPath: source).resolvingSymlinksInPath().path
        try write(Array(try Data(contentsOf: URL(fileURLWithPath: file))), to: path)
    }
}
