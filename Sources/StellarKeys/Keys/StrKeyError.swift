/// Why a string is not a valid StrKey. Messages never repeat the input: it may have been a secret seed.
public enum StrKeyError: KeystoreError, Equatable {
    case empty
    case lowercase
    case padding
    case invalidCharacter(position: Int)
    case invalidLength(Int)
    case nonCanonical
    case invalidChecksum
    case unknownVersionByte(UInt8)
    case wrongKind(expected: StrKey.Kind, found: StrKey.Kind)
    case invalidPayloadLength(StrKey.Kind, Int)
    case invalidSignedPayload(String)
    case unknownClaimableBalanceType(UInt8)

    /// "an account-id", "a secret-seed": the article a kind's name takes when read aloud.
    private static func article(_ kind: StrKey.Kind) -> String {
        kind.rawValue.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }

    public var message: String {
        switch self {
        case .empty:
            "The StrKey is empty."
        case .lowercase:
            "The StrKey contains lower-case letters; StrKeys are upper-case only."
        case .padding:
            "The StrKey contains '=' padding, which StrKeys never have; remove it."
        case .invalidCharacter(let position):
            "The StrKey has a character outside the base32 alphabet (A-Z, 2-7) at position \(position)."
        case .invalidLength(let count):
            "The StrKey's length (\(count) characters) is not a valid StrKey length; check that it was copied whole."
        case .nonCanonical:
            "The StrKey is not canonically encoded (unused trailing bits are set); check that it was copied exactly."
        case .invalidChecksum:
            "The StrKey's checksum does not match; it has a typo or was copied incompletely."
        case .unknownVersionByte(let byte):
            "The StrKey's version byte (0x\(String(byte, radix: 16))) names no known key type."
        case .wrongKind(let expected, let found):
            "Expected \(Self.article(expected)) \(expected.rawValue) StrKey (\(expected.prefix)…), got \(Self.article(found)) \(found.rawValue) (\(found.prefix)…)."
        case .invalidPayloadLength(let kind, let count):
            "A StrKey of type \(kind.rawValue) cannot hold \(count) bytes; check that it was copied whole."
        case .invalidSignedPayload(let reason):
            "The signed-payload StrKey is malformed: \(reason)."
        case .unknownClaimableBalanceType(let type):
            "The claimable balance StrKey has type \(type); only type 0 (V0) exists."
        }
    }

}
