#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StellarKeys

/// The process at the other end of a connection: its pid from `SO_PEERCRED`, and `/proc/PID/exe` read when it
/// connected (a pid alone could be reused by the time a person reads the log).
package struct AgentCaller: CustomStringConvertible {
    let pid: Int32
    let executable: String

    package init(pid: Int32) {
        self.pid = pid
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        executable = count > 0
            ? TerminalText.escaped(String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self), limit: nil)
            : "(executable unknown)"
    }

    package var description: String { "pid \(pid) \(executable)" }
}
