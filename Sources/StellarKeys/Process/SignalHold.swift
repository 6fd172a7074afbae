import Glibc
internal import CPlatform

/// The signals that ask a process to end (SIGHUP, SIGINT, SIGQUIT, SIGTERM) and SIGPIPE, held back while a step
/// runs that must finish once begun. Setting the TPM's lockout authorization is one: its code exists only in this
/// process until it is handed over, so a process that dies between the two leaves an authorization nobody has, and
/// only clearing the TPM (which destroys every key bound to it) undoes that. SIGKILL cannot be held.
package enum SignalHold {
    /// Runs `body` with those signals held, and tells it whether one has arrived meanwhile (`arrived()`), so that it
    /// can undo what it did rather than go on. Afterwards each of them acts as if it had just been sent (by default,
    /// the process ends), except a SIGPIPE raised by a write in `body`: that write's EPIPE reports it. Holds on
    /// several threads may overlap (a signal during either is then seen by both); one at a time per thread. If the
    /// signals cannot be held (the system refused), `body` runs anyway.
    package static func during<Result>(_ body: (_ arrived: () -> Bool) throws -> Result) rethrows -> Result {
        var previous = sigset_t()
        let held = keystore_hold_signals(&previous) == 0
        defer { if held { keystore_release_signals(&previous) } }
        return try body { held && keystore_held_signal_arrived() != 0 }
    }
}
