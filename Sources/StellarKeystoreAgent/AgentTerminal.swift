import Glibc
import StellarKeystore

/// The agent's questions on the controlling terminal (`KeystoreAgent.Options.confirm`): each request shown as the
/// agent words it (network first, then who asks, then what), and answered there, one at a time. The agent
/// decides what approves and when a question is withdrawn; this only shows, reads and says so.
package final class AgentTerminal: @unchecked Sendable {
    private let fd: Int32

    /// The controlling terminal, opened to ask on; nil when the process has none.
    package init?() {
        fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
    }

    /// A line longer than this is no answer, and is not kept.
    private static let longestAnswer = 16

    package func confirm(_ request: AgentConfirmation) -> Bool {
        let text = "\n" + request.text.map { $0 + "\n" }.joined() + request.question
        guard write(text) else { return false }
        // Only what is typed after the question counts: a y typed ahead (or meant for another program) is thrown
        // away with the rest of the input not yet read.
        tcflush(fd, TCIFLUSH)
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            guard request.cancellation.waitForInput(on: fd) else {
                _ = write("\nWithdrawn (\(request.cancellation.reason ?? "cancelled")); nothing was signed.\n")
                return false
            }
            // In canonical mode a read gives at most one line; at the end of input (Ctrl-D) it gives 0.
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            let part = buffer[..<count]
            if line.count <= Self.longestAnswer { line += part.prefix(Self.longestAnswer + 1 - line.count) }
            if part.contains(0x0A) { break }
        }
        guard let end = line.firstIndex(of: 0x0A), end <= Self.longestAnswer else { return false }
        return request.isApproval(String(decoding: line[..<end], as: UTF8.self))
    }

    private func write(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { AtomicFile.writeAll(fd, $0) } == 0
    }
}
