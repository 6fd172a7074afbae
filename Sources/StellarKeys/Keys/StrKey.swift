/// A Stellar StrKey (SEP-23): a version byte naming the kind of key, its binary payload, and a CRC16 checksum,
/// in unpadded base32.
///
/// Decoding is strict: a string is accepted only if it is the one canonical encoding of a well-formed payload of
/// its kind. `description` redacts secret seeds; use `stringValue` to get the encoding itself.
public struct StrKey: Hashable, Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        case accountID = "account-id"
        case secretSeed = "secret-seed"
        case preAuthTx = "pre-auth-tx"
        case sha256Hash = "sha256-hash"
        case muxedAccount = "muxed-account"
        case signedPayload = "signed-payload"
        case contract = "contract"
        case liquidityPool = "liquidity-pool"
        case claimableBalance = "claimable-balance"

        /// SEP-23's base value (top five bits) with algorithm 0 (ED25519 or SHA256) in the low three.
        package var versionByte: UInt8 {
            switch self {
            case .accountID: 6 << 3
            case .secretSeed: 18 << 3
            case .preAuthTx: 19 << 3
            case .sha256Hash: 23 << 3
            case .muxedAccount: 12 << 3
            case .signedPayload: 15 << 3
            case .contract: 2 << 3
            case .liquidityPool: 11 << 3
            case .claimableBalance: 1 << 3
            }
        }

        /// The letter every StrKey of this kind starts with.
        package var prefix: Character {
            switch self {
            case .accountID: "G"
            case .secretSeed: "S"
            case .preAuthTx: "T"
            case .sha256Hash: "X"
            case .muxedAccount: "M"
            case .signedPayload: "P"
            case .contract: "C"
            case .liquidityPool: "L"
            case .claimableBalance: "B"
            }
        }

        init?(versionByte: UInt8) {
            guard let kind = Kind.allCases.first(where: { $0.versionByte == versionByte }) else { return nil }
            self = kind
        }
    }

    public let kind: Kind
    /// The binary key between the version byte and the checksum, as SEP-23 lays it out for `kind`.
    public let payload: [UInt8]

    public init(kind: Kind, payload: [UInt8]) throws {
        try payload.withUnsafeBytes { bytes throws in try Self.validate(bytes, as: kind) }
        self.kind = kind
        self.payload = payload
    }

    /// Decodes a StrKey of any kind.
    public init(_ string: String) throws {
        var utf8 = Array(string.utf8)
        defer { utf8.withUnsafeMutableBytes { Sodium.zero($0) } }  // the string may have been a secret seed
        (kind, payload) = try utf8.withUnsafeBytes { text throws in
            try Self.withDecoded(text) { kind, payload in (kind, Array(payload)) }
        }
    }

    /// Decodes a StrKey that must be of `kind`.
    public init(_ string: String, as expected: Kind) throws {
        try self.init(string)
        guard kind == expected else { throw StrKeyError.wrongKind(expected: expected, found: kind) }
    }

    /// The encoded StrKey. For a secret seed this *is* the secret.
    public var stringValue: String {
        let count = Self.encodedCount(payloadCount: payload.count)
        let ascii = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            payload.withUnsafeBytes { Self.encode(kind, payload: $0, into: UnsafeMutableRawBufferPointer(buffer)) }
            initialized = count
        }
        return String(decoding: ascii, as: UTF8.self)
    }

    // MARK: The codec, on raw buffers so that secret seeds can stay in guarded memory

    /// The length of the shortest StrKey: a version byte, a 32-byte key and a checksum (`G…`, `S…` and others).
    static let shortestEncoding = encodedCount(payloadCount: 32)

    static func encodedCount(payloadCount: Int) -> Int {
        Base32.encodedCount(byteCount: 1 + payloadCount + 2)
    }

    /// Writes the StrKey for `payload` as ASCII into `output` (`encodedCount(payloadCount:)` bytes).
    static func encode(_ kind: Kind, payload: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        let rawCount = 1 + payload.count + 2
        withUnsafeTemporaryAllocation(byteCount: rawCount, alignment: 1) { raw in
            defer { Sodium.zero(raw) }
            raw[0] = kind.versionByte
            UnsafeMutableRawBufferPointer(rebasing: raw[1..<(1 + payload.count)]).copyMemory(from: payload)
            // SEP-23 appends the checksum least significant byte first.
            let checksum = CRC16.xmodem(UnsafeRawBufferPointer(rebasing: raw[0..<(rawCount - 2)]))
            raw[rawCount - 2] = UInt8(truncatingIfNeeded: checksum)
            raw[rawCount - 1] = UInt8(truncatingIfNeeded: checksum >> 8)
            Base32.encode(UnsafeRawBufferPointer(raw), into: output)
        }
    }

    /// Decodes ASCII `text` and hands the kind and payload to `body`; the decoded bytes are zeroed afterwards.
    static func withDecoded<Result>(
        _ text: UnsafeRawBufferPointer,
        _ body: (Kind, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        guard !text.isEmpty else { throw StrKeyError.empty }
        guard let rawCount = Base32.decodedCount(symbolCount: text.count) else {
            // Still report a bad symbol first: it is the more useful message.
            try Base32.checkSymbols(text)
            throw StrKeyError.invalidLength(text.count)
        }
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: max(rawCount, 1), alignment: 1)
        defer {
            Sodium.zero(raw)
            raw.deallocate()
        }
        let decoded = UnsafeMutableRawBufferPointer(rebasing: raw[0..<rawCount])
        // A string shorter than any StrKey whose bits do not even decode cleanly was cut short: say that, rather
        // than which of its last bits happens to be wrong ("GAO23" is not a non-canonical key, it is a stub).
        let truncated = text.count < shortestEncoding
        do {
            try Base32.decode(text, into: decoded)
        } catch StrKeyError.nonCanonical where truncated {
            throw StrKeyError.invalidLength(text.count)
        }
        guard rawCount >= 3 else { throw StrKeyError.invalidLength(text.count) }
        // The version byte is checked before the checksum, so that SEP-23's "invalid algorithm" cases are
        // reported as such even where their checksum was not recomputed.
        guard let kind = Kind(versionByte: decoded[0]) else { throw StrKeyError.unknownVersionByte(decoded[0]) }
        let checked = UnsafeRawBufferPointer(rebasing: decoded[0..<(rawCount - 2)])
        let checksum = UInt16(decoded[rawCount - 2]) | UInt16(decoded[rawCount - 1]) << 8
        guard CRC16.xmodem(checked) == checksum else { throw truncated ? StrKeyError.invalidLength(text.count) : StrKeyError.invalidChecksum }
        let payload = UnsafeRawBufferPointer(rebasing: decoded[1..<(rawCount - 2)])
        try validate(payload, as: kind)
        return try body(kind, payload)
    }

    /// The payload rules of SEP-23 for each kind.
    static func validate(_ payload: UnsafeRawBufferPointer, as kind: Kind) throws {
        switch kind {
        case .accountID, .secretSeed, .preAuthTx, .sha256Hash, .contract, .liquidityPool:
            guard payload.count == 32 else { throw StrKeyError.invalidPayloadLength(kind, payload.count) }
        case .muxedAccount:
            guard payload.count == 32 + 8 else { throw StrKeyError.invalidPayloadLength(kind, payload.count) }
        case .claimableBalance:
            guard payload.count == 1 + 32 else { throw StrKeyError.invalidPayloadLength(kind, payload.count) }
            // The first byte is the claimable balance type; only V0 (0) exists.
            guard payload[0] == 0 else { throw StrKeyError.unknownClaimableBalanceType(payload[0]) }
        case .signedPayload:
            // ed25519 key (32) ‖ length (4, big-endian) ‖ payload ‖ zero padding to a multiple of 4 (CAP-40).
            guard payload.count >= 32 + 4 + 4 else { throw StrKeyError.invalidPayloadLength(kind, payload.count) }
            let length = payload[32..<36].reduce(0) { $0 << 8 | Int($1) }
            guard (4...64).contains(length) else { throw StrKeyError.invalidSignedPayload("its inner payload is \(length) bytes, not 4 to 64") }
            let padded = (length + 3) & ~3
            guard payload.count == 36 + padded else {
                throw StrKeyError.invalidSignedPayload("its length prefix (\(length)) does not match the \(payload.count - 36) bytes that follow")
            }
            guard payload[(36 + length)...].allSatisfy({ $0 == 0 }) else {
                throw StrKeyError.invalidSignedPayload("its padding is not zero")
            }
        }
    }
}

