import Glibc

/// SIGTERM, SIGINT and SIGHUP made into a byte on the agent's wake-up pipe, so that it stops between requests
/// and cleans up, rather than dying with keys in memory and its socket left behind.
enum Signals {
    nonisolated(unsafe) private static var wakeFD: Int32 = -1
    nonisolated(unsafe) private(set) static var received = false
    nonisolated(unsafe) private(set) static var installed: Bool = false
    nonisolated(unsafe) private static var caught: [Int32] = []

    static func stop(on signals: [Int32], writingTo fd: Int32) {
        wakeFD = fd
        received = false
        installed = true
        caught = signals
        for number in signals {
            signal(number) { _ in
                Signals.received = true
                var byte: UInt8 = 0
                _ = write(Signals.wakeFD, &byte, 1)
            }
        }
    }

    static func restore() {
        for number in caught { signal(number, SIG_DFL) }
        installed = false
    }
}
