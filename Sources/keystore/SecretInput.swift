#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StellarKeystore

/// Reads secrets (PINs, seeds) one line at a time, straight into guarded memory.
///
/// Lines are read one byte per read(2), never more: whatever follows the secret on the same descriptor (a seed
/// after a PIN, a payload to sign) is left for the command to read.
enum SecretInput {
    /// Longer lines are refused rather than silently cut: no PIN, seed or recovery phrase is this long.
    static let lineLimit = 1024

    /// The first line of `fd`, without its line ending.
    static func line(from fd: Int32, describing source: String) throws -> SecureBytes {
        var length = 0
        var overflow = false
        let buffer = try SecureBytes(count: lineLimit + 1) { buffer in
            while true {
                var byte: UInt8 = 0
                let count = read(fd, &byte, 1)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw CLIError.unreadableSecret(source: source, reason: String(cString: strerror(errno)))
                }
                if count == 0 || byte == UInt8(ascii: "\n") { break }
                if length == lineLimit { overflow = true; break }
                buffer[length] = byte
                length += 1
            }
        }
        guard !overflow else { throw CLIError.secretLineTooLong(source: source) }
        let trimmed = buffer.withUnsafeBytes { $0[..<length].last == UInt8(ascii: "\r") ? length - 1 : length }
        return buffer.slice(0..<trimmed)
    }

    /// `line` without the spaces and tabs around it, as a pasted seed may carry.
    static func trimmingSpaces(_ line: SecureBytes) -> SecureBytes {
        line.withUnsafeBytes { bytes in
            let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
            let start = bytes.firstIndex { !isSpace($0) } ?? bytes.count
            let end = (bytes.lastIndex { !isSpace($0) } ?? start - 1) + 1
            return line.slice(start..<max(start, end))
        }
    }

    /// The first line of the file at `path`. A file that others can read is used, with a warning.
    static func line(fromFile path: String) throws -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIError.unreadableSecret(source: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 {
            Console.warn("\(path) is readable by other users; run: chmod 600 '\(path)'")
        }
        return try line(from: fd, describing: path)
    }

    /// Asks on the controlling terminal with echo off, so that the answer shows neither on screen nor in a
    /// pipe; standard input and output stay free for data.
    static func prompt(_ question: String, instead alternatives: String) throws -> SecureBytes {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { throw CLIError.noTerminal(alternatives: alternatives) }
        defer { close(tty) }
        // Echo goes off before the question shows, so that nothing typed in answer to it can be echoed.
        let echoWasOn = Terminal.disableEcho(tty)
        Console.write(Array(question.utf8), to: tty)
        defer {
            if echoWasOn { Terminal.restore() }
            Console.write(Array("\n".utf8), to: tty)  // the user's Enter was not echoed
        }
        return try line(from: tty, describing: "the terminal")
    }

    /// Whether a person can be asked: there is a controlling terminal.
    static var hasTerminal: Bool {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { return false }
        close(tty)
        return true
    }
}

/// Turns terminal echo off for a prompt and back on afterwards, also when the prompt is interrupted by Ctrl-C
/// or a kill: a shell left without echo is the classic bug of password prompts.
enum Terminal {
    // Signal handlers cannot capture context, so the saved state lives in globals; they are written before the
    // handlers are installed and only read afterwards.
    nonisolated(unsafe) private static var savedFD: Int32 = -1
    nonisolated(unsafe) private static var saved = termios()
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// Returns whether echo was on (and is now off).
    static func disableEcho(_ fd: Int32) -> Bool {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0, settings.c_lflag & tcflag_t(ECHO) != 0 else { return false }
        saved = settings
        savedFD = fd
        for signal in signals {
            Glibc.signal(signal) { received in
                tcsetattr(Terminal.savedFD, TCSAFLUSH, &Terminal.saved)
                Glibc.signal(received, SIG_DFL)
                raise(received)
            }
        }
        settings.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        tcsetattr(fd, TCSAFLUSH, &settings)
        return true
    }

    static func restore() {
        tcsetattr(savedFD, TCSAFLUSH, &saved)
        for signal in signals { Glibc.signal(signal, SIG_DFL) }
        savedFD = -1
    }
}
