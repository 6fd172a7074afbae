import StellarKeys
import StellarText

/// An account's signers and thresholds, as Horizon's `/accounts/G…` answers them: what the network checks a
/// transaction's signatures against, read offline from a file the person fetched.
///
/// Only `id` (or `account_id`), `thresholds.{low,med,high}_threshold` and `signers[{key, weight, type}]` are
/// read; every other field is ignored. The master key is the `ed25519_public_key` signer whose key is the
/// account's own (absent, or weighted 0: the master key cannot sign). A signer weighted 0 signs nothing: the
/// ledger holds none but the master key, which stellar-core then leaves out (`TransactionFrame::checkSignature`).
public struct AccountSigners: Sendable, Equatable {
    public struct Signer: Sendable, Equatable {
        public let key: SignerKey
        public let weight: UInt8
    }

    public let account: PublicKey
    package let masterWeight: UInt8
    package let lowThreshold: UInt8
    package let mediumThreshold: UInt8
    package let highThreshold: UInt8
    /// The signers other than the master key, in the file's order, none weighted 0.
    public let signers: [Signer]
    /// Where it was read from, as the caller named it (a file name), for messages.
    public let source: String

    /// 4 MiB: an account with a thousand trust lines is about half of that in Horizon's JSON.
    package static let maximumSize = 4 << 20
    /// An account has at most 20 signers besides its master key (`signers<MAX_SIGNERS>`, Stellar-ledger-entries.x).
    package static let maximumSigners = 20 + 1

    /// Reads one account's JSON, read by `StrictJSON` (a key given twice is refused).
    public init(horizonJSON bytes: [UInt8], source: String) throws {
        func fail(_ problem: AccountSignersError.Problem) -> AccountSignersError { AccountSignersError(source: source, problem: problem) }
        guard bytes.count <= Self.maximumSize else { throw fail(.tooLarge) }
        let top: [String: StrictJSON.Value]
        do {
            top = try StrictJSON.parse(bytes, integersOnly: false)
        } catch let violation as StrictJSON.Violation {
            throw fail(.notJSON(violation.reason))
        }
        func string(_ value: StrictJSON.Value?, _ name: String) throws -> String {
            guard let value else { throw fail(.missing(name)) }
            guard let text = value.string else { throw fail(.wrongType(name, expected: "a string", found: value.kind.rawValue)) }
            return text
        }
        func weight(_ value: StrictJSON.Value?, _ name: String) throws -> UInt8 {
            guard let value else { throw fail(.missing(name)) }
            guard case .integer = value else { throw fail(.wrongType(name, expected: "an integer", found: value.kind.rawValue)) }
            guard let number = value.integer(as: UInt8.self) else { throw fail(.outOfRange(name, most: 255)) }
            return number
        }
        // A signer's weight is a uint32 in the ledger, and one above 255 could be set before protocol 10; since
        // then stellar-core counts it as 255 (`SignatureChecker::checkSignature`: `if (w > UINT8_MAX) w =
        // UINT8_MAX`), and Horizon shows it as stored. The master weight and the thresholds are bytes.
        func signerWeight(_ value: StrictJSON.Value?, _ name: String) throws -> UInt8 {
            guard let value else { throw fail(.missing(name)) }
            guard case .integer = value else { throw fail(.wrongType(name, expected: "an integer", found: value.kind.rawValue)) }
            guard let number = value.integer(as: UInt32.self) else { throw fail(.outOfRange(name, most: UInt32.max)) }
            return UInt8(min(number, 255))
        }
        func accountKey(_ text: String, _ name: String) throws -> PublicKey {
            do { return try PublicKey(accountID: text) } catch { throw fail(.badKey(name, TerminalText.escaped(text))) }
        }
        let ids = try ["id", "account_id"].compactMap { name in try top[name].map { try accountKey(try string($0, name), name) } }
        guard let account = ids.first else { throw fail(.missing("id")) }
        guard ids.allSatisfy({ $0 == account }) else { throw fail(.idsDiffer) }
        guard let thresholdsValue = top["thresholds"] else { throw fail(.missing("thresholds")) }
        guard let thresholds = thresholdsValue.object else {
            throw fail(.wrongType("thresholds", expected: "an object", found: thresholdsValue.kind.rawValue))
        }
        lowThreshold = try weight(thresholds["low_threshold"], "thresholds.low_threshold")
        mediumThreshold = try weight(thresholds["med_threshold"], "thresholds.med_threshold")
        highThreshold = try weight(thresholds["high_threshold"], "thresholds.high_threshold")
        guard let signersValue = top["signers"] else { throw fail(.missing("signers")) }
        guard case .array(let entries) = signersValue else {
            throw fail(.wrongType("signers", expected: "an array", found: signersValue.kind.rawValue))
        }
        guard entries.count <= Self.maximumSigners else { throw fail(.tooManySigners(entries.count)) }
        var master: UInt8 = 0
        var signers: [Signer] = []
        var seen: Set<SignerKey> = []
        for (index, entry) in entries.enumerated() {
            let name = "signers[\(index)]"
            guard let fields = entry.object else { throw fail(.wrongType(name, expected: "an object", found: entry.kind.rawValue)) }
            let text = try string(fields["key"], name + ".key")
            let type = try string(fields["type"], name + ".type")
            let weight = try signerWeight(fields["weight"], name + ".weight")
            let key: SignerKey
            do { key = try SignerKey(strKey: text) } catch { throw fail(.badKey(name + ".key", TerminalText.escaped(text))) }
            let expectedType = switch key {
            case .ed25519: "ed25519_public_key"
            case .preAuthTransaction: "preauth_tx"
            case .hashX: "sha256_hash"
            case .signedPayload: "ed25519_signed_payload"
            }
            guard type == expectedType else { throw fail(.typeMismatch(name, type: TerminalText.escaped(type), key: text)) }
            guard seen.insert(key).inserted else { throw fail(.repeatedSigner(text)) }
            if key == .ed25519(account) {
                master = weight
            } else if weight > 0 {
                signers.append(Signer(key: key, weight: weight))
            }
        }
        self.account = account
        masterWeight = master
        self.signers = signers
        self.source = source
    }

