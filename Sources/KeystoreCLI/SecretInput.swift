import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

/// Reads secrets (PINs, seeds) one line at a time, straight into guarded memory.
///
/// Lines are read one byte per read(2), never more: whatever follows the secret on the same descriptor (a seed
/// after a PIN, a payload to sign) is left for the command to read.
enum SecretInput {
    /// Longer lines are refused rather than silently cut: no PIN, seed or recovery phrase is this long.
    static let lineLimit = 1024

    /// The first line of `fd`, without its line ending. With `watch`, the descriptor is polled instead of
    /// blocked on, and `watch` runs at least every 100 ms and after every signal, before each read: a signal
    /// that lands just before a blocking read would otherwise wait for the next keystroke to be acted on.
    static func line(from fd: Int32, describing source: String, watch: (() -> Void)? = nil) throws -> SecureBytes {
        var length = 0
        var overflow = false
        let buffer = try SecureBytes(count: lineLimit + 1) { buffer in
            while true {
                if let watch {
                    watch()
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    if poll(&ready, 1, 100) <= 0 { continue }
                }
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

    /// A line from the terminal with echo off when standard input is one, else from standard input (a seed, a
    /// recovery phrase, a passphrase).
    static func line(prompting question: String, asking what: String) throws -> SecureBytes {
        isatty(STDIN_FILENO) != 0
            ? try prompt(question, asking: what, instead: "standard input")
            : try line(from: STDIN_FILENO, describing: "standard input")
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

    /// The whole file at `path`, read as secret bytes (up to `limit`).
    static func file(_ path: String, limit: Int) throws -> SecureBytes {
        guard let read = try AtomicFile.readSecret(path, limit: limit) else { throw CLIError.unreadableSecret(source: path, reason: "no such file") }
        return read.bytes
    }

    /// Asks on the controlling terminal with echo off, so that the answer shows neither on screen nor in a
    /// pipe; standard input and output stay free for data. `what` names the secret for the error when there is
    /// no terminal ("the PIN").
    static func prompt(_ question: String, asking what: String, instead alternatives: String) throws -> SecureBytes {
        let tty = openTerminal(O_RDWR)
        guard tty >= 0 else { throw CLIError.noTerminal(what: what, alternatives: alternatives) }
        defer { close(tty) }
        // Echo goes off before the question shows, so that nothing typed in answer to it can be echoed.
        let echoWasOn = Terminal.disableEcho(tty)
        // An answer typed before the question (and the summary above it) showed is not an answer to it. Turning
        // echo off flushed it already (TCSAFLUSH); a terminal whose echo was off is flushed here.
        tcflush(tty, TCIFLUSH)
        Console.write(Array(question.utf8), to: tty)
        defer {
            if echoWasOn { Terminal.restore() }
            Console.write(Array("\n".utf8), to: tty)  // the user's Enter was not echoed
        }
        return try line(from: tty, describing: "the terminal") {
            // Ctrl-Z (or a background read) stops us only here, outside the signal handler, so that the
            // terminal is given back with echo on and taken again with echo off when we are continued.
            if echoWasOn, Terminal.stopIfAsked() { Console.write(Array(question.utf8), to: tty) }
        }
    }

    /// A line for the person at the terminal (a PIN that will not do, before it is asked again); on stderr
    /// when there is no terminal.
    static func tell(_ message: String) {
        let tty = openTerminal(O_WRONLY)
        guard tty >= 0 else { return Console.error(message) }
        defer { close(tty) }
        Console.write(Array("keystore: \(message)\n".utf8), to: tty)
    }

    /// The run's controlling terminal (`/dev/tty` for the process), opened with `mode`; -1 when there is none.
    static func openTerminal(_ mode: Int32) -> Int32 {
        guard let path = Console.current.terminal else { return -1 }
        return open(path, mode | O_NOCTTY | O_CLOEXEC)
    }

    /// Whether a person can be asked: there is a controlling terminal.
    static var hasTerminal: Bool {
        let tty = openTerminal(O_RDWR)
        guard tty >= 0 else { return false }
        close(tty)
        return true
    }
}

/// Turns terminal echo off for a prompt and back on afterwards, also when the prompt is interrupted by Ctrl-C
/// or a kill: a shell left without echo is the classic bug of password prompts. Ctrl-Z is handled as
/// readpassphrase(3) does: echo back on, stop, and on `fg` echo off again and the question asked again.
enum Terminal {
    // Signal handlers cannot capture context, so the saved state lives in globals; they are written before the
    // handlers are installed and only read afterwards (`pendingStop` is the one value a handler writes).
    nonisolated(unsafe) private static var savedFD: Int32 = -1
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var silent = termios()
    nonisolated(unsafe) private static var pendingStop: Int32 = 0
    private static let endingSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    private static let stoppingSignals = [SIGTSTP, SIGTTIN, SIGTTOU]

    /// Returns whether echo was on (and is now off).
    static func disableEcho(_ fd: Int32) -> Bool {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0, settings.c_lflag & tcflag_t(ECHO) != 0 else { return false }
        saved = settings
        settings.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        silent = settings
        savedFD = fd
        for signal in endingSignals {
            Glibc.signal(signal) { received in
                tcsetattr(Terminal.savedFD, TCSAFLUSH, &Terminal.saved)
                Glibc.signal(received, SIG_DFL)
                raise(received)
            }
        }
        for signal in stoppingSignals { catchStop(signal) }
        tcsetattr(fd, TCSAFLUSH, &silent)
        return true
    }

    /// Records a stop signal and interrupts the read (no SA_RESTART), so that `stopIfAsked` acts on it.
    private static func catchStop(_ signal: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { Terminal.pendingStop = $0 }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(signal, &action, nil)
    }

    /// If a stop signal came in: gives the terminal back as it was, stops, and once continued turns echo off
    /// again. Returns whether it stopped, so that the caller asks its question again.
    static func stopIfAsked() -> Bool {
        let signal = pendingStop
        guard signal != 0 else { return false }
        pendingStop = 0
        tcsetattr(savedFD, TCSAFLUSH, &saved)
        Glibc.signal(signal, SIG_DFL)
        raise(signal)  // stops here until SIGCONT (ignored by the kernel in an orphaned process group)
        catchStop(signal)
        tcsetattr(savedFD, TCSAFLUSH, &silent)
        return true
    }

    static func restore() {
        tcsetattr(savedFD, TCSAFLUSH, &saved)
        for signal in endingSignals + stoppingSignals { Glibc.signal(signal, SIG_DFL) }
        savedFD = -1
    }
}
