import StellarKeystore

/// `--batch`: newline-delimited JSON requests on standard input, signed with one unlocked key, one result line each
/// on standard output (the library's `SigningBatch`, which answers them on every core).
///
/// For `sign` and `sign-message`, a request is `{"id": …, "message": "text"}`, or `"base64"` or `"hex"` instead of
/// `"message"`; for `sign-tx`, `{"id": …, "envelope": "…"}`. `id` is optional (a string, a number or null) and is
/// echoed back. Each request gets one result line, in input order: `{"id": …, "signature": "…"}` (`sign-tx`:
/// `{"id": …, "envelope": "…", "hash": "…"}`) or `{"error": "…", "id": …}`.
enum BatchSigner {
    /// Answers every request of standard input, its errors with the command line's hints; throws at the end if any
    /// request failed or an answer was lost, so that the exit code says so.
    static func run(_ batch: SigningBatch) throws {
        var batch = batch
        batch.describe = { error in (error as? KeystoreError).map(Hints.withHint) ?? "\(error)" }
        let (total, failed) = batch.answer(reading: STDIN_FILENO) { Console.write($0, to: STDOUT_FILENO) }
        if let lost = Console.outputError { throw lost }
        if failed > 0 { throw CLIError.someFailed(failed, of: total, "requests failed; see their error lines.") }
    }
}
