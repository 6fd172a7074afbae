import StellarKeys
/// The namespace of the generated Stellar XDR types (XDR.generated.swift).
enum XDR {}

/// Reads XDR (RFC 4506) strictly, for the generated decoder: a violation is an `XDRError` naming the byte offset
/// and what was expected there, never a trap.
///
/// Strict means: every read within the bytes; lengths within their declared maximum; padding bytes zero; bools
/// 0 or 1; enum values and union arms known (checked by the generated code); structures nested at most
/// `maximumDepth` deep, so that a crafted `SCVal` nested 10,000 deep fails cleanly instead of exhausting the stack
/// of a batch thread; and, with `finish()`, no trailing bytes.
struct XDRReader {
    let bytes: [UInt8]
    private(set) var offset = 0
    private var depth = 0

    /// Deeper than any envelope the network accepts: Soroban itself limits `SCVal` nesting to 100.
    static let maximumDepth = 200

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw XDRError(offset: offset, expected: "structures nested at most \(Self.maximumDepth) deep")
        }
    }

    mutating func leave() {
        depth -= 1
    }

    mutating func uint32() throws -> UInt32 {
        guard remaining >= 4 else { throw truncated("a 4-byte integer") }
        let value = UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
        offset += 4
        return value
    }

    mutating func int32() throws -> Int32 { Int32(bitPattern: try uint32()) }

    mutating func uint64() throws -> UInt64 {
        guard remaining >= 8 else { throw truncated("an 8-byte integer") }
        return UInt64(try uint32()) << 32 | UInt64(try uint32())
    }

    mutating func int64() throws -> Int64 { Int64(bitPattern: try uint64()) }

    mutating func bool() throws -> Bool {
        let at = offset
        switch try uint32() {
        case 0: return false
        case 1: return true
        case let other: throw XDRError(offset: at, expected: "a bool (0 or 1), not \(other)")
        }
    }

    /// `count` bytes, then zero padding to a multiple of 4.
    mutating func fixedOpaque(_ count: Int) throws -> [UInt8] {
        let padded = (count + 3) & ~3
        guard remaining >= padded else { throw truncated("\(count) bytes of data") }
        let value = Array(bytes[offset..<offset + count])
        for index in offset + count..<offset + padded where bytes[index] != 0 {
            throw XDRError(offset: index, expected: "a zero padding byte")
        }
        offset += padded
        return value
    }

    /// A 4-byte length of at most `max` (and of what is left), then that many bytes, padded.
    mutating func variableOpaque(max: Int?) throws -> [UInt8] {
        let at = offset
        let count = Int(try uint32())
        if let max, count > max { throw XDRError(offset: at, expected: "a length of at most \(max), not \(count)") }
        guard count <= remaining else { throw XDRError(offset: at, expected: "a length within the \(remaining) bytes left, not \(count)") }
        return try fixedOpaque(count)
    }

    mutating func fixedArray<Element>(_ count: Int, _ element: (inout XDRReader) throws -> Element) throws -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try element(&self)) }
        return elements
    }

    /// A 4-byte count of at most `max`, then the elements. Every XDR element takes at least 4 bytes, so a count
    /// beyond a quarter of what is left is refused before anything is allocated for it.
    mutating func variableArray<Element>(max: Int?, _ element: (inout XDRReader) throws -> Element) throws -> [Element] {
        let at = offset
        let count = Int(try uint32())
        if let max, count > max { throw XDRError(offset: at, expected: "at most \(max) elements, not \(count)") }
        guard count <= remaining / 4 else {
            throw XDRError(offset: at, expected: "a count that fits in the \(remaining) bytes left, not \(count)")
        }
        return try fixedArray(count, element)
    }

    /// XDR's optional: a bool, then the value when it is 1.
    mutating func optional<Value>(_ element: (inout XDRReader) throws -> Value) throws -> Value? {
        try bool() ? try element(&self) : nil
    }

    func unknown<Value: BinaryInteger>(_ what: String, _ value: Value, at: Int) -> XDRError {
        XDRError(offset: at, expected: "a known \(what), not \(value)")
    }

    /// Refuses bytes after the value.
    func finish() throws {
        if remaining > 0 { throw XDRError(offset: offset, expected: "the end of the envelope, not \(remaining) more bytes") }
    }

    private func truncated(_ what: String) -> XDRError {
        XDRError(offset: offset, expected: "\(what), but the envelope ends")
    }
}

/// Reading an `SCVal` of a fixed shape (a contract's credential, an account's signatures) part by part, each part
/// an error that says where and what was expected.
extension XDRReader {
    /// Throws `what` at `offset` unless `holds`.
    static func expect(_ holds: Bool, at offset: Int, _ what: String) throws {
        if !holds { throw XDRError(offset: offset, expected: what) }
    }

    /// An `SCValType` of `code`.
    mutating func scValType(_ code: Int32, _ what: String) throws {
        let at = offset
        try Self.expect(try int32() == code, at: at, what)
    }

    /// The `true` of an `SCVal`'s optional vector or map.
    mutating func present(_ what: String) throws {
        let at = offset
        try Self.expect(try bool(), at: at, "\(what), not an absent one")
    }

    /// SCV_SYMBOL `name`: a field of a `#[contracttype]` struct, which the host keys by name.
    mutating func fieldName(_ name: String) throws {
        let at = offset
        try scValType(15, "the field \(name) (SCV_SYMBOL)")
        try Self.expect(try variableOpaque(max: 32) == Array(name.utf8), at: at, "the field \(name)")
    }
}

/// Where an envelope stops being valid XDR, and what was expected there.
public struct XDRError: Error, Equatable, Sendable {
    public let offset: Int
    public let expected: String
}
