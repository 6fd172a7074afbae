internal import CPlatform

/// Process-wide protection for a program that holds secrets. Left to the program (the `keystore` tool calls it
/// first thing) because an app embedding the library may have its own reasons to keep core dumps.
public enum CoreDumps {
    /// Turns core dumps off (RLIMIT_CORE 0) and, on Linux, marks the process non-dumpable, which also stops
    /// other processes of the same user from attaching a debugger or reading its memory through /proc.
    @discardableResult
    public static func disable() -> Bool {
        keystore_disable_core_dumps() == 0
    }
}
