import Foundation
import Testing
import TestFixtures
import Synchronization
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreAgent

/// `--confirm`: nothing is written to the log between a question's summary and its answer (issue 41, 7.5). The
/// log of a foreground agent is the terminal the question is on: another client's line written there lands on
/// the pending prompt, and many can scroll its summary away. They are held, and written after the answer.
@Suite(.offThePool) struct PendingPromptLogTests {
    @Test func logLinesWaitForThePendingAnswer() throws {
        let (running, prompter, socket) = try AgentConfirmationTests.pendingRequest()
        defer { prompter.answer(false) }
        running.agent.waitForLog()
        // Another client, served while the question is pending: its request is logged.
        let other = try AgentTests.signer("other", seed: KeyPair.random().secretSeedStrKey().withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        try AgentClient(socketPath: running.socketPath).add(other, keystore: "/keys")
        usleep(300_000)
        #expect(!running.log.contains { $0.contains("addKey other") }, "written while the question was pending: \(running.log)")

        prompter.answer(false)
        #expect(socket.hasInput(within: 5000) && socket.line()?.contains(#""code":-4"#) == true)
        var written = false
        for _ in 0..<50 where !written {
            usleep(100_000)
            written = running.log.contains { $0.contains("addKey other") }
        }
        #expect(written, "the held line was not written after the answer: \(running.log)")
    }

    /// A log that blocks (a pipe nobody reads) holds no question up: a write under way gets a moment to end, and
    /// the question goes on; the lines that came meanwhile are written once the log takes them again.
    @Test func aBlockedLogDoesNotHoldTheQuestionUp() throws {
        let unblock = DispatchSemaphore(value: 0)
        let writing = DispatchSemaphore(value: 0)
        let written = Mutex<[String]>([])
        let queue = LogQueue { text in
            written.withLock { $0.append(text) }
            if text == "first" {
                writing.signal()
                unblock.wait()
            }
        }
        defer { unblock.signal() }
        queue.append("first")
        #expect(writing.wait(timeout: .now() + 5) == .success)
        let start = Date()
        let asked = DispatchSemaphore(value: 0)
        Thread {
            _ = queue.holding {
                queue.append("second")
                return true
            }
            asked.signal()
        }.start()
        #expect(asked.wait(timeout: .now() + 5) == .success, "the question waited on the blocked log")
        #expect(Date().timeIntervalSince(start) < 3)
        unblock.signal()
        queue.drain(seconds: 5)
        #expect(written.withLock { $0 } == ["first", "second"])
    }
}
