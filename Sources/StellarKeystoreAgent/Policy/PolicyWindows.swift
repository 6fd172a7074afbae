import Glibc
import StellarKeys
import StellarKeystore
import StellarText

/// What each rule of a policy has spent, kept beside the vaults (`.policy-windows` in the keystore directory, mode
/// 0600) so that stopping or killing the agent does not reset a cap: records of a time (Unix seconds), rule, asset
/// and stroops, one per signature but merged within each 256th of the window (at the later time: counted at most
/// that much longer), kept as long as the rule's longest window for that asset.
///
/// Every decision is made, and what it allows recorded, under an exclusive lock on `.policy-windows.lock`, held
/// across the read, the decision and the write, so that two requests (from two clients, or two agents on one
/// keystore) cannot both spend the last of a window. The file is replaced whole (`AtomicFile.write`: after a crash
/// it holds the old records or the new ones). A file that cannot be read as written is not taken as empty: every
/// request is refused until it is removed, since an empty window would sign past the cap.
///
/// Times are the wall clock's: a window must outlive the process, and a clock set back only keeps records
/// longer (a record from "the future" still counts).
public final class PolicyWindows: @unchecked Sendable {
    public let directory: String
    public let policy: AgentPolicy
    let now: @Sendable () -> Int64
    var path: String { directory + "/.policy-windows" }
    var lockPath: String { directory + "/.policy-windows.lock" }
    /// The most records kept per rule and asset; past it the two oldest are merged into one, at the later time
    /// (which can only keep an amount counted longer).
    static let mostRecords = 4096
    /// Into how many slices a window is cut for keeping its records (see `save`).
    static let slicesPerWindow = 256
    static let largestFile = 4 << 20

    struct Record: Equatable {
        var time: Int64
        let rule: String
        let asset: String
        var amount: Int64
    }

    /// The real clock: Unix seconds.
    public static func wallClock() -> Int64 { Int64(time(nil)) }

    public init(directory: String, policy: AgentPolicy, now: @escaping @Sendable () -> Int64 = PolicyWindows.wallClock) {
        self.directory = directory
        self.policy = policy
        self.now = now
    }

    /// The policy's decision on `request`, made under the lock with what was spent; what an `allow` (and, with
    /// `recordingAsk`, an `ask`: the person said yes) adds is recorded before the lock is let go. Without
    /// `recording`, nothing is (what a request would be answered, for a check).
    public func decision(for request: PolicyRequest, recordingAsk: Bool = false, recording: Bool = true) throws -> PolicyDecision {
        // A decision that reads no window and records nothing (a rule without windowed limits, a refusal before
        // them) needs neither the lock nor the file: the policy is pure, so deciding again under the lock gives the
        // same answer wherever a window is read.
        var readsAWindow = false
        let unlocked = policy.decision(for: request, now: now()) { _, _, _ in
            readsAWindow = true
            return 0
        }
        if !readsAWindow {
            switch unlocked {
            case .refuse: return unlocked
            case .allow(let spending), .ask(_, let spending): if spending.amounts.isEmpty { return unlocked }
            }
        }
        return try withLock {
            var records = try load()
            let now = now()
            let decision = policy.decision(for: request, now: now) { rule, asset, window in
                Self.sum(records.lazy.filter { $0.rule == rule && $0.asset == asset && $0.time > now - Int64(window) }.map(\.amount))
            }
            let spending: PolicySpending? = switch decision {
            case .allow(let spending): spending
            case .ask(_, let spending) where recordingAsk: spending
            default: nil
            }
            if recording, let spending, !spending.amounts.isEmpty {
                for (asset, amount) in spending.amounts.sorted(by: { $0.key < $1.key }) {
                    records.append(Record(time: now, rule: spending.rule, asset: asset, amount: amount))
                }
                try save(records, now: now)
            }
            return decision
        }
    }

    /// Takes back what a decision recorded, when no signature came of it (the signing failed after the record).
    public func takeBack(_ spending: PolicySpending) throws {
        guard !spending.amounts.isEmpty else { return }
        try withLock {
            var records = try load()
            for (asset, amount) in spending.amounts {
                if let index = records.lastIndex(where: { $0.rule == spending.rule && $0.asset == asset && $0.amount == amount }) {
                    records.remove(at: index)
                }
            }
            try save(records, now: now())
        }
    }

    /// Each windowed limit of each rule: what was spent in its window now.
    public func windows() throws -> [(rule: String, limit: AgentPolicy.Limit, spent: Int64)] {
        try withLock {
            let records = try load()
            let now = now()
            return policy.rules.flatMap { rule in
                rule.limits.compactMap { limit in
                    limit.window.map { window in
                        (rule.name, limit, Self.sum(records.lazy.filter {
                            $0.rule == rule.name && $0.asset == limit.asset && $0.time > now - Int64(window)
                        }.map(\.amount)))
                    }
                }
            }
        }
    }

