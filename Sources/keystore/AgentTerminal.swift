#if canImport(Glibc)
import Glibc
#endif
import StellarKeystore

/// `--confirm`'s terminal: each request shown with its caller, and answered y or N, one at a time.
final class AgentTerminal: @unchecked Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    static func open() throws -> AgentTerminal {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw AgentCommandError.noTerminal }
        return AgentTerminal(fd: fd)
    }

    func confirm(_ request: AgentConfirmation) -> Bool {
        let text = "\nRequest from \(request.caller):\n" + request.lines.map { "  " + $0 + "\n" }.joined() + "Sign? [y/N] "
        guard Console.write(Array(text.utf8), to: fd) else { return false }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 && byte != 0x0A { line.append(byte) }
        return line == [UInt8(ascii: "y")] || line == Array("yes".utf8)
    }
}
