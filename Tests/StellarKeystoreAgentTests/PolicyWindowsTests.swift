import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
@testable import StellarKeystoreAgent
import TestFixtures

/// The windows a policy's rules spend from, against a caller that edits the file, a second agent with another
/// policy, a signature taken back after a merge, and a lock nobody lets go.
@Suite struct PolicyWindowsTests {
    typealias Clock = AgentPolicyTests.Clock

    static func capped(_ rule: String = "r", perWindow: Int64, window: String = "1h") throws -> AgentPolicy {
        try AgentPolicyTests.policy("{\"version\": 1, \"rules\": [{\"name\": \"\(rule)\", \"kinds\": [\"transaction\"], \"operations\": [\"payment\"], \"limits\": "
            + "[{\"asset\": \"native\", \"perWindow\": \"\(AgentPolicy.units(perWindow))\", \"window\": \"\(window)\"}], \"expiresWithin\": \"5m\"}]}")
    }

    static func allowed(_ windows: PolicyWindows, _ payment: Outflow) throws -> Bool {
        if case .allow = try windows.decide(AgentPolicyTests.request(payment)).decision { return true }
        return false
    }

    /// The edits a process of the user's can make to the file under a running agent: each loses what the agent
    /// recorded, which it keeps, writes again and says once.
    @Test(arguments: ["removed", "emptied", "damaged"])
    func aRunningAgentKeepsWhatItRecordedWhateverBecomesOfTheFile(_ edit: String) throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 2), now: { clock.now })
        let logged = RunningAgent.LockedLines()
        windows.logging { logged.append($0) }
        #expect(try Self.allowed(windows, payment))
        let file = URL(fileURLWithPath: directory + "/.policy-windows")
        switch edit {
        case "removed": try FileManager.default.removeItem(at: file)
        case "emptied": try Data("{\"version\":1,\"spent\":[]}".utf8).write(to: file)
        default: try Data("{\"version\":2,\"sp".utf8).write(to: file)
        }
        #expect(try Self.allowed(windows, payment))
        #expect(!(try Self.allowed(windows, payment)), "the window started again")
        #expect(try windows.windows().map(\.spent) == [moved * 2])
        #expect(logged.lines.count == 1)
        #expect(logged.lines.first?.contains("\(directory)/.policy-windows lost what this agent had read or recorded") == true)
        // Written again from memory: an agent started now (which can only trust the file) counts both.
        #expect(try PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 2), now: { clock.now }).windows().map(\.spent)
                == [moved * 2])
    }

    /// What another agent records is no loss; what it takes back stays in the file, for it and for an agent started
    /// later, but an agent that knew the slice before does not count it (an edit of the file could say the same).
    @Test func anotherAgentsRecordsAndTakingBackAreNoLoss() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let policy = try Self.capped(perWindow: moved * 10)
        let first = PolicyWindows(directory: directory, policy: policy, now: { clock.now })
        let second = PolicyWindows(directory: directory, policy: policy, now: { clock.now })
        let logged = RunningAgent.LockedLines()
        first.logging { logged.append($0) }
        second.logging { logged.append($0) }
        let own = try #require(try first.decide(AgentPolicyTests.request(payment)).recorded)
        let others = try #require(try second.decide(AgentPolicyTests.request(payment)).recorded)
        #expect(try first.windows().map(\.spent) == [moved * 2])
        try second.takeBack(others)
        #expect(try second.windows().map(\.spent) == [moved])
        #expect(try first.windows().map(\.spent) == [moved * 2])
        #expect(try PolicyWindows(directory: directory, policy: policy, now: { clock.now }).windows().map(\.spent) == [moved])
        // The first's own take-back counts for it, and is added in the file to the second's.
        try first.takeBack(own)
        #expect(try first.windows().map(\.spent) == [moved])
        #expect(try PolicyWindows(directory: directory, policy: policy, now: { clock.now }).windows().map(\.spent) == [0])
        #expect(logged.lines.isEmpty)
    }

    /// A file edited to say the spending was taken back counts less for nobody who read it before.
    @Test func aTakeBackWrittenIntoTheFileIsNotCountedByARunningAgent() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 2), now: { clock.now })
        #expect(try Self.allowed(windows, payment))
        #expect(try Self.allowed(windows, payment))
        let path = directory + "/.policy-windows"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\"returned\":0"))
        try Data(text.replacingOccurrences(of: "\"returned\":0", with: "\"returned\":\(moved * 2)").utf8).write(to: URL(fileURLWithPath: path))
        #expect(!(try Self.allowed(windows, payment)))
        #expect(try windows.windows().map(\.spent) == [moved * 2])
    }

    /// Two agents with different policies on one keystore: what one records, the other's writes keep.
    @Test func anotherPolicysWriteKeepsARulesRecords() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let first = try Self.capped("a", perWindow: moved * 10), second = try Self.capped("b", perWindow: moved * 10, window: "24h")
        #expect(try Self.allowed(PolicyWindows(directory: directory, policy: first, now: { clock.now }), payment))
        clock.advance(60)
        #expect(try Self.allowed(PolicyWindows(directory: directory, policy: second, now: { clock.now }), payment))
        #expect(try PolicyWindows(directory: directory, policy: first, now: { clock.now }).windows().map(\.spent) == [moved])
        #expect(try PolicyWindows(directory: directory, policy: second, now: { clock.now }).windows().map(\.spent) == [moved])
        // A slice leaves its window when its own window has passed, whichever policy writes: rule a's after its hour,
        // then kept coarser for the longest window a policy can set, which a's hour does not count.
        clock.advance(3600)
        #expect(try Self.allowed(PolicyWindows(directory: directory, policy: second, now: { clock.now }), payment))
        let kept = try #require(try PolicyWindows(directory: directory, policy: second, now: { clock.now }).load())
        #expect(Set(kept.keys.map { "\($0.rule) \($0.window)" }) == ["a \(AgentPolicy.longestDuration)", "b 86400"])
        #expect(PolicyWindows.sum(kept.filter { $0.key.rule == "b" }.values.map(\.amount)) == moved * 2)
        #expect(try PolicyWindows(directory: directory, policy: first, now: { clock.now }).windows().map(\.spent) == [0])
    }

    /// A file written before slices kept their window (version 1) still opens: its records count, kept for this
    /// policy's window of their rule, or the longest any policy sets for a rule it does not have.
    /// A spend counts from its signing until its transaction's latest time is a window past, since it can be
    /// submitted until that time: a payment signed with a day to go and one signed two hours later can reach the
    /// network together, so the second sees the first. (Counted from its signing alone, as a third review found,
    /// a window saw up to `expiresWithin` / `window` times its cap submitted.)
    @Test func aSpendCountsUntilItsTransactionCanNoLongerBeSubmitted() throws {
        let envelope = try AgentPolicyTests.signersPaymentEnvelope()
        let clock = Clock()
        func payment(validFor seconds: Int64) throws -> Outflow {
            try AgentPolicyTests.outflow(Fixtures.expiring(envelope, at: UInt64(clock.now + seconds)))
        }
        let moved = try #require(try payment(validFor: 300).amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let policy = try AgentPolicyTests.policy("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\"], \"operations\": [\"payment\"], "
            + "\"limits\": [{\"asset\": \"native\", \"perWindow\": \"\(AgentPolicy.units(moved))\", \"window\": \"1h\"}], \"expiresWithin\": \"1d\"}]}")
        let windows = PolicyWindows(directory: directory, policy: policy, now: { clock.now })
        #expect(try Self.allowed(windows, try payment(validFor: 86_000)))
        clock.advance(7_200)
        #expect(!(try Self.allowed(windows, try payment(validFor: 300))), "the first can still be submitted")
        // An agent started now reads the same from the file.
        #expect(try PolicyWindows(directory: directory, policy: policy, now: { clock.now }).windows().map(\.spent) == [moved])
        // Once the first's latest time is a window past, its window is free again.
        clock.advance(86_000 - 7_200 + 3_600)
        #expect(try Self.allowed(windows, try payment(validFor: 300)))
    }

    @Test func aVersionOneFileStillCounts() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        try Data("""
            {"version":1,"spent":[
            {"time":\(clock.now - 100),"rule":"r","asset":"native","amount":\(moved)},
            {"time":\(clock.now - 50),"rule":"gone","asset":"native","amount":7}
            ]}

            """.utf8).write(to: URL(fileURLWithPath: directory + "/.policy-windows"))
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 2), now: { clock.now })
        #expect(try windows.windows().map(\.spent) == [moved])
        #expect(try Self.allowed(windows, payment))
        #expect(!(try Self.allowed(windows, payment)))
        let kept = try #require(try windows.load())
        #expect(Set(kept.keys.map { "\($0.rule) \($0.window)" }) == ["r 3600", "gone \(AgentPolicy.longestDuration)"])
        let text = try String(contentsOfFile: directory + "/.policy-windows", encoding: .utf8)
        #expect(text.range(of: #"^\{"version":3,"id":"[0-9a-f]{32}","spent":\["#, options: .regularExpression) != nil)
    }

    /// A version 2 file (records with their window, without an id) still opens, and is written back as version 3
    /// with an id drawn anew at each write.
    @Test func aVersionTwoFileStillCountsAndEachWriteDrawsAnId() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let path = directory + "/.policy-windows"
        try Data("{\"version\":2,\"spent\":[\n{\"time\":\(clock.now - 100),\"rule\":\"r\",\"asset\":\"native\",\"window\":3600,\"amount\":\(moved),\"returned\":0}\n]}\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 3), now: { clock.now })
        #expect(try windows.windows().map(\.spent) == [moved])
        #expect(try Self.allowed(windows, payment))
        let first = try #require(PolicyWindows.FileIdentity(path: path)?.id)
        #expect(try Self.allowed(windows, payment))
        let second = try #require(PolicyWindows.FileIdentity(path: path)?.id)
        #expect(first != second)
        #expect(!(try Self.allowed(windows, payment)))
    }

    /// A classic asset and its Stellar Asset Contract are one asset to a policy, so one window: a restart under a
    /// policy that names the other (here native XLM, then its contract on the request's network) counts what was
    /// spent under the first name, in its decisions and in what it shows.
    @Test func renamingALimitsAssetKeepsItsWindow() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let contract = try #require(StellarAssetContract.id(of: "native", on: .testnet))
        func policy(_ asset: String) throws -> AgentPolicy {
            try AgentPolicyTests.policy("{\"version\": 1, \"rules\": [{\"name\": \"r\", \"kinds\": [\"transaction\"], \"networks\": [\"testnet\"], "
                + "\"operations\": [\"payment\"], \"limits\": [{\"asset\": \"\(asset)\", \"perWindow\": \"\(AgentPolicy.units(moved * 2))\", \"window\": \"1h\"}], \"expiresWithin\": \"5m\"}]}")
        }
        #expect(try Self.allowed(PolicyWindows(directory: directory, policy: try policy("native"), now: { clock.now }), payment))
        let renamed = PolicyWindows(directory: directory, policy: try policy(contract), now: { clock.now })
        #expect(try renamed.windows().map(\.spent) == [moved])
        #expect(try Self.allowed(renamed, payment))
        #expect(!(try Self.allowed(renamed, payment)), "the renamed window started again")
        // And back: one window under either name.
        #expect(try PolicyWindows(directory: directory, policy: try policy("native"), now: { clock.now }).windows().map(\.spent) == [moved * 2])
    }

    /// A window lengthened on a restart counts what was spent before in its new length: a record is never forgotten
    /// while the longest window any policy can set (366 days) would count it, only kept coarser once the recording
    /// policy's own window has passed.
    @Test func lengtheningAWindowCountsWhatWasSpentBefore() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        #expect(try Self.allowed(PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 10), now: { clock.now }), payment))
        clock.advance(2 * 3600)
        // Out of the hour, and written again by the hour's policy in between: still kept.
        let hourly = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 10), now: { clock.now })
        #expect(try hourly.windows().map(\.spent) == [0])
        #expect(try Self.allowed(hourly, payment))
        let daily = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 2, window: "24h"), now: { clock.now })
        #expect(try daily.windows().map(\.spent) == [moved * 2])
        #expect(!(try Self.allowed(daily, payment)), "the lengthened window started lower")
        // Past 366 days, nothing counts it any more and the file lets it go.
        clock.advance(Int64(AgentPolicy.longestDuration) + Int64(AgentPolicy.longestDuration / PolicyWindows.slicesPerWindow) + 1)
        #expect(try Self.allowed(daily, payment))
        #expect(try daily.load()?.count == 1)
    }

    /// An outside rewrite of the file that leaves its status as it was (device, inode, size and change time: a
    /// coarse clock can let the change time repeat) is still read: the file carries an id that each write draws
    /// anew, and the agent checks it, so another agent's records written so are counted.
    @Test func aRewriteThatKeepsTheFilesStatusIsStillRead() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 10), now: { clock.now })
        #expect(try Self.allowed(windows, payment))
        let path = directory + "/.policy-windows"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let amount = "\"amount\":\(moved),"
        #expect(text.contains(amount))
        // Rewritten in place, as long as it was: a larger amount, and (as another agent writes) an id of its own.
        var rewritten = text.replacingOccurrences(of: amount, with: "\"amount\":\(String(repeating: "9", count: String(moved).count)),")
        if let id = rewritten.range(of: #""id":"[0-9a-f]+""#, options: .regularExpression) {
            rewritten.replaceSubrange(id, with: "\"id\":\"" + String(repeating: "0", count: rewritten[id].count - 7) + "\"")
        }
        #expect(rewritten.utf8.count == text.utf8.count && rewritten != text)
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        #expect(fd >= 0)
        #expect(Array(rewritten.utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == rewritten.utf8.count)
        close(fd)
        windows.takeStatusAsUnchanged()
        #expect(!(try Self.allowed(windows, payment)), "the rewrite was not read")
    }

    /// A signature taken back after its record was merged with another in its slice of the window takes back its
    /// own amount from that slice, not a record of the same amount elsewhere (here: an earlier slice's, which
    /// leaves the window first).
    @Test func aSpendTakenBackAfterAMergeRemovesExactlyItsOwn() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = Clock()
        let start = clock.now
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 10), now: { clock.now })
        #expect(try Self.allowed(windows, payment))
        clock.advance(Int64(3600 / PolicyWindows.slicesPerWindow) * 2)
        let second = try #require(try windows.decide(AgentPolicyTests.request(payment)).recorded)
        clock.advance(1)
        let third = try #require(try windows.decide(AgentPolicyTests.request(payment)).recorded)
        // The second and third share a slice: merged in the file.
        #expect(try windows.load()?.count == 2)
        try windows.takeBack(third)
        #expect(try windows.windows().map(\.spent) == [moved * 2])
        // The first signature leaves the hour; the second is still in it, and the third was never made.
        clock.advance(start + 3600 - clock.now)
        #expect(try windows.windows().map(\.spent) == [moved])
        // The second, taken back too, leaves nothing counted in the slice they shared.
        try windows.takeBack(second)
        #expect(try windows.windows().map(\.spent) == [0])
    }

    /// A lock held by another descriptor (another process, or one stopped while holding it) is waited for a
    /// bounded time, then the request is refused naming the file.
    @Test func aLockNobodyLetsGoRefusesAfterTheWait() throws {
        let payment = try AgentPolicyTests.signersPayment()
        let moved = try #require(payment.amounts["native"])
        let directory = try AgentPolicyTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let windows = PolicyWindows(directory: directory, policy: try Self.capped(perWindow: moved * 10), lockWait: 0.3)
        let holder = open(directory + "/.policy-windows.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
        let started = Date()
        #expect(throws: PolicyWindowsError.locked(directory + "/.policy-windows", seconds: 0.3)) {
            try windows.decide(AgentPolicyTests.request(payment))
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.3 && waited < 5, "\(waited) s")
        #expect(PolicyWindowsError.locked(directory + "/.policy-windows", seconds: 0.3).reason
                == "the windows file \(directory)/.policy-windows is locked by another process (waited 0.3 s)")
        close(holder)
        #expect(try Self.allowed(windows, payment))
        #expect(PolicyWindows.defaultLockWait == 5)
    }
}

