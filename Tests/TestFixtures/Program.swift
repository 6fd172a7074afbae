import Foundation

/// A file a test then runs (a script, a copy of a binary).
///
/// Never opened for writing in this process: a child that another test's thread forks while the file is open keeps
/// the descriptor until it execs (close-on-exec or not), and running the file meanwhile fails with ETXTBSY ("Text
/// file busy"), as FileManager's copies did. `cp` writes it, in a process of its own, which has exited when this
/// returns.
public enum Program {
    /// `bytes` as an executable file at `path`.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o755) throws {
        // The bytes go through a file nobody runs, which a forked child may hold open harmlessly.
        let staged = path + ".staged"
        try Data(bytes).write(to: URL(fileURLWithPath: staged))
        defer { unlink(staged) }
        try copy(staged, to: path, mode: mode)
    }

    /// A copy of the file at `source` (its symbolic links resolved) at `path`.
    public static func copy(_ source: String, to path: String, mode: mode_t = 0o755) throws {
        let cp = Process()
        cp.executableURL = URL(fileURLWithPath: "/bin/cp")
        cp.arguments = ["--", URL(fileURLWithPath: source).resolvingSymlinksInPath().path, path]
        try cp.run()
        cp.waitUntilExit()
        guard cp.terminationStatus == 0, chmod(path, mode) == 0 else { throw POSIXError(.EIO) }
    }
}
