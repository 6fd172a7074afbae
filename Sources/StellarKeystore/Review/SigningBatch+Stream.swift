import Dispatch
import Glibc

/// A stream of requests answered on every core.
///
/// Input is taken as it arrives, one read at a time (at most 256 KiB). The complete lines of a read form a
/// round: cut into one contiguous slice per core and signed in parallel while the next read is taken, then
/// written in order. Every result is written as soon as its round is done, and a round never waits for more
/// input, so a pipeline that sends a request and waits for its answer always gets it; memory stays bounded by
/// two rounds of requests and results whatever the input size. Blank lines are skipped.
extension SigningBatch {
    private static let readSize = 256 * 1024
    /// No request comes near this; a longer line is answered with an error instead of being buffered.
    static let longestLine = 1 << 20
    /// Fewer lines than this in a round are not worth waking other threads for.
    private static let parallelFrom = 64
    private static let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Reads `fd` to its end, answering every request through `write` (which says whether the answers were
    /// taken); once a write fails, nobody reads the answers any more (a closed pipe, a full disk), and nothing
    /// further is signed. Returns how many requests there were, and how many of them failed.
    public func answer(reading fd: Int32, writing write: ([UInt8]) -> Bool) -> (total: Int, failed: Int) {
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
                outputClosed = !write(output)
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
            let round = lines.isEmpty ? nil : Round(batch: self, input: Array(pending[..<start]), lines: lines)
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
                    outputClosed = !write(Array(#"{"error":"request line longer than 1 MiB","id":null}"#.utf8) + [0x0A])
                }
                discarding = true
                pending.removeAll(keepingCapacity: true)
            }
        }
        finish(running)
        return (total, failed)
    }

    /// The lines of one read, signed in slices on the global queue. Each slice reads only its own lines and
    /// writes only its own output and failure count, and `done` is waited on before either is read.
    private final class Round: @unchecked Sendable {
        let batch: SigningBatch
        let input: [UInt8]
        let lines: [Range<Int>]
        let slices: Int
        let outputs: UnsafeMutableBufferPointer<[UInt8]>
        let failures: UnsafeMutableBufferPointer<Int>
        let done = DispatchGroup()

        init(batch: SigningBatch, input: [UInt8], lines: [Range<Int>]) {
            self.batch = batch
            self.input = input
            self.lines = lines
            slices = lines.count < SigningBatch.parallelFrom ? 1 : SigningBatch.cores
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
                for line in lines[range] where !batch.answer(UnsafeRawBufferPointer(rebasing: buffer[line]), into: &output) {
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
