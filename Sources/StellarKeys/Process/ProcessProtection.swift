internal import CPlatform

/// Process-wide protection for a program that holds secrets: no other process reads its memory, and neither does
/// a crash. Left to the program (the `keystore` tool calls it first thing) because an app embedding the library
/// may have its own reasons to keep core dumps or a crash reporter.
public enum ProcessProtection {
    /// Turns core dumps off (RLIMIT_CORE 0) and, on Linux, marks the process non-dumpable, which also stops other
    /// processes of the same user from attaching a debugger or reading its memory through /proc. Then gives SIGSEGV,
    /// SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT and SIGQUIT their default action back, so that the process ends at
    /// once on any of them, whatever `SWIFT_BACKTRACE` says: the Swift runtime's crash handler prints the memory
    /// at every register's address, and can wait for a key that opens a debugger on the process, its keys
    /// still in memory. A handler installed after this call is the program's own choice. False if any of these
    /// calls failed.
    @discardableResult
    public static func enable() -> Bool {
        let dumps = keystore_disable_core_dumps() == 0
        let signals = keystore_reset_fatal_signals() == 0
        return dumps && signals
    }
}
