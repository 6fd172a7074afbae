import Glibc
import Synchronization
import StellarKeys
import StellarKeystore
import StellarText
import StellarTransactions

/// What each rule of a policy has spent, kept beside the vaults (`.policy-windows` in the keystore directory, mode
/// 0600) so that stopping or killing the agent does not reset a cap. Spending is kept by slice: a rule's spending of
/// one asset within one 256th of a window (the longest window the recording policy sets for that rule and asset),
/// as the latest time in the slice, the amount and the amount taken back. An amount is then counted at most a
/// slice longer than its window, never shorter, and a busy rule's file stays at about 256 slices.
///
/// Every decision is made, and what it allows recorded, under an exclusive lock on `.policy-windows.lock`, held
/// across the read, the decision and the write, so that two requests (from two clients, or two agents on one
/// keystore) cannot both spend the last of a window. The file is replaced whole (`AtomicFile.write`: after a crash
/// it holds the old records or the new ones). A slice leaves its window only when its own window has passed, whatever
/// policy writes the file, so that two agents with different policies on one keystore keep each other's spending;
/// it is then kept coarser for the longest window any policy can set (`dropExpired`). A window counts an asset's
/// slices under either of its names (a classic asset and its Stellar Asset Contract, as the policy does).
///
/// The file is in a directory every process of the user can write: a caller could remove it and start its windows
/// again. So what an instance has read and recorded is kept in memory too, and the file can only add to it: a
/// slice's time and amount only grow, so a merge takes the larger of each, and a file that holds less than memory
/// (removed, emptied, shrunk, unreadable) lost records: memory is kept, the file written again from it, and the
/// loss reported to `logging`'s sink. What was taken back of a slice also only grows, but more of it counts less:
/// for a slice it knew, an instance counts only what it knew taken back and what it takes back itself. An instance
/// that has not read the file yet (a restarted agent) can only trust it: one that cannot be read as written is not
/// taken as empty, and every request is refused until it is removed, since an empty window would sign past the cap.
///
/// Times are the wall clock's: a window must outlive the process, and a clock set back only keeps records longer
/// (a record from "the future" still counts).
package final class PolicyWindows: Sendable {
    package let directory: String
    package let policy: AgentPolicy
    let now: @Sendable () -> Int64
    /// Seconds a request waits for the lock before it is refused (`PolicyWindowsError.locked`).
    let lockWait: Double
    var path: String { directory + "/.policy-windows" }
    var lockPath: String { directory + "/.policy-windows.lock" }
    /// Into how many slices a window is cut for keeping its spending.
    static let slicesPerWindow = 256
    static let largestFile = 4 << 20
    /// The lock is held for one read, one decision and one atomic write (two fsyncs) of a file of a few hundred
    /// slices: 25 ms in a debug build on a machine loaded 7 times over its cores, so half a second for 20 clients
    /// queued. A holder that keeps it for seconds is stopped, hung or hostile, and a client is better told so than
    /// kept waiting: 5 s is ten times that queue, and inside the 10 s a client of the agent has to send a request.
    package static let defaultLockWait = 5.0

    /// One rule's spending of one asset in one slice of `window` seconds.
    struct Slice: Hashable, Sendable {
        let rule: String
        let asset: String
        let window: Int
        let index: Int64

        init(rule: String, asset: String, window: Int, time: Int64) {
            self.rule = rule
            self.asset = asset
            self.window = window
            index = time / Self.length(of: window)
        }

        static func length(of window: Int) -> Int64 { Int64(max(1, window / PolicyWindows.slicesPerWindow)) }
    }

    /// What a slice holds: every number only grows, so that what two readings of the file hold is the larger of each.
    struct Spent: Equatable, Sendable {
        /// The latest time what the slice holds can be submitted (`submittable`): it is counted while that time is
        /// in a window.
        var time: Int64
        var amount: Int64
        /// What was taken back of `amount` (signatures recorded and then not made).
        var returned: Int64 = 0

        var counted: Int64 { amount - min(returned, amount) }

        /// Whether this holds at least what `known` held: as late a time and as much spent. (More taken back is
        /// not less held: it is what another agent takes back, or an edit, which `withSpending` does not count.)
        func covers(_ known: Spent) -> Bool { time >= known.time && amount >= known.amount }
    }

    /// What one decision recorded, so that `takeBack` can take back exactly that, from the slices it went into.
    package struct Spend: Sendable, Equatable {
        let amounts: [Slice: Int64]
    }

    private struct Memory {
        /// What this instance read and recorded; nil until it first read the file.
        var known: [Slice: Spent]?
        /// The file as this instance last read or wrote it, and which file that was: while the file is the same
        /// (`FileIdentity`), it is not read and parsed again, the larger part of a request's cost.
        var seen: (file: FileIdentity, slices: [Slice: Spent])?
        var log: (@Sendable (String) -> Void)?
    }

    private let memory = Mutex(Memory())

    /// The real clock: Unix seconds.
    package static func wallClock() -> Int64 { Int64(time(nil)) }

    package init(directory: String, policy: AgentPolicy, now: @escaping @Sendable () -> Int64 = PolicyWindows.wallClock,
                 lockWait: Double = PolicyWindows.defaultLockWait) {
        self.directory = directory
        self.policy = policy
        self.now = now
        self.lockWait = lockWait
    }

    /// Where a file found to have lost records is reported, one line each time (an agent's log).
    package func logging(to sink: @escaping @Sendable (String) -> Void) {
        memory.withLock { $0.log = sink }
    }

    /// The policy's decision on `request`, made under the lock with what was spent, and what it recorded there: an
    /// `allow`'s spending (and, with `recordingAsk`, an `ask`'s: the person said yes) is recorded before the lock
    /// is let go. What was recorded is `takeBack`'s to take back when no signature comes of it.
    package func decide(_ request: PolicyRequest, recordingAsk: Bool = false) throws -> (decision: PolicyDecision, recorded: Spend?) {
        if let decision = decisionReadingNoWindow(request) { return (decision, nil) }
        return try withSpending { slices, now in
            let decision = policy.decision(for: request, now: now) {
                Self.spent(in: slices, rule: $0, asset: $1, window: $2, now: now, on: request.network.map { [$0] } ?? [])
            }
            let spending: PolicySpending? = switch decision {
            case .allow(let spending): spending
            case .ask(_, let spending) where recordingAsk: spending
            default: nil
            }
            guard let spending, !spending.amounts.isEmpty else { return ((decision, nil), false) }
            let longest = longestWindows
            let until = Self.submittable(request, now: now)
            var added: [Slice: Int64] = [:]
            for (asset, amount) in spending.amounts {
                let slice = Slice(rule: spending.rule, asset: asset,
                                  window: longest[Key(rule: spending.rule, asset: asset)] ?? AgentPolicy.longestDuration, time: until)
                var spent = slices[slice] ?? Spent(time: until, amount: 0)
                spent.time = max(spent.time, until)
                spent.amount = Self.sum([spent.amount, amount])
                slices[slice] = spent
                added[slice] = amount
            }
            return ((decision, Spend(amounts: added)), true)
        }
    }

    /// Until when what `request` spends is counted from: the latest time its transaction can be submitted (a
    /// window counts it until that time is a window past, so that whichever window it is submitted in sees it), or
    /// now. A rule with a window bounds that time by its `expiresWithin`; the longest duration bounds it here too.
    static func submittable(_ request: PolicyRequest, now: Int64) -> Int64 {
        guard request.kind == .transaction, let latest = request.outflow?.timeBounds?.max, latest != 0 else { return now }
        return min(max(now, Int64(clamping: latest)), now + Int64(AgentPolicy.longestDuration))
    }

    /// The policy's decision on `request` against the windows as they are, recording nothing (for a check).
    package func decision(for request: PolicyRequest) throws -> PolicyDecision {
        if let decision = decisionReadingNoWindow(request) { return decision }
        return try withSpending { slices, now in
            (policy.decision(for: request, now: now) {
                Self.spent(in: slices, rule: $0, asset: $1, window: $2, now: now, on: request.network.map { [$0] } ?? [])
            }, false)
        }
    }

    /// A decision that reads no window and records nothing (a rule without windowed limits, a refusal before them)
    /// needs neither the lock nor the file: the policy is pure, so deciding again under the lock gives the same
    /// answer wherever a window is read. Nil when a window is read.
    private func decisionReadingNoWindow(_ request: PolicyRequest) -> PolicyDecision? {
        var readsAWindow = false
        let decision = policy.decision(for: request, now: now()) { _, _, _ in
            readsAWindow = true
            return 0
        }
        switch decision {
        case _ where readsAWindow: return nil
        case .refuse: return decision
        case .allow(let spending), .ask(_, let spending): return spending.amounts.isEmpty ? decision : nil
        }
    }

    /// Takes back what a decision recorded, when no signature came of it (the signing failed after the record):
    /// added to what its slices had taken back, whatever was recorded in them since. Once per spend: a spend
    /// taken back twice takes back twice (never below nothing).
    package func takeBack(_ spend: Spend) throws {
        guard !spend.amounts.isEmpty else { return }
        try withSpending { slices, _ in
            for (slice, amount) in spend.amounts {
                // A slice no longer kept has left every window: nothing counts it any more.
                guard var spent = slices[slice] else { continue }
                spent.returned = min(spent.amount, Self.sum([spent.returned, amount]))
                slices[slice] = spent
            }
            return ((), true)
        }
    }

    /// Each windowed limit of each rule: what was spent in its window now (an asset's other name counted on each
    /// network the rule names, or each well-known one when it names none).
    package func windows() throws -> [(rule: String, limit: AgentPolicy.Limit, spent: Int64)] {
        try withSpending { slices, now in
            (policy.rules.flatMap { rule in
                let networks = rule.networks?.compactMap { try? StellarNetwork(passphrase: $0) } ?? [.public, .testnet, .futurenet]
                return rule.limits.compactMap { limit in
                    limit.window.map { (rule.name, limit, Self.spent(in: slices, rule: rule.name, asset: limit.asset, window: $0, now: now, on: networks)) }
                }
            }, false)
        }
    }

    /// What `rule` spent of `asset` in the last `window` seconds: its slices under that name, or under the asset's
    /// other name on one of `networks` (a classic asset and its Stellar Asset Contract are one asset to a policy,
    /// so a limit renamed from one to the other keeps its window).
    static func spent(in slices: [Slice: Spent], rule: String, asset: String, window: Int, now: Int64, on networks: [StellarNetwork]) -> Int64 {
        let contracts = networks.map { StellarAssetContract.id(of: asset, on: $0) ?? asset }
        var isAsset: [String: Bool] = [asset: true]
        func names(_ other: String) -> Bool {
            if let known = isAsset[other] { return known }
            let same = zip(networks, contracts).contains { network, contract in (StellarAssetContract.id(of: other, on: network) ?? other) == contract }
            isAsset[other] = same
            return same
        }
        return sum(slices.lazy.filter { $0.key.rule == rule && $0.value.time > now - Int64(window) && names($0.key.asset) }.map(\.value.counted))
    }

    static func sum<S: Sequence>(_ amounts: S) -> Int64 where S.Element == Int64 {
        amounts.reduce(0) { total, amount in
            let (sum, overflow) = total.addingReportingOverflow(amount)
            return overflow ? .max : sum
        }
    }

    struct Key: Hashable {
        let rule: String
        let asset: String
    }

    /// The longest window of the policy for each rule and asset: how long a slice it records is kept.
    var longestWindows: [Key: Int] {
        var longest: [Key: Int] = [:]
        for rule in policy.rules {
            for limit in rule.limits {
                guard let window = limit.window else { continue }
                let key = Key(rule: rule.name, asset: limit.asset)
                longest[key] = max(longest[key] ?? 0, window)
            }
        }
        return longest
    }

    // MARK: Memory and the file

    /// `body` given what was spent (the file's slices, merged with memory's) and the time, under the lock; what it
    /// returns with `true` (it changed the slices) is written before the lock is let go. A file found to have lost
    /// what memory holds is written again from memory, and said once.
    private func withSpending<Result>(_ body: (inout [Slice: Spent], Int64) throws -> (Result, Bool)) throws -> Result {
        try withLock {
            try memory.withLock { memory in
                let now = now()
                var read: [Slice: Spent]?
                var lost: String?
                if let seen = memory.seen, let file = FileIdentity(path: path), file.isSame(as: seen.file) {
                    read = seen.slices
                } else {
                    memory.seen = nil
                    do {
                        let loaded = try loadWithIdentity()
                        read = loaded?.slices
                        memory.seen = loaded
                    } catch let error as PolicyWindowsError {
                        // Never read: nothing to keep instead of it, and an empty window would sign past the cap.
                        guard memory.known != nil, case .unusable(_, let why) = error else { throw error }
                        (read, lost) = ([:], why)
                    }
                }
                var slices = read ?? [:]
                Self.dropExpired(&slices, now: now)
                if var known = memory.known {
                    Self.dropExpired(&known, now: now)
                    let missing = known.filter { slice, spent in !(slices[slice]?.covers(spent) ?? false) }.count
                    if lost == nil && missing > 0 {
                        lost = read == nil ? "it was removed" : "\(missing) of its slices hold less than this agent knew"
                    }
                    // The larger time and amount; but what was taken back, as known: a take-back in the file since
                    // (another agent's, or an edit: they cannot be told apart) would count less, so it is not
                    // counted here. It stays in the file, for the agent that made it and any agent started later.
                    slices.merge(known) { read, known in Spent(time: max(read.time, known.time), amount: max(read.amount, known.amount),
                                                                returned: known.returned) }
                }
                memory.known = slices
                let before = slices
                let (result, changed) = try body(&slices, now)
                if changed || lost != nil {
                    var written = slices
                    for (slice, spent) in slices {
                        guard let inFile = read?[slice], let known = before[slice], inFile.returned > known.returned else { continue }
                        written[slice]?.returned = min(spent.amount, Self.sum([inFile.returned, spent.returned - known.returned]))
                    }
                    memory.seen = nil
                    try save(written)
                    memory.seen = FileIdentity(path: path).map { ($0, written) }
                }
                memory.known = slices
                if let lost {
                    memory.log?("The policy's windows file \(TerminalText.escaped(path, limit: nil)) lost what this agent had read "
                        + "or recorded (\(lost)): written again from the agent's memory.")
                }
                return result
            }
        }
    }

    /// For a test: the file's status as it is now taken for the one this instance last read or wrote, as if a
    /// rewrite since had kept its device, inode, size and change time (which a coarse clock can let happen).
    func takeStatusAsUnchanged() {
        memory.withLock { memory in
            var info = stat()
            guard let seen = memory.seen, lstat(path, &info) == 0 else { return }
            memory.seen = (FileIdentity(info, id: seen.file.id), seen.slices)
        }
    }

    /// Slices whose own window has passed are kept, coarser, for the longest window any policy can set: merged by
    /// 256ths of it (`Slice.window` the longest duration), at the latest time of what they hold, so that a policy
    /// that lengthens a window counts them (at most such a slice longer, never shorter), and dropped only when that
    /// has passed too. A window no longer than the one a slice was recorded for never counts it once it is coarse:
    /// its latest time was out of that window when it was merged.
    private static func dropExpired(_ slices: inout [Slice: Spent], now: Int64) {
        let longest = AgentPolicy.longestDuration
        var kept: [Slice: Spent] = [:]
        for (slice, spent) in slices {
            var into = slice
            if spent.time <= now - Int64(slice.window) {
                guard slice.window < longest, spent.time > now - Int64(longest) else { continue }
                into = Slice(rule: slice.rule, asset: slice.asset, window: longest, time: spent.time)
            }
            kept[into] = kept[into].map {
                Spent(time: max($0.time, spent.time), amount: sum([$0.amount, spent.amount]), returned: sum([$0.returned, spent.returned]))
            } ?? spent
        }
        slices = kept
    }
}
