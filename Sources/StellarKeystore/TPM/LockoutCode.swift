import StellarKeys
import StellarTransactions
/// The TPM's lockout authorization as keystore sets it (`TPM.protectLockout`) and a person keeps it: 32 random
/// bytes, shown once as 55 base32 symbols in 11 groups of 5. The symbols carry the bytes and a CRC-16 of them,
/// so that a typo is caught here, before the TPM counts it against its lockout hierarchy (which then refuses every
/// code for its lockout-recovery time).
public struct LockoutCode: Sendable {
    /// The authorization value itself, for the `TPMSealer` that sets or uses it.
    package let bytes: SecureBytes

    static let byteCount = 32
    static let symbolCount = 55
    static let groupSize = 5

    private init(bytes: SecureBytes) {
        precondition(bytes.count == Self.byteCount)
        self.bytes = bytes
    }

    package static func random() -> LockoutCode {
        LockoutCode(bytes: .random(count: byteCount))
    }

    /// A code as typed: case, spaces and dashes do not matter; anything else, a wrong length or a wrong checksum
    /// is `TPMError.malformedLockoutCode`, which says what is wrong without repeating any of it.
    public init(typed text: SecureBytes) throws {
        var symbols = 0
        var invalid = false
        let packed = SecureBytes(count: Self.symbolCount) { out in
            text.withUnsafeBytes { typed in
                for byte in typed where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
                    let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
                    let isSymbol = (upper >= UInt8(ascii: "A") && upper <= UInt8(ascii: "Z")) || (upper >= UInt8(ascii: "2") && upper <= UInt8(ascii: "7"))
                    if !isSymbol { invalid = true }
                    if symbols < out.count { out[symbols] = upper }
                    symbols += 1
                }
            }
        }
        if invalid { throw TPMError.malformedLockoutCode(reason: "it has a character that is not a letter, a digit 2-7, a space or a dash") }
        guard symbols == Self.symbolCount else {
            throw TPMError.malformedLockoutCode(reason: "it has \(symbols) letters and digits, not \(Self.symbolCount)")
        }
        var valid = false
        let decoded = SecureBytes(count: Self.byteCount + 2) { out in
            packed.withUnsafeBytes { valid = (try? Base32.decode($0, into: out)) != nil }
            let checksum = CRC16.xmodem(UnsafeRawBufferPointer(rebasing: out[0..<Self.byteCount]))
            valid = valid && out[Self.byteCount] == UInt8(checksum & 0xFF) && out[Self.byteCount + 1] == UInt8(checksum >> 8)
        }
        guard valid else { throw TPMError.malformedLockoutCode(reason: "its checksum does not match, so it has a typo") }
        self.init(bytes: decoded.slice(0..<Self.byteCount))
    }

    /// The code as it is shown and typed back: `ABCDE-FGHIJ-…`, 11 groups of 5.
    public func formatted() -> SecureBytes {
        let checked = SecureBytes(count: Self.byteCount + 2) { out in
            bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[0..<Self.byteCount]).copyMemory(from: $0) }
            let checksum = bytes.withUnsafeBytes { CRC16.xmodem($0) }
            out[Self.byteCount] = UInt8(checksum & 0xFF)
            out[Self.byteCount + 1] = UInt8(checksum >> 8)
        }
        let symbols = SecureBytes(count: Self.symbolCount) { out in checked.withUnsafeBytes { Base32.encode($0, into: out) } }
        let groups = Self.symbolCount / Self.groupSize
        return SecureBytes(count: Self.symbolCount + groups - 1) { out in
            symbols.withUnsafeBytes { symbols in
                var index = 0
                for (position, symbol) in symbols.enumerated() {
                    if position > 0 && position % Self.groupSize == 0 { out[index] = UInt8(ascii: "-"); index += 1 }
                    out[index] = symbol
                    index += 1
                }
            }
        }
    }
}
