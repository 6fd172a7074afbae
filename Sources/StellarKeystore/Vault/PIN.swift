import StellarKeys
import StellarTransactions
/// A 6-digit PIN, held in guarded memory from the moment it is parsed.
public struct PIN: Sendable {
    public static let length = 6
    /// How many PINs there are: 10^6, all of which an attacker with a copy of a vault can try.
    public static let possibleValues = (0..<length).reduce(1) { value, _ in value * 10 }
    let bytes: SecureBytes

    /// Accepts exactly six ASCII digits `0`–`9`, as typed on one line. Unicode digits such as `١٢٣٤٥٦` or
    /// `１２３４５６` are refused: they look the same but are other bytes, so a PIN typed on another keyboard would
    /// never open the vault again.
    public init(_ line: SecureBytes) throws {
        try line.withUnsafeBytes { text in
            guard !text.isEmpty else { throw PINError.empty }
            guard text.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw PINError.notDigits
            }
            guard text.count == Self.length else { throw PINError.wrongLength(text.count) }
        }
        bytes = line
    }

    /// A PKCS#11 token's user PIN, whose rules are the token's (a YubiKey's PIV PIN is 6 to 8 characters, an
    /// HSM's longer): 4 to 64 printable ASCII characters, so that nothing another keyboard types differently and
    /// no control character ever reaches the token. The token, not keystore, says whether it is right.
    public init(token line: SecureBytes) throws {
        try line.withUnsafeBytes { text in
            guard !text.isEmpty else { throw PINError.emptyTokenPIN }
            guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { throw PINError.notPrintable }
            guard (4...64).contains(text.count) else { throw PINError.tokenPINLength(text.count) }
        }
        bytes = line
    }

    /// Parses a PIN from a Swift string. Prefer `init(_: SecureBytes)`: a `String` cannot be zeroed.
    public init(_ text: String) throws {
        var utf8 = Array(text.utf8)
        try self.init(SecureBytes(consuming: &utf8))
    }

    /// Refuses the PINs an attacker tries first. Used when a PIN is chosen, never when one is entered.
    public func checkStrength() throws {
        let digits = bytes.withUnsafeBytes { $0.map { Int($0 - UInt8(ascii: "0")) } }
        if let reason = Self.weakness(of: digits) { throw PINError.weak(reason) }
    }

    public func isEqual(to other: PIN) -> Bool { bytes.isEqual(to: other.bytes) }

    static func weakness(of digits: [Int]) -> String? {
        if Set(digits).count == 1 { return "it repeats one digit" }
        let steps = zip(digits, digits.dropFirst()).map { ($1 - $0 + 10) % 10 }
        if steps.allSatisfy({ $0 == 1 }) { return "it is an ascending run of digits" }
        if steps.allSatisfy({ $0 == 9 }) { return "it is a descending run of digits" }
        if digits[0..<2] == digits[2..<4] && digits[2..<4] == digits[4..<6] { return "it repeats a pair of digits" }
        if digits[0..<3] == digits[3..<6] { return "it repeats a group of three digits" }
        let text = digits.map(String.init).joined()
        if commonPINs.contains(text) { return "it is one of the most commonly chosen PINs" }
        return nil
    }

    /// Frequent 6-digit PINs that the patterns above do not already catch: keyboard and keypad shapes,
    /// mirrored and doubled sequences, and round numbers, as seen at the top of leaked PIN lists.
    static let commonPINs: Set<String> = [
        "112233", "123321", "654456", "159753", "159357", "147258", "147852", "258369", "369258", "741852",
        "963852", "789456", "456123", "321654", "123654", "102030", "100200", "200000", "100000",
        "100400", "520520", "110110", "222333", "121314", "112358", "123789", "789123",
    ]
}

extension PIN: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PIN(redacted)" }
    public var debugDescription: String { description }
}

public enum PINError: KeystoreError, Equatable {
    case empty
    case notDigits
    case wrongLength(Int)
    case mismatch
    case weak(String)
    case notPrintable
    case tokenPINLength(Int)
    /// No token PIN was entered: told the token PIN's rule, not the vault PIN's.
    case emptyTokenPIN

    public var message: String {
        switch self {
        case .empty:
            "No PIN was entered; a PIN is 6 digits."
        case .notDigits:
            "A PIN is 6 digits 0-9 only (no letters, spaces or other scripts' digits)."
        case .wrongLength(let count):
            "A PIN is exactly 6 digits, not \(count)."
        case .mismatch:
            "The two PINs did not match; nothing was changed. Run the command again."
        case .weak(let reason):
            "That PIN is too easy to guess: \(reason). Choose another."
        case .notPrintable:
            "A token's PIN is printable ASCII characters only (no control characters or other scripts)."
        case .tokenPINLength(let count):
            "A token's PIN is 4 to 64 characters, not \(count)."
        case .emptyTokenPIN:
            "No PIN was entered; a token's PIN is 4 to 64 printable ASCII characters."
        }
    }

}