    static func sum<S: Sequence>(_ amounts: S) -> Int64 where S.Element == Int64 {
        amounts.reduce(0) { total, amount in
            let (sum, overflow) = total.addingReportingOverflow(amount)
            return overflow ? .max : sum
        }
    }

    // MARK: The file

    private func withLock<Result>(_ body: () throws -> Result) throws -> Result {
        let fd: Int32
        do {
            fd = try AtomicFile.openLock(lockPath, writing: true)
        } catch {
            throw PolicyWindowsError.unusable(lockPath, "it is not a lock file of its own")
        }
        guard fd >= 0 else { throw PolicyWindowsError.unusable(lockPath, String(cString: strerror(errno))) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PolicyWindowsError.unusable(lockPath, String(cString: strerror(errno))) }
        }
        return try body()
    }

    func load() throws -> [Record] {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, limit: Self.largestFile)
        } catch {
            throw PolicyWindowsError.unusable(path, "it could not be read (\(error))")
        }
        guard let bytes else { return [] }
        func damaged(_ why: String) -> PolicyWindowsError { .unusable(path, "it is damaged (\(why))") }
        let top: [String: StrictJSON.Value]
        do {
            top = try StrictJSON.parse(bytes, integersOnly: true)
        } catch {
            throw damaged("\(error)")
        }
        guard top.count == 2, top["version"] == .integer("1"), case .array(let items)? = top["spent"] else {
            throw damaged("not version 1 with its records")
        }
        return try items.map { item in
            guard let fields = item.object, fields.count == 4, let time = fields["time"]?.integer(as: Int64.self),
                  let rule = fields["rule"]?.string, let asset = fields["asset"]?.string,
                  let amount = fields["amount"]?.integer(as: Int64.self), amount >= 0 else {
                throw damaged("a record is not a time, a rule, an asset and an amount")
            }
            return Record(time: time, rule: rule, asset: asset, amount: amount)
        }
    }

    /// Writes the records still inside a window of the policy (those of rules and assets it no longer caps are
    /// dropped), at most `mostRecords` per rule and asset.
    func save(_ records: [Record], now: Int64) throws {
        var longest: [String: Int] = [:]
        for rule in policy.rules {
            for limit in rule.limits {
                if let window = limit.window { longest[rule.name + "\u{0}" + limit.asset] = max(longest[rule.name + "\u{0}" + limit.asset] ?? 0, window) }
            }
        }
        var kept: [String: [Record]] = [:]
        for record in records {
            let key = record.rule + "\u{0}" + record.asset
            guard let window = longest[key], record.time > now - Int64(window) else { continue }
            kept[key, default: []].append(record)
        }
        var lines: [String] = []
        for key in kept.keys.sorted() {
            // Records in one slice of the window (a 256th of it) are kept as one, at the latest time among them: an
            // amount is then counted at most a slice longer, never shorter, and a busy rule's file stays at about
            // 256 records instead of one per signature (each request reads and writes it whole).
            let slice = Int64(max(1, (longest[key] ?? 0) / Self.slicesPerWindow))
            var list: [Record] = []
            for record in kept[key]!.sorted(by: { $0.time < $1.time }) {
                if let last = list.last, last.time / slice == record.time / slice {
                    list[list.count - 1].amount = Self.sum([last.amount, record.amount])
                    list[list.count - 1].time = record.time
                } else {
                    list.append(record)
                }
            }
            while list.count > Self.mostRecords {
                list[1].amount = Self.sum([list[0].amount, list[1].amount])
                list.removeFirst()
            }
            for record in list {
                lines.append("{\"time\":\(record.time),\"rule\":\(AgentJSON.string(record.rule).text),"
                    + "\"asset\":\(AgentJSON.string(record.asset).text),\"amount\":\(record.amount)}")
            }
        }
        let text = "{\"version\":1,\"spent\":[\n" + lines.joined(separator: ",\n") + "\n]}\n"
        do {
            try AtomicFile.write(Array(text.utf8), to: path, directory: directory)
        } catch {
            throw PolicyWindowsError.unusable(path, "it could not be written (\(error))")
        }
    }
}

/// The windows cannot be kept: nothing is signed under the policy until they can.
public enum PolicyWindowsError: KeystoreError, Equatable {
    case unusable(String, String)

    public var message: String {
        switch self {
        case .unusable(let path, let why):
            "What the policy's rules have spent cannot be kept in \(TerminalText.escaped(path, limit: nil)): \(why); nothing is signed under the policy until it can."
        }
    }
}
