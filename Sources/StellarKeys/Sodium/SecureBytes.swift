/// Secret bytes (seeds, PINs, derived keys) in libsodium-guarded memory.
///
/// The buffer sits between guard pages, is locked out of swap where the system allows, is read-only once filled,
/// and is zeroed when the last reference goes away. Its `description` never shows the contents, so a secret cannot
/// reach a log line or an error message through string interpolation.
public final class SecureBytes: @unchecked Sendable {
    // @unchecked: the bytes are written only inside `init` and are read-only (mprotect) afterwards.
    private let pointer: UnsafeMutableRawPointer
    public let count: Int

    /// Allocates `count` guarded bytes and lets `fill` write them; the memory is made read-only afterwards.
    public init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0)
        pointer = Sodium.guardedAllocate(count: count)
        self.count = count
        let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: count)
        Sodium.zero(buffer)
        // Every stored property is set, so if `fill` throws, `deinit` runs and frees the buffer: it is the one
        // owner. Freeing it here as well was a double free (a crash, SIGSEGV, on every error while a secret was read).
        try fill(buffer)
        Sodium.makeReadOnly(pointer)
    }

    /// Copies `bytes` into guarded memory. The caller still owns (and should zero) its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { $0.copyMemory(from: bytes) }
    }

    /// Moves `bytes` into guarded memory and zeroes the array it came from.
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(count: bytes.count) { out in bytes.withUnsafeBytes { out.copyMemory(from: $0) } }
        bytes.withUnsafeMutableBytes { Sodium.zero($0) }
        bytes.removeAll()
    }

    public static func random(count: Int) -> SecureBytes {
        SecureBytes(count: count) { Sodium.fillRandom($0) }
    }

    deinit {
        Sodium.guardedFree(pointer)  // sodium_free zeroes the region before releasing it
    }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A new guarded buffer holding `range` of this one.
    public func slice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Compares in constant time, so that timing does not reveal how much of a secret matched.
    public func isEqual(to other: SecureBytes) -> Bool {
        withUnsafeBytes { a in other.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}

extension SecureBytes {
    /// These bytes encrypted and authenticated (XSalsa20-Poly1305) under `key`: the 16-byte tag, then the
    /// ciphertext.
    package func sealed(nonce: [UInt8], key: SecureBytes) -> [UInt8] {
        withUnsafeBytes { text in key.withUnsafeBytes { Sodium.secretBoxSeal(plaintext: text, nonce: nonce, key: $0) } }
    }

    /// The plaintext of a `sealed` box, or nil when its tag does not verify under `key` (a wrong key, or altered
    /// bytes: the two cannot be told apart).
    package static func opening(_ box: [UInt8], nonce: [UInt8], key: SecureBytes) -> SecureBytes? {
        guard box.count >= Sodium.secretBoxMACBytes else { return nil }
        var opened = false
        let plaintext = SecureBytes(count: box.count - Sodium.secretBoxMACBytes) { out in
            opened = key.withUnsafeBytes { Sodium.secretBoxOpen(ciphertext: box, nonce: nonce, key: $0, plaintext: out) }
        }
        return opened ? plaintext : nil
    }
}
