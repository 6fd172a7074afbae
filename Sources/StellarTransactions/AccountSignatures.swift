import StellarKeys

// A Stellar account's signature of a Soroban authorization, as the host reads it at rs-soroban-env
// 03a578a5ff84b853ee0826ed178f54620eab45ff, soroban-env-host/src/native_contract/account_contract.rs
// (`check_account_authentication`): the credential's signature SCVal is a vector of `AccountEd25519Signature`, a
// `#[contracttype]` struct, so an SCV_MAP keyed by its field names in the host's order:
//
//   SCV_VEC [ SCV_MAP { public_key: SCV_BYTES (32), signature: SCV_BYTES (64) }, … ]
//
// at most `MAX_ACCOUNT_SIGNATURES` (20) of them, sorted by public key with none twice ("public keys are not
// ordered"), each key a signer of the account (weight above 0), their weights together at least the account's
// medium threshold. So several of an account's signers sign one entry by each adding their map in its place.

/// The signatures in an account's credential (`Vec[Map{public_key, signature}]`, the account convention of
/// stellar-sdk and stellar-cli), read strictly, and one more added in the order the host requires with every
/// other signer's kept.
package enum AccountSignatures {
    /// `MAX_ACCOUNT_SIGNATURES`: the host refuses a longer vector.
    package static let maximumSignatures = 20

    /// One signer's map.
    package struct Signature: Sendable, Equatable {
        /// The 32-byte Ed25519 public key.
        package let key: [UInt8]
        package let signature: [UInt8]

        package init(key: [UInt8], signature: [UInt8]) {
            self.key = key
            self.signature = signature
        }
    }

    /// The signatures `bytes` (a credential's signature SCVal) holds, in order: none for SCV_VOID (nothing signed
    /// yet). Refused, as the host would refuse them: anything but a vector of maps with exactly the two fields, a
    /// key that is not 32 bytes or a signature that is not 64, keys out of order or twice, more than
    /// `maximumSignatures`, bytes after the value. No recursion: the shape is fixed.
    package static func read(_ bytes: [UInt8]) throws -> [Signature] {
        var r = XDRReader(bytes)
        func field(_ name: String, size: Int) throws -> [UInt8] {
            try r.fieldName(name)
            try r.scValType(13, "\(name) as SCV_BYTES")
            let at = r.offset
            let value = try r.variableOpaque(max: size)
            try XDRReader.expect(value.count == size, at: at, "\(size) bytes of \(name), not \(value.count)")
            return value
        }
        let at = r.offset
        switch try r.int32() {
        case 1:  // SCV_VOID
            try XDRReader.expect(r.remaining == 0, at: r.offset, "the end of the signature")
            return []
        case 16: break
        default: throw XDRError(offset: at, expected: "an account's signatures (SCV_VEC of maps) or SCV_VOID")
        }
        try r.present("a vector of signatures")
        let countAt = r.offset
        let count = Int(try r.uint32())
        try XDRReader.expect(count <= maximumSignatures, at: countAt, "at most \(maximumSignatures) signatures, not \(count)")
        var signatures: [Signature] = []
        for _ in 0..<count {
            try r.scValType(17, "a signature (SCV_MAP)")
            try r.present("a signature map")
            let fieldsAt = r.offset
            try XDRReader.expect(try r.uint32() == 2, at: fieldsAt, "exactly two fields, public_key and signature")
            let keyAt = r.offset
            let key = try field("public_key", size: 32)
            if let previous = signatures.last {
                try XDRReader.expect(previous.key.lexicographicallyPrecedes(key), at: keyAt, "public keys in increasing order, none twice")
            }
            signatures.append(Signature(key: key, signature: try field("signature", size: 64)))
        }
        try XDRReader.expect(r.remaining == 0, at: r.offset, "the end of the signatures, not \(r.remaining) more bytes")
        return signatures
    }

    /// `existing` (a credential's signature SCVal, read as `read(_:)` does) with `signature` by `key` in its
    /// place: after the keys below it and before those above, replacing this key's own (made for this same
    /// payload, or for another expiration that no other signature commits to: the caller checks that).
    package static func adding(signature: [UInt8], by key: PublicKey, to existing: [UInt8]) throws -> [UInt8] {
        var signatures = try read(existing).filter { $0.key != key.rawRepresentation }
        guard signatures.count < maximumSignatures else {
            throw XDRError(offset: 0, expected: "room for one more signature (at most \(maximumSignatures))")
        }
        let place = signatures.firstIndex { key.rawRepresentation.lexicographicallyPrecedes($0.key) } ?? signatures.count
        signatures.insert(Signature(key: key.rawRepresentation, signature: signature), at: place)
        return encoded(signatures)
    }

    /// `SCV_VEC [SCV_MAP {SCV_SYMBOL "public_key": SCV_BYTES key, SCV_SYMBOL "signature": SCV_BYTES signature}, …]`.
    package static func encoded(_ signatures: [Signature]) -> [UInt8] {
        [0, 0, 0, 16, 0, 0, 0, 1] + AuthorizationEntry.bigEndian(UInt32(signatures.count))  // SCV_VEC, present, count
            + signatures.flatMap { signature in
                [0, 0, 0, 17, 0, 0, 0, 1, 0, 0, 0, 2]  // SCV_MAP, present, two entries, keys in the host's order
                    + SmartAccountCredential.symbol("public_key") + SmartAccountCredential.bytes(signature.key)
                    + SmartAccountCredential.symbol("signature") + SmartAccountCredential.bytes(signature.signature)
            }
    }
}
