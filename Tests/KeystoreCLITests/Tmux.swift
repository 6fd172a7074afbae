import Foundation

/// A private tmux server running one command in a pane of its own size, for tests that need a real terminal
/// with job control; killed with everything in it when the value goes.
final class Tmux {
    static let isInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")
    private let server = "keystore-test-\(UUID().uuidString.prefix(8))"
    /// The server's socket file, as tmux names it (in TMUX_TMPDIR or /tmp, under tmux-UID/).
    private var socket: String?

    init(running command: String, columns: Int = 120, rows: Int = 20) throws {
        _ = try run(["new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", command])
        socket = try run(["display-message", "-p", "#{socket_path}"]).trimmingCharacters(in: .newlines)
    }

    /// tmux 3.3a's `kill-server` leaves the socket file behind: it goes too.
    deinit {
        _ = try? run(["kill-server"])
        if let socket, socket.hasSuffix("/" + server) { unlink(socket) }
    }

    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        try KeystoreProcess(program: "/usr/bin/tmux").run(["-L", server] + arguments).stdout
    }

    func type(_ keys: String...) throws { try run(["send-keys"] + keys) }

    /// The pane (with 100 lines of history) once `text` appears in it more than `occurrences` times, or as it is
    /// after 10 s.
    func screen(until text: String, occurrences: Int = 1) throws -> String {
        for _ in 0..<100 {
            let shown = try run(["capture-pane", "-p", "-S", "-100"])
            if shown.components(separatedBy: text).count > occurrences { return shown }
            usleep(100_000)
        }
        return try run(["capture-pane", "-p", "-S", "-100"])
    }
}