// MARK: Typed views of the structured kinds

extension StrKey {
    /// A muxed account (`M…`): an ed25519 account and a 64-bit id.
    package static func muxedAccount(_ account: PublicKey, id: UInt64) -> StrKey {
        let idBytes = (0..<8).map { UInt8(truncatingIfNeeded: id >> (56 - 8 * UInt64($0))) }
        return try! StrKey(kind: .muxedAccount, payload: account.rawRepresentation + idBytes)
    }

    /// A signed-payload signer (`P…`, CAP-40): an ed25519 signer and 4 to 64 bytes of payload.
    package static func signedPayload(signer: PublicKey, payload: [UInt8]) throws -> StrKey {
        let length = payload.count
        let prefix = (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
        let padding = [UInt8](repeating: 0, count: ((length + 3) & ~3) - length)
        return try StrKey(kind: .signedPayload, payload: signer.rawRepresentation + prefix + payload + padding)
    }

    /// The ed25519 public key inside an account, muxed account or signed-payload StrKey.
    package var ed25519PublicKey: PublicKey? {
        switch kind {
        case .accountID, .muxedAccount, .signedPayload: try? PublicKey(rawRepresentation: Array(payload[0..<32]))
        default: nil
        }
    }

    /// The id of a muxed account.
    package var muxedID: UInt64? {
        guard kind == .muxedAccount else { return nil }
        return payload[32..<40].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The inner payload of a signed-payload signer, without its length prefix and padding.
    package var signedPayloadData: [UInt8]? {
        guard kind == .signedPayload else { return nil }
        let length = payload[32..<36].reduce(0) { $0 << 8 | Int($1) }
        return Array(payload[36..<(36 + length)])
    }
}

extension StrKey: CustomStringConvertible {
    public var description: String {
        kind == .secretSeed ? "StrKey(secret-seed, redacted)" : stringValue
    }
}
