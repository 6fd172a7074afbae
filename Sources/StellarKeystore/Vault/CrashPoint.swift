import Glibc
import StellarKeys
import StellarTransactions

/// The steps of the commands that write, where the tests stop the process dead to check that a crash between
/// any two of them loses nothing.
///
/// Compiled in debug builds only, and even there inert unless `KEYSTORE_TEST_CRASH_AT=N` is set: then the Nth
/// step reached names itself on standard error and the process sends itself SIGKILL, as if the power had gone
/// between that step and the next (for this process: the kernel still writes out what it was given).
enum CrashPoint {
    #if DEBUG
    nonisolated(unsafe) private static var stepsReached = 0
    #endif

    static func reached(_ step: StaticString) {
        #if DEBUG
        guard let setting = getenv("KEYSTORE_TEST_CRASH_AT"), let stop = Int(String(cString: setting)) else { return }
        stepsReached += 1
        guard stepsReached == stop else { return }
        let line = Array("keystore: crash point \(stop): \(step)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        kill(getpid(), SIGKILL)
        #endif
    }
}