/// The same, at a running agent: what a client sees and the agent's log says.
@Suite(.offThePool) struct PolicyWindowsAgentTests {
    typealias Signing = AgentPolicySigningTests

    @Test func theAgentKeepsItsWindowWhenTheFileIsRemovedAndSaysSo() throws {
        let first = try Signing.moved(Signing.payments[0]), second = try Signing.moved(Signing.payments[1])
        let keystore = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: keystore.path, withIntermediateDirectories: true)
        let policy = try Signing.policy(#"{"asset": "native", "perWindow": "\#(AgentPolicy.units(first + second))", "window": "24h"}"#)
        let running = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy))
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let socket = try running.connect()
        #expect(Signing.signTransaction(socket, Signing.payments[1], id: 1)?.contains("\"signedTxXdr\"") == true)
        try FileManager.default.removeItem(atPath: keystore.path + "/.policy-windows")
        #expect(Signing.signTransaction(socket, Signing.payments[1], id: 2)?.contains("rule payments: over") == true)
        #expect(FileManager.default.fileExists(atPath: keystore.path + "/.policy-windows"))
        running.stop()
        #expect(running.log.filter { $0.contains("/.policy-windows lost what this agent had read or recorded (it was removed)") }.count == 1)
    }

    @Test func aLockedWindowsFileIsARefusalNamingIt() throws {
        let keystore = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: keystore.path, withIntermediateDirectories: true)
        let policy = try Signing.policy(#"{"asset": "native", "perWindow": "1000", "window": "24h"}"#)
        let running = try RunningAgent(policy: PolicyWindows(directory: keystore.path, policy: policy, lockWait: 0.3))
        try AgentClient(socketPath: running.socketPath).add(try AgentTests.signer(), keystore: "/keys")
        let holder = open(keystore.path + "/.policy-windows.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(holder) }
        #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
        let answer = Signing.signTransaction(try running.connect(), Signing.payments[0], id: 1) ?? ""
        #expect(answer.contains(#""code":-4"#) && answer.contains(#""reason":"policy""#))
        #expect(answer.contains("the windows file \(keystore.path)/.policy-windows is locked by another process (waited 0.3 s)"))
    }
}
