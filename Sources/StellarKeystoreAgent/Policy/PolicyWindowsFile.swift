import Glibc
import StellarKeystore
import StellarText

/// The windows' file and its lock: which file was read (`FileIdentity`), the lock waited for a bounded time, and
/// the three versions of the file read and the third written.
extension PolicyWindows {
    /// A file as this reader tells it apart: the id its writer drew (version 3), which each write draws anew, and
    /// its status (replaced: a new inode; changed in place: a new change time, which no process can set back). The
    /// status alone can repeat after a rewrite (an inode reused, a change time within one tick of a coarse clock);
    /// the id cannot, short of a writer that copies it. A file without an id (an older version, or written by hand)
    /// is never taken for the one read before.
    struct FileIdentity: Equatable {
        let device: UInt64, inode: UInt64, size: Int64, changed: Int64, changedNanoseconds: Int64
        let id: String?

        init(_ info: stat, id: String?) {
            (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
            (changed, changedNanoseconds) = (Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec))
            self.id = id
        }

        /// The file at `path` now (not what a link names), its status and its first bytes read through one
        /// descriptor; nil when there is none to tell.
        init?(path: String) {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { return nil }
            var head = [UInt8](repeating: 0, count: PolicyWindows.headLength)
            let count = info.st_mode & S_IFMT == S_IFREG ? head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) } : 0
            self.init(info, id: PolicyWindows.id(inHead: head.prefix(max(count, 0))))
        }

        /// Whether this is `other`, the file read or written before: the same id and status.
        func isSame(as other: FileIdentity) -> Bool { id != nil && self == other }
    }

    /// How a version 3 file begins, its id following: `{"version":3,"id":"` and 32 hex digits.
    static let head = Array(#"{"version":3,"id":""#.utf8)
    static let idLength = 32
    static var headLength: Int { head.count + idLength + 1 }

    /// The id of a file that begins as this writer writes version 3; nil for any other beginning.
    static func id<Bytes: Collection<UInt8>>(inHead bytes: Bytes) -> String? {
        let bytes = Array(bytes.prefix(headLength))
        guard bytes.count == headLength, bytes.starts(with: head), bytes.last == UInt8(ascii: "\""),
              bytes[head.count..<head.count + idLength].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return String(decoding: bytes[head.count..<head.count + idLength], as: UTF8.self)
    }

    /// `body` under the exclusive lock, waited for at most `lockWait` seconds.
    func withLock<Result>(_ body: () throws -> Result) throws -> Result {
        let fd: Int32
        do {
            fd = try AtomicFile.openLock(lockPath, writing: true)
        } catch {
            throw PolicyWindowsError.unusable(lockPath, "it is not a lock file of its own")
        }
        guard fd >= 0 else { throw PolicyWindowsError.unusable(lockPath, String(cString: strerror(errno))) }
        defer { close(fd) }
        // Polled, since flock has no timeout: from 1 ms, doubling to 50 ms, so that a short wait costs little and a
        // long one few wake-ups.
        let deadline = Self.monotonicSeconds() + lockWait
        var pause: UInt32 = 1000
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK:
                guard Self.monotonicSeconds() < deadline else { throw PolicyWindowsError.locked(path, seconds: lockWait) }
                usleep(pause)
                pause = min(pause * 2, 50_000)
            default:
                throw PolicyWindowsError.unusable(lockPath, String(cString: strerror(errno)))
            }
        }
        return try body()
    }

    static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The file's slices. Version 3 is version 2 with an id (`FileIdentity`). Version 2 keeps each slice's window,
    /// so that a slice leaves its window when its own window has passed whatever policy reads it; version 1 (records
    /// of a time, rule, asset and amount, written before) is read with the window this policy sets for the rule and
    /// asset, or the longest any policy can set.
    func load() throws -> [Slice: Spent]? { try loadWithIdentity()?.slices }

    func loadWithIdentity() throws -> (file: FileIdentity, slices: [Slice: Spent])? {
        let read: (bytes: [UInt8], status: stat)?
        do {
            read = try AtomicFile.readWithStatus(path, limit: Self.largestFile)
        } catch {
            throw PolicyWindowsError.unusable(path, "it could not be read (\(error))")
        }
        guard let (bytes, status) = read else { return nil }
        func damaged(_ why: String) -> PolicyWindowsError { .unusable(path, "it is damaged (\(why))") }
        let top: [String: StrictJSON.Value]
        do {
            top = try StrictJSON.parse(bytes, integersOnly: true)
        } catch {
            throw damaged("\(error)")
        }
        guard let version = top["version"], case .array(let items)? = top["spent"],
              (version == .integer("3") && top.count == 3 && top["id"]?.string.map { $0.utf8.count == Self.idLength } == true)
                || ((version == .integer("1") || version == .integer("2")) && top.count == 2) else {
            throw damaged("not version 1, 2 or 3 with its records")
        }
        let longest = longestWindows
        var slices: [Slice: Spent] = [:]
        for item in items {
            guard let fields = item.object, let time = fields["time"]?.integer(as: Int64.self),
                  let rule = fields["rule"]?.string, let asset = fields["asset"]?.string,
                  let amount = fields["amount"]?.integer(as: Int64.self), amount >= 0 else {
                throw damaged("a record is not a time, a rule, an asset and an amount")
            }
            let window: Int, returned: Int64
            if version == .integer("1") {
                guard fields.count == 4 else { throw damaged("a record is not a time, a rule, an asset and an amount") }
                (window, returned) = (longest[Key(rule: rule, asset: asset)] ?? AgentPolicy.longestDuration, 0)
            } else {
                guard fields.count == 6, let kept = fields["window"]?.integer(as: Int.self), kept >= 1, kept <= AgentPolicy.longestDuration,
                      let taken = fields["returned"]?.integer(as: Int64.self), taken >= 0, taken <= amount else {
                    throw damaged("a record is not a time, a rule, an asset, a window, an amount and what was taken back of it")
                }
                (window, returned) = (kept, taken)
            }
            let slice = Slice(rule: rule, asset: asset, window: window, time: time)
            let spent = Spent(time: time, amount: amount, returned: returned)
            // Two records of one slice (version 1 read with another window than it was written with) are one.
            slices[slice] = slices[slice].map {
                Spent(time: max($0.time, time), amount: Self.sum([$0.amount, amount]), returned: Self.sum([$0.returned, returned]))
            } ?? spent
        }
        return (FileIdentity(status, id: Self.id(inHead: bytes)), slices)
    }

    /// Writes every slice it is given (version 3: version 2's records after an id drawn for this write), whatever
    /// rules the policy has.
    func save(_ slices: [Slice: Spent]) throws {
        let ordered = slices.sorted { ($0.key.rule, $0.key.asset, $0.key.window, $0.value.time) < ($1.key.rule, $1.key.asset, $1.key.window, $1.value.time) }
        let lines = ordered.map { slice, spent in
            "{\"time\":\(spent.time),\"rule\":\(AgentJSON.string(slice.rule).text),\"asset\":\(AgentJSON.string(slice.asset).text),"
                + "\"window\":\(slice.window),\"amount\":\(spent.amount),\"returned\":\(spent.returned)}"
        }
        // A new id at each write: what tells this file from the one read before when its status repeats.
        let id = Hex.string(Sodium.randomBytes(count: Self.idLength / 2))
        let text = String(decoding: Self.head, as: UTF8.self) + id + "\",\"spent\":[\n" + lines.joined(separator: ",\n") + "\n]}\n"
        do {
            try AtomicFile.write(Array(text.utf8), to: path, directory: directory)
        } catch {
            throw PolicyWindowsError.unusable(path, "it could not be written (\(error))")
        }
    }
}

/// The windows cannot be kept: nothing is signed under the policy until they can.
package enum PolicyWindowsError: KeystoreError, Equatable {
    case unusable(String, String)
    /// Another process held the windows' lock for longer than a request waits.
    case locked(String, seconds: Double)

    package var message: String {
        switch self {
        case .unusable(let path, let why):
            "What the policy's rules have spent cannot be kept in \(TerminalText.escaped(path, limit: nil)): \(why); nothing is signed under the policy until it can."
        case .locked:
            "\(reason); nothing is signed under the policy while it is."
        }
    }

    /// Why a request is refused, as a policy's refusal says it.
    package var reason: String {
        switch self {
        case .unusable(let path, let why): "what the policy's rules have spent cannot be kept in \(TerminalText.escaped(path, limit: nil)): \(why)"
        case .locked(let path, let seconds):
            "the windows file \(TerminalText.escaped(path, limit: nil)) is locked by another process (waited \(Self.seconds(seconds)) s)"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
