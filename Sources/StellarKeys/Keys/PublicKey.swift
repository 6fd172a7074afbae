/// An Ed25519 public key: a Stellar account (`G…`).
public struct PublicKey: Hashable, Sendable {
    public let rawRepresentation: [UInt8]

    public init(rawRepresentation: [UInt8]) throws {
        guard rawRepresentation.count == Sodium.signPublicKeyBytes else {
            throw KeyError.invalidLength(expected: Sodium.signPublicKeyBytes, found: rawRepresentation.count)
        }
        self.rawRepresentation = rawRepresentation
    }

    /// Reads an account ID (`G…`).
    public init(accountID: String) throws {
        let strKey = try StrKey(accountID, as: .accountID)
        rawRepresentation = strKey.payload
    }

    /// The key that signs for an address: an account ID (`G…`), or a muxed account (`M…`, SEP-23), whose
    /// signatures are made by its inner ed25519 key (as `stellar message verify` accepts it).
    public init(signerOf address: String) throws {
        let strKey = try StrKey(address)
        guard strKey.kind == .accountID || strKey.kind == .muxedAccount, let key = strKey.ed25519PublicKey else {
            throw StrKeyError.wrongKind(expected: .accountID, found: strKey.kind)
        }
        self = key
    }

    /// The account ID (`G…`).
    public var accountID: String {
        try! StrKey(kind: .accountID, payload: rawRepresentation).stringValue
    }

    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        message.withUnsafeBytes { isValidSignature(signature, for: $0) }
    }

    public func isValidSignature(_ signature: [UInt8], for message: UnsafeRawBufferPointer) -> Bool {
        signature.withUnsafeBytes { signature in
            rawRepresentation.withUnsafeBytes { key in
                Sodium.isValidSignature(signature, message: message, publicKey: key)
            }
        }
    }
}

extension PublicKey: CustomStringConvertible {
    public var description: String { accountID }
}

public enum KeyError: KeystoreError, Equatable {
    case invalidLength(expected: Int, found: Int)

    public var message: String {
        switch self {
        case .invalidLength(let expected, let found):
            "An Ed25519 key is \(expected) bytes, not \(found)."
        }
    }

}
