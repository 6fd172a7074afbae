import Foundation

extension Fixtures {
    /// `envelope`, a V1 transaction envelope in base64 whose transaction has no preconditions (as the fixtures' `payment
    /// N` are made by stellar-sdk), with time bounds from 0 to `latest` instead: for a policy whose windowed rule requires
    /// a latest time. Only the preconditions change: the operations, fee and sequence are the fixture's.
    public static func expiring(_ envelope: String, at latest: UInt64) -> String {
        guard var bytes = Data(base64Encoded: envelope).map(Array.init) else { fatalError("not base64: \(envelope)") }
        func integer(at offset: Int) -> UInt32 { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        // ENVELOPE_TYPE_TX, then the source (a key, or a muxed id and key), the fee and the sequence number.
        guard bytes.count > 8, integer(at: 0) == 2 else { fatalError("not a V1 transaction envelope") }
        let conditions = 4 + 4 + (integer(at: 4) == 0x100 ? 40 : 32) + 4 + 8
        guard integer(at: conditions) == 0 else { fatalError("the transaction has preconditions already") }
        let bounds = (0..<8).map { _ in UInt8(0) } + (0..<8).reversed().map { UInt8(truncatingIfNeeded: latest >> (8 * UInt64($0))) }
        bytes.replaceSubrange(conditions..<conditions + 4, with: [0, 0, 0, 1] + bounds)
        return Data(bytes).base64EncodedString()
    }
}
