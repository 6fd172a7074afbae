import FoundationEssentials
import Glibc
import Dispatch
import StellarKeystore
import StellarKeys
import StellarTransactions

/// Signs a stream of newline-delimited JSON requests with one unlocked key, on every core.
///
/// For `sign` and `sign-message`, a request is `{"id": …, "message": "text"}`, or `"base64"` or `"hex"` instead of
/// `"message"`; for `sign-tx`, `{"id": …, "envelope": "…"}`. `id` is optional (a string, a number or null) and is
/// echoed back. Each request gets one result line, in input order: `{"id": …, "signature": "…"}` (`sign-tx`:
/// `{"id": …, "envelope": "…", "hash": "…"}`) or `{"error": "…", "id": …}`. Blank lines are skipped.
///
/// Input is taken as it arrives, one read at a time (at most 256 KiB). The complete lines of a read form a
/// round: cut into one contiguous slice per core and signed in parallel while the next read is taken, then
/// written in order. Every result is written as soon as its round is done, and a round never waits for more
/// input, so a pipeline that sends a request and waits for its answer always gets it; memory stays bounded by
/// two rounds of requests and results whatever the input size.
struct BatchSigner {
    /// Appends the result line for one request line; returns whether it was signed.
    let respond: @Sendable (UnsafeRawBufferPointer, inout [UInt8]) -> Bool

    /// The requests answered by an approved batch, its errors with the command line's hints.
    init(_ batch: SigningBatch) {
        var batch = batch
        batch.describe = { error in (error as? KeystoreError).map(Hints.withHint) ?? "\(error)" }
        respond = { [batch] line, output in batch.answer(line, into: &output) }
    }

    private static let readSize = 256 * 1024
    /// No request comes near this; a longer line is answered with an error instead of being buffered.
    static let longestLine = 1 << 20
    /// Fewer lines than this in a round are not worth waking other threads for.
    private static let parallelFrom = 64
    private static let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Reads `fd` to its end, answering every request; throws at the end if any request failed, so that the
    /// exit code says so.
    func run(reading fd: Int32) throws {
        Self.widenPipe(fd)
        var total = 0, failed = 0
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Self.readSize)
        var atEnd = false
        var discarding = false
        var running: Round?
        var outputClosed = false
        func finish(_ round: Round?) {
            guard let round else { return }
            round.done.wait()
            for output in round.outputs where !outputClosed {
                // Nobody reads the answers any more (a closed pipe, a full disk): sign nothing further.
                outputClosed = !Console.write(output, to: STDOUT_FILENO)
            }
            failed += round.failures.reduce(0, +)
        }
        while !atEnd && !outputClosed {
            // With nothing left to read at once, the round under way is finished before blocking on input, so
            // that a request/response pipeline gets its answer.
            if running != nil && !Self.hasInput(fd) {
                finish(running)
                running = nil
            }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                atEnd = true
                if pending.isEmpty { break }
                pending.append(0x0A)  // a last line without its newline is still a request
            } else {
                pending.append(contentsOf: chunk[0..<count])
            }
            var lines: [Range<Int>] = []
            var start = 0
            pending.withUnsafeBytes { buffer in
                while let end = buffer[start...].firstIndex(of: 0x0A) {
                    let line = start..<end
                    start = end + 1
                    if discarding {  // the tail of an over-long line, already answered
                        discarding = false
                        continue
                    }
                    guard buffer[line].contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                    lines.append(line)
                }
            }
            total += lines.count
            let round = lines.isEmpty ? nil : Round(signer: self, input: Array(pending[..<start]), lines: lines)
            pending.removeFirst(start)
            finish(running)
            running = round
            round?.start()
            // A line that never ends must not grow memory without bound: answer it as too long now and drop
            // the rest of it as it arrives.
            if pending.count > Self.longestLine {
                finish(running)
                running = nil
                if !discarding {
                    total += 1
                    failed += 1
                    outputClosed = !Console.write(Array(#"{"error":"request line longer than 1 MiB","id":null}"#.utf8) + [0x0A], to: STDOUT_FILENO)
                }
                discarding = true
                pending.removeAll(keepingCapacity: true)
            }
        }
        finish(running)
        if let lost = Console.outputError { throw lost }
        if failed > 0 { throw SigningError.batchFailures(failed: failed, total: total) }
    }

    /// The lines of one read, signed in slices on the global queue. Each slice reads only its own lines and
    /// writes only its own output and failure count, and `done` is waited on before either is read.
    private final class Round: @unchecked Sendable {
        let signer: BatchSigner
        let input: [UInt8]
        let lines: [Range<Int>]
        let slices: Int
        let outputs: UnsafeMutableBufferPointer<[UInt8]>
        let failures: UnsafeMutableBufferPointer<Int>
        let done = DispatchGroup()

        init(signer: BatchSigner, input: [UInt8], lines: [Range<Int>]) {
            self.signer = signer
            self.input = input
            self.lines = lines
            slices = lines.count < BatchSigner.parallelFrom ? 1 : BatchSigner.cores
            outputs = .allocate(capacity: slices)
            outputs.initialize(repeating: [])
            failures = .allocate(capacity: slices)
            failures.initialize(repeating: 0)
        }

        deinit {
            outputs.deinitialize().deallocate()
            failures.deinitialize().deallocate()
        }

        func start() {
            for slice in 0..<slices {
                DispatchQueue.global().async(group: done) { self.answer(slice) }
            }
        }

        private func answer(_ slice: Int) {
            let range = (lines.count * slice / slices)..<(lines.count * (slice + 1) / slices)
            var output: [UInt8] = []
            output.reserveCapacity(range.count * 128)
            var failed = 0
            input.withUnsafeBytes { buffer in
                for line in lines[range] where !signer.respond(UnsafeRawBufferPointer(rebasing: buffer[line]), &output) {
                    failed += 1
                }
            }
            outputs[slice] = output
            failures[slice] = failed
        }
    }

    /// Whether a read of `fd` would return at once (data or end of input) rather than wait.
    private static func hasInput(_ fd: Int32) -> Bool {
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&ready, 1, 0) > 0
    }

    /// A pipe holds 64 KiB by default, so a writer such as `cat` hands over 64 KiB at a time; a larger pipe
    /// (up to the system's unprivileged limit) lets each round be larger. Not a pipe: nothing happens.
    private static func widenPipe(_ fd: Int32) {
        _ = fcntl(fd, 1031 /* F_SETPIPE_SZ */, Int32(1 << 20))
    }
}
