import FoundationEssentials
import Glibc
import StellarKeystore
import Synchronization
import StellarKeys
import StellarTransactions
import StellarText

/// Standard input, output and error, written with write(2) so that nothing sits in a buffer at exit.
///
/// A write to standard output that fails (a full disk, a file-size limit, a closed pipe with SIGPIPE ignored) is
/// remembered, and `main` turns it into exit 11: output that was lost must never look like success, as
/// `export --force > backup && remove` would otherwise lose the key.
///
/// Which descriptors those are, which terminal prompts go to and which environment is read belong to the run, not
/// the process: `current` is a task-local, so that the tests run many commands at once in one process, each on its
/// own files. A task-local rather than a console passed down: every command, option group and prompt reads it,
/// and threading a parameter through argument-parser's commands would change hundreds of call sites for no gain
/// in what they say. The process's own run is the default, so `keystore` itself sets nothing.
enum Console {
    /// Where one run of a command reads and writes: its standard descriptors, its controlling terminal, its
    /// environment, and whether a write to its standard output failed.
    struct Run: Sendable {
        var input: Int32 = 0
        var output: Int32 = 1
        var error: Int32 = 2
        /// The controlling terminal's path for prompts; nil when there is none, and a prompt fails at once.
        var terminal: String? = "/dev/tty"
        /// The environment variables, or nil for the process's own (read one by one with getenv).
        var environment: [String: String]? = nil
        /// The errno of the first failed write to standard output; 0 while every write succeeded.
        let outputFailure = OutputFailure()
    }

    /// The first failed write's errno, shared by the copies of one `Run`.
    final class OutputFailure: Sendable {
        let code = Atomic<Int32>(0)
    }

    /// The run under way: the process's, unless a caller (a test) set another with `$current.withValue`.
    @TaskLocal static var current = Run()

    /// Why standard output failed, once one of its writes did.
    static var outputError: OutputError? {
        let code = current.outputFailure.code.load(ordering: .relaxed)
        return code == 0 ? nil : OutputError(code: code)
    }

    struct OutputError: CommandLineError {
        let code: Int32
        var reason: String { String(cString: strerror(code)) }
        var message: String { "Could not write to standard output (\(reason)); what was to be printed there was not." }
        var exitStatus: ExitStatus { .outputFailed }
    }

    static func print(_ line: String) {
        write(Array((line + "\n").utf8), to: STDOUT_FILENO)
    }

    /// One line on stderr, prefixed so that a person knows which program spoke. Control characters are escaped
    /// here too, whatever the message: the library escapes what it quotes, and this is the last line of defence.
    static func error(_ message: String) {
        write(Array("keystore: \(TerminalText.escaped(message, limit: nil))\n".utf8), to: STDERR_FILENO)
    }

    /// Something done, on stderr so that stdout stays for data (`signed in as …`).
    static func note(_ message: String) { error(message) }

    static func warn(_ message: String) { error("warning: \(message)") }