    /// Several accounts' files, no account given twice (two files could say different things of it).
    public static func read(_ files: [(source: String, bytes: [UInt8])]) throws -> [AccountSigners] {
        var accounts: [AccountSigners] = []
        for file in files {
            let account = try AccountSigners(horizonJSON: file.bytes, source: file.source)
            if let earlier = accounts.first(where: { $0.account == account.account }) {
                throw AccountSignersError(source: file.source, problem: .sameAccountTwice(account.account.accountID, earlier: earlier.source))
            }
            accounts.append(account)
        }
        return accounts
    }

    /// The signers stellar-core checks, in its order: the master key first when its weight is not 0, then the
    /// others (`TransactionFrame::checkSignature`).
    var checkedSigners: [Signer] {
        (masterWeight > 0 ? [Signer(key: .ed25519(account), weight: masterWeight)] : []) + signers
    }

    /// The threshold of a level.
    func threshold(_ level: ThresholdLevel) -> UInt8 {
        switch level {
        case .low: lowThreshold
        case .medium: mediumThreshold
        case .high: highThreshold
        }
    }
}

/// Why an account's JSON cannot be read.
public struct AccountSignersError: KeystoreError, Equatable {
    public enum Problem: Sendable, Equatable {
        case tooLarge
        case notJSON(String)
        case missing(String)
        case wrongType(String, expected: String, found: String)
        case outOfRange(String, most: UInt32)
        case badKey(String, String)
        case idsDiffer
        case tooManySigners(Int)
        case typeMismatch(String, type: String, key: String)
        case repeatedSigner(String)
        case sameAccountTwice(String, earlier: String)
    }

    /// Where the JSON came from, as the caller named it.
    public let source: String
    public let problem: Problem

    public init(source: String, problem: Problem) {
        self.source = source
        self.problem = problem
    }

    public var message: String {
        let what = switch problem {
        case .tooLarge: "it is larger than the \(AccountSigners.maximumSize >> 20) MiB an account's JSON is read up to"
        case .notJSON(let reason): reason
        case .missing(let field): "it has no '\(field)'"
        case .wrongType(let field, let expected, let found): "'\(field)' is \(found), not \(expected)"
        case .outOfRange(let field, let most): "'\(field)' is not between 0 and \(most)"
        case .badKey(let field, let text): "'\(field)' is not a valid key: \(text)"
        case .idsDiffer: "'id' and 'account_id' name different accounts"
        case .tooManySigners(let count): "it lists \(count) signers; an account has at most \(AccountSigners.maximumSigners) with its master key"
        case .typeMismatch(let field, let type, let key): "'\(field).type' is \(type), which is not the kind of key \(key) is"
        case .repeatedSigner(let key): "the signer \(key) is listed twice"
        case .sameAccountTwice(let account, let earlier): "it is \(account) again, already read from \(SummaryText.quotedIfNeeded(earlier))"
        }
        return "The account JSON \(SummaryText.quotedIfNeeded(source)) cannot be used: \(what)."
    }
}
