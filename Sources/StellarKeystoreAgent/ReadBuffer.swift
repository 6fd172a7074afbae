import Glibc
import StellarKeystore
import StellarKeys

/// The bytes a connection has received and not yet handled, in one allocation of bounded size that holds no stale
/// copy: whatever leaves it is zeroed, a larger allocation zeroes the one it replaces, and the whole is zeroed
/// when the connection ends. A client can send a seed before the agent asked for it; it is refused, and must not
/// linger in freed memory afterwards. Everything past `count` is zero.
final class ReadBuffer {
    private var storage: UnsafeMutableRawBufferPointer
    private(set) var count = 0
    /// The most it will ever hold: a read never asks for more than fits under it.
    let limit: Int

    init(limit: Int, initialCapacity: Int = 16 * 1024) {
        self.limit = limit
        storage = Self.zeroed(min(initialCapacity, limit))
    }

    deinit {
        wipe()
        storage.deallocate()
    }

    var isFull: Bool { count == limit }

    /// The bytes held, valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }

    /// Where the first newline at or after `start` is.
    func newline(from start: Int) -> Int? {
        guard start < count, let base = storage.baseAddress else { return nil }
        return memchr(base + start, 0x0A, count - start).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) }
    }

    /// Reads what `socket` has into the free space, grown as needed up to `limit`: how many bytes came, 0 at the
    /// end of the stream, nil on an error. Must not be called when full.
    func read(from socket: UnixSocket) -> Int? {
        precondition(!isFull)
        if count == storage.count { grow() }
        let read = socket.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[count...]))
        count += read ?? 0
        return read
    }

    /// `read(from:)`, and who wrote what was read (`UnixSocket.read(into:naming:)`).
    func read(from socket: UnixSocket, naming sender: inout UnixSocket.Sender?) -> Int? {
        precondition(!isFull)
        if count == storage.count { grow() }
        let read = socket.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[count...]), naming: &sender)
        count += read ?? 0
        return read
    }

    /// Drops the first `dropped` bytes and zeroes the space they leave at the end.
    func removeFirst(_ dropped: Int) {
        guard dropped > 0, let base = storage.baseAddress else { return }
        let kept = count - dropped
        if kept > 0 { (base).copyMemory(from: base + dropped, byteCount: kept) }
        Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: storage[kept..<count]))
        count = kept
    }

    /// Zeroes and forgets everything held.
    func wipe() {
        Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: storage[..<count]))
        count = 0
    }

    private func grow() {
        let larger = Self.zeroed(min(storage.count * 2, limit))
        larger.copyMemory(from: bytes)
        Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: storage[..<count]))
        storage.deallocate()
        storage = larger
    }

    private static func zeroed(_ size: Int) -> UnsafeMutableRawBufferPointer {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0)
        return memory
    }
}
