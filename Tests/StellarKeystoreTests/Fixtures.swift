import Foundation
import StellarKeystore

/// Loads the published test vectors under `fixtures/` at the repository root.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")

    static func load<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: root.appendingPathComponent(name)))
    }

    static func hex(_ text: String) -> [UInt8] {
        guard let bytes = Hex.bytes(text) else { fatalError("bad hex in a fixture: \(text)") }
        return bytes
    }
}

struct Ed25519Vector: Decodable {
    let name: String
    let secretKey: String
    let publicKey: String
    let message: String
    let signature: String
}

struct Ed25519Vectors: Decodable {
    let vectors: [Ed25519Vector]
    static func load() throws -> [Ed25519Vector] { try Fixtures.load(Self.self, "rfc8032-ed25519.json").vectors }
}

struct StrKeyVectors: Decodable {
    struct Valid: Decodable {
        let description: String
        let strkey: String
        let type: String
        let payload: String
        let account: String?
        let id: String?
        let signedPayload: String?
    }
    struct Invalid: Decodable {
        let description: String
        let strkey: String
    }
    let valid: [Valid]
    let invalid: [Invalid]

    static func load() throws -> StrKeyVectors { try Fixtures.load(Self.self, "sep23-strkeys.json") }
}

