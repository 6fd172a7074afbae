import Foundation
import StellarKeys

/// Loads the published test vectors under `fixtures/` at the repository root, for every test target.
public enum Fixtures {
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")

    public static func load<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: root.appendingPathComponent(name)))
    }

    public static func hex(_ text: String) -> [UInt8] {
        guard let bytes = Hex.bytes(text) else { fatalError("bad hex in a fixture: \(text)") }
        return bytes
    }
}

public struct Ed25519Vector: Decodable, Sendable {
    public let name: String
    public let secretKey: String
    public let publicKey: String
    public let message: String
    public let signature: String
}

public struct Ed25519Vectors: Decodable {
    public let vectors: [Ed25519Vector]
    public static func load() throws -> [Ed25519Vector] { try Fixtures.load(Self.self, "rfc8032-ed25519.json").vectors }
}

public struct StrKeyVectors: Decodable, Sendable {
    public struct Valid: Decodable, Sendable {
        public let description: String
        public let strkey: String
        public let type: String
        public let payload: String
        public let account: String?
        public let id: String?
        public let signedPayload: String?
    }
    public struct Invalid: Decodable, Sendable {
        public let description: String
        public let strkey: String
    }
    public let valid: [Valid]
    public let invalid: [Invalid]

    public static func load() throws -> StrKeyVectors { try Fixtures.load(Self.self, "sep23-strkeys.json") }
}


/// A fresh directory under the system's temporary one, removed when the test ends.
public final class TemporaryDirectory {
    public let path: String
    public init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-test-\(UUID().uuidString)").path
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func contents() -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            files[name] = Array((try? Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))) ?? Data())
        }
        return files
    }
}

/// A clock the tests move by hand, so that waits of an hour take no time.
public final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_800_000_000)
    public init() {}
    public var now: Date { lock.withLock { current } }
    public func advance(_ seconds: Double) { lock.withLock { current += seconds } }
}

/// `text` in guarded memory, as a secret read from a terminal would be.
public func secure(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

public func text(_ bytes: SecureBytes) -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

/// fixtures/web-auth-challenges.json (fixtures/make-web-auth-challenges.py, stellar-sdk): SEP-10 challenges, the
/// honest one and one per rule a client checks, with what the client expected and the rule that must refuse it.
public struct WebAuthChallengeFixtures: Decodable, Sendable {
    public struct Case: Decodable, Sendable {
        public let name: String
        public let rule: String?
        public let challenge: String
        public let networkPassphrase: String
        public let now: UInt64
        public let serverKey: String
        public let homeDomain: String
        public let webAuthDomain: String
        public let network: String
        public let clientAccount: String
        public let clientDomain: String?
        public let clientDomainKey: String?
        /// For a case that passes: the challenge signed by the client (and client-domain) key, by stellar-sdk.
        public let signed: String?
    }
    public let clientSeed: String
    public let clientDomainSeed: String
    public let cases: [Case]
    public static func load() throws -> WebAuthChallengeFixtures { try Fixtures.load(Self.self, "web-auth-challenges.json") }
}

/// SEP-45 challenges made with stellar-sdk (fixtures/make-contract-web-auth-challenges.py).
public struct ContractWebAuthChallengeFixtures: Decodable, Sendable {
    public struct Case: Decodable, Sendable {
        public let name: String
        public let rule: String?
        public let challenge: String
        public let networkPassphrase: String
        public let serverKey: String
        public let webAuthContract: String
        public let homeDomain: String
        public let webAuthDomain: String
        public let network: String
        public let clientAccount: String
        public let clientDomain: String?
        public let clientDomainKey: String?
        /// For a case that passes: the entries with the account's (and the client domain's) signed by stellar-sdk,
        /// for a contract account reading the account convention, and for an OpenZeppelin smart account.
        public let signed: Signed?
        public let signedSmartAccount: Signed?
    }
    /// The whole list signed, and the signed entries alone.
    public struct Signed: Decodable, Sendable {
        public let entries: String
        public let client: String
        public let clientDomain: String?
    }
    public let clientSeed: String
    public let clientDomainSeed: String
    /// The smart account's Ed25519 verifier contract and the context rules of `signedSmartAccount`.
    public let verifier: String
    public let contextRuleIDs: [UInt32]
    public let nonce: String
    public let expirationLedger: UInt32
    public let cases: [Case]
    public static func load() throws -> ContractWebAuthChallengeFixtures { try Fixtures.load(Self.self, "contract-web-auth-challenges.json") }
}

/// SEP-45 challenges made by stellar-sdk's own build_challenge_authorization_entries, unchanged, which leave the
/// client's entries at expiration ledger 0 (fixtures/make-sep45-stock-challenges.py).
public struct SEP45StockChallengeFixtures: Decodable, Sendable {
    public struct Case: Decodable, Sendable {
        public let name, challenge, networkPassphrase, serverKey, webAuthContract, homeDomain, webAuthDomain, network, clientAccount: String
        public let clientDomain, clientDomainKey: String?
        /// The RPC's latest ledger, the server's entry's expiration (latest + 180), and a ledger a caller gives.
        public let latestLedger, serverExpirationLedger, givenLedger: UInt32
        /// The whole list with the client's entries signed by stellar-sdk through `serverExpirationLedger`, and
        /// through `givenLedger`.
        public let signed, signedAtGiven: String
    }
    public let clientSeed: String
    public let clientDomainSeed: String
    public let nonce: String
    public let cases: [Case]
    public static func load() throws -> SEP45StockChallengeFixtures { try Fixtures.load(Self.self, "sep45-stock-challenges.json") }
}

/// fixtures/sep7.json: SEP-7 transaction requests made and signed by stellar-sdk (fixtures/make-sep7.py).
public struct SEP7Fixtures: Decodable, Sendable {
    public struct Case: Decodable, Sendable {
        public let name, uri, expect, envelope, networkPassphrase, signedEnvelope: String
        public let namesNetwork, signed: Bool
        public let msg, callback, pubkey, originDomain, chain, payload: String?
    }
    public struct Made: Decodable, Sendable {
        public let name, uri, envelope, networkPassphrase: String
        public let msg, callback, pubkey, originDomain, signature: String?
    }
    /// The origin domain's URI_REQUEST_SIGNING_KEY, another key, and the golden vault's account.
    public let originKey, wrongKey, signer: String
    public let cases: [Case]
    public let made: [Made]

    public static func load() throws -> SEP7Fixtures { try Fixtures.load(Self.self, "sep7.json") }
}