    /// Writes all of `bytes`; false when a write failed (for standard output, also remembered).
    @discardableResult
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        let failure = AtomicFile.writeAll(fd, bytes)
        if failure != 0 && fd == STDOUT_FILENO { _ = current.outputFailure.code.compareExchange(expected: 0, desired: failure, ordering: .relaxed) }
        return failure == 0
    }

    @discardableResult
    static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { write($0, to: fd) }
    }

    /// A secret (a seed, a phrase, a code) on standard output between `opening` and `closing`, written piece by
    /// piece so that it never becomes a Swift `String`, which could not be zeroed; false when a write failed.
    @discardableResult
    static func printSecret(_ secret: SecureBytes, opening: String = "", closing: String = "\n") -> Bool {
        write(Array(opening.utf8), to: STDOUT_FILENO) && secret.withUnsafeBytes { write($0, to: STDOUT_FILENO) }
            && write(Array(closing.utf8), to: STDOUT_FILENO)
    }

    /// Standard output flushed to its disk when it is a file (`fsync`: a write can succeed into the page cache and
    /// fail later), for output that must not be reported written before it is (a lockout code). A pipe or a
    /// terminal has nothing to flush. False, and remembered, when the flush failed.
    static func flushStandardOutput() -> Bool {
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return true }
        if fsync(STDOUT_FILENO) == 0 { return true }
        _ = current.outputFailure.code.compareExchange(expected: 0, desired: errno, ordering: .relaxed)
        return false
    }

    /// Prints `value` as one line of JSON with sorted keys.
    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(UInt8(ascii: "\n"))
        _ = data.withUnsafeBytes { write($0, to: STDOUT_FILENO) }
    }

    /// A command's answer on standard output: with `--json` the object, as one line of JSON, else the plain line.
    /// Each is built only when it is the one printed.
    static func printAnswer<Object: Encodable>(json: Bool, _ object: @autoclosure () throws -> Object,
                                               else line: @autoclosure () throws -> String) throws {
        if json { try printJSON(object()) } else { print(try line()) }
    }

    /// All of standard input as text, without trailing white space. Not for secrets.
    static func readStandardInputText() throws -> String {
        var bytes = try readAll(STDIN_FILENO, source: "standard input", limit: 1 << 20)
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An input file (a payload, an envelope, an account's JSON) opened for reading; one that does not exist or
    /// cannot be read is bad input (exit 2), said with the system's reason. A regular file is read, and a pipe or
    /// FIFO (`--account-file <(curl …)`) without waiting for a writer that may never come: the open does not wait
    /// (`O_NONBLOCK`), and a read with no writer ends at once, which `readAll` refuses as nothing written. A
    /// directory, a device (which could be endless) or a socket is refused.
    static func openInput(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw CLIError.unreadableInput(source: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG || info.st_mode & S_IFMT == S_IFIFO else {
            close(fd)
            throw CLIError.notRegularInput(source: path, kind: AtomicFile.kindName(info.st_mode))
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// A non-secret input given as an argument, else in `file`, else on standard input (with `prompt` when that is
    /// a terminal), up to `limit` bytes (past it, refused with `advice`).
    static func readInput(_ argument: String?, file: String?, prompt: String, limit: Int, advice: String? = nil) throws -> [UInt8] {
        if let argument { return Array(argument.utf8) }
        if let file {
            let fd = try openInput(file)
            defer { close(fd) }
            return try readAll(fd, source: file, limit: limit, advice: advice)
        }
        if isatty(STDIN_FILENO) != 0 { SecretInput.tell(prompt + " (end with Ctrl-D):") }
        return try readAll(STDIN_FILENO, source: "standard input", limit: limit, advice: advice)
    }

    /// Everything `fd` gives until its end, byte for byte; refused once it passes `limit` bytes, without reading
    /// further, so that a huge input costs no more memory than the limit. Not for secrets.
    static func readAll(_ fd: Int32, source: String, limit: Int, advice: String? = nil) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw CLIError.unreadableInput(source: source, reason: String(cString: strerror(errno))) }
            if count == 0 {
                var info = stat()
                if bytes.isEmpty, fd != STDIN_FILENO, fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO {
                    throw CLIError.nothingWritten(source: source)
                }
                return bytes
            }
            guard bytes.count + count <= limit else { throw CLIError.inputTooLarge(source: source, limit: limit, advice: advice) }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

// The standard descriptors, as this module's code names them, are the current run's: in the process they are 0, 1
// and 2, and a test that runs a command in-process gives it files of its own. Declared here, they shadow Glibc's
// constants for every file of this module, so that a call site reads as the C it is and stays the same.
var STDIN_FILENO: Int32 { Console.current.input }
var STDOUT_FILENO: Int32 { Console.current.output }
var STDERR_FILENO: Int32 { Console.current.error }
