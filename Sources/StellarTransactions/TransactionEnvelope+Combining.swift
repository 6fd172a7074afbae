import StellarKeys
import StellarText

/// Copies of one transaction, each signed by some of its signers, made one (`TransactionEnvelope.combining`).
package struct CombinedTransaction: Sendable {
    /// A signature of one of the copies.
    package struct Signature: Sendable, Encodable {
        /// The copy's name, as the caller gave it.
        package let copy: String
        /// 1-based, in that copy.
        package let index: Int
        package let hint: String
        /// The known signer it was checked against (valid), or, for a dropped one, the known signers whose hint it
        /// carries (none of which it is valid for); empty: no known signer has its hint, so it was not checked.
        package let signers: [String]
    }

    /// The envelope: the first copy's bytes, with its signatures, then each other copy's new ones in order.
    package let envelope: [UInt8]
    /// The transaction hash every copy has.
    package let hash: [UInt8]
    /// Every signature kept, in the envelope's order.
    package let kept: [Signature]
    /// Signatures left out: their hint is a known signer's, and they are not a valid signature of the hash.
    package let dropped: [Signature]
    /// Kept without being checked: no known signer has their hint.
    package var notChecked: [Signature] { kept.filter { $0.signers.isEmpty } }

    package var base64: String { Base64.string(envelope) }

    /// One line for each signature left out, and one for each kept unchecked.
    package var notes: [String] {
        dropped.map { "dropped signature \($0.index) of \(SummaryText.quotedIfNeeded($0.copy)) (hint \($0.hint)): not a valid signature of this transaction by \($0.signers.joined(separator: " or "))" }
            + notChecked.map { "not checked: signature \($0.index) of \(SummaryText.quotedIfNeeded($0.copy)) (hint \($0.hint)), no known signer has its hint" }
    }
}

/// Why copies cannot be combined.
package enum CombineError: KeystoreError, Equatable {
    case noCopies
    /// A copy is of another transaction on this network: its hash differs from the first copy's.
    case differentTransaction(copy: String, hash: String, expected: String, feeBump: Bool)
    /// More different signatures than an envelope holds.
    case tooManySignatures(Int)
    /// A copy that is not an envelope: the reason, said of that copy (its name: a file, a line).
    case unreadableCopy(copy: String, TransactionError)

    package var message: String {
        switch self {
        case .noCopies:
            "There are no copies to combine."
        case .differentTransaction(let copy, let hash, let expected, let feeBump):
            "The copy \(SummaryText.quotedIfNeeded(copy)) is another transaction: its hash on this network is \(hash), not \(expected)"
                + (feeBump ? " (a fee bump's hash covers its inner transaction's signatures, so copies must hold the same ones)" : "")
                + "; nothing was combined."
        case .tooManySignatures(let count):
            "The copies hold \(count) different signatures, more than the \(TransactionEnvelope.maximumSignatures) an envelope holds; nothing was combined."
        case .unreadableCopy(let copy, let error):
            "\(TerminalText.escaped(copy)): \(error.message)"
        }
    }
}

extension TransactionEnvelope {
    /// Combines copies of one transaction: every copy must have the first one's hash on `network` (the copy that
    /// does not is named), each signature (hint and bytes) is kept once, in the order met (the first copy's,
    /// then each other copy's new ones), and the envelope is the first copy's bytes with that list of signatures
    /// spliced in (the transaction never re-encoded). A signature whose hint is one of `knownSigners`' is checked
    /// against the hash and left out when it is valid for none of them; the others are kept unchecked.
    /// For a fee bump, the outer signatures are combined (the inner ones are part of what is hashed).
    package static func combining(_ copies: [(name: String, envelope: TransactionEnvelope)], on network: StellarNetwork,
                                 knownSigners: [SignerKey]) throws -> CombinedTransaction {
        guard let first = copies.first else { throw CombineError.noCopies }
        let hash = first.envelope.hash(on: network)
        for copy in copies.dropFirst() {
            let other = copy.envelope.hash(on: network)
            guard other == hash else {
                throw CombineError.differentTransaction(copy: copy.name, hash: Hex.string(other), expected: Hex.string(hash),
                                                        feeBump: first.envelope.kind == .feeBump && copy.envelope.kind == .feeBump)
            }
        }
        var kept: [(hint: [UInt8], signature: [UInt8])] = []
        var keptInfo: [CombinedTransaction.Signature] = []
        var dropped: [CombinedTransaction.Signature] = []
        // Every signature met, kept or dropped, so that each is judged (and said) once.
        var seen: [(hint: [UInt8], signature: [UInt8])] = []
        for copy in copies {
            for (index, signature) in copy.envelope.signatures.enumerated() {
                guard !seen.contains(where: { $0.hint == signature.hint && $0.signature == signature.signature }) else { continue }
                seen.append(signature)
                let candidates = knownSigners.filter { $0.hint == signature.hint }
                let valid = candidates.first { $0.accepts(hint: signature.hint, signature: signature.signature, hash: hash) }
                let info = CombinedTransaction.Signature(copy: copy.name, index: index + 1, hint: Hex.string(signature.hint),
                                                         signers: valid.map { [$0.strKey] } ?? candidates.map(\.strKey))
                if candidates.isEmpty || valid != nil {
                    kept.append(signature)
                    keptInfo.append(info)
                } else {
                    dropped.append(info)
                }
            }
        }
        guard kept.count <= maximumSignatures else { throw CombineError.tooManySignatures(kept.count) }
        return CombinedTransaction(envelope: first.envelope.replacingSignatures(with: kept), hash: hash, kept: keptInfo, dropped: dropped)
    }

    /// The envelope with its signatures (the outer ones, for a fee bump) replaced by `list`: every byte before the
    /// signature count as it is, then the count and each `DecoratedSignature` (a 4-byte hint, then `opaque<64>`:
    /// a length, the bytes, zeros to a multiple of 4; a hash-x preimage can be shorter than 64 bytes).
    func replacingSignatures(with list: [(hint: [UInt8], signature: [UInt8])]) -> [UInt8] {
        precondition(list.count <= Self.maximumSignatures && list.allSatisfy { $0.hint.count == 4 && $0.signature.count <= 64 })
        var out = Array(bytes[0..<signaturesOffset])
        out += Self.bigEndian(UInt32(list.count))
        for (hint, signature) in list {
            out += hint + Self.bigEndian(UInt32(signature.count)) + signature
            out += [UInt8](repeating: 0, count: (4 - signature.count % 4) % 4)
        }
        return out
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// An envelope without the signatures the network would refuse it for (`TransactionEnvelope.trimmed`).
package struct TrimmedTransaction: Sendable {
    package let envelope: [UInt8]
    /// The signatures taken out (each with why, as `SignatureCheck` says).
    package let removed: [SignatureCheck.Signature]
    /// The check of the envelope as it was.
    package let check: SignatureCheck

    package var base64: String { Base64.string(envelope) }

    /// One line for each signature taken out: whose key made it, and why.
    package var notes: [String] { Self.notes(removed) }

    /// One line for each signature in `removed`: whose key made it, and why it was taken out.
    package static func notes(_ removed: [SignatureCheck.Signature]) -> [String] {
        removed.map { signature in
            "removed signature \(signature.index) (hint \(signature.hint))"
                + (signature.roles.isEmpty ? ": accepted by no account this transaction needs"
                   : " by " + SignatureCheck.signers(signature.roles) + ": not used, the threshold" + SignatureCheck.of(signature.acceptedBy)
                        + " met before it was reached")
        }
    }
}

/// Why the extra signatures of an envelope cannot be taken out.
public enum TrimError: KeystoreError, Equatable {
    /// Some account the transaction needs has no JSON: which signatures are extra cannot be told.
    case accountsUnknown([String])
    /// A fee bump's inner signatures are extra; they are part of what the outer signatures sign.
    case innerSignaturesExtra([Int])
    /// The signature `key` is about to add would be extra, and taken out as soon as it is made: no needed account
    /// takes it, or the accounts it is a signer of (`roles`) meet their thresholds without it.
    case newSignatureExtra(key: String, roles: [SignatureCheck.Role])

    public var message: String {
        switch self {
        case .accountsUnknown(let accounts):
            "Which signatures are extra cannot be told without the signers of " + accounts.joined(separator: ", ") + "; nothing was removed."
        case .innerSignaturesExtra(let indexes):
            "The inner transaction's signature" + (indexes.count == 1 ? " \(indexes[0]) is" : "s \(indexes.map(String.init).joined(separator: ", ")) are")
                + " extra; removing one changes the fee bump's hash, so the fee bump must be made again from an inner transaction without it."
        case .newSignatureExtra(let key, let roles):
            "\(key)'s signature would be removed as extra: " + SignatureCheck.whyExtra(key, roles: roles) + "; nothing was signed."
        }
    }
}

extension TransactionEnvelope {
    /// The envelope without the signatures no check of the network would take (`SignatureCheck.unused`, which
    /// would make it refuse the transaction with `tx_bad_auth_extra`); every other byte as it is. Taking them out
    /// leaves every check's result as it was: a check never took them. Needs the signers of every account the
    /// transaction needs.
    package func trimmed(on network: StellarNetwork, accounts: [AccountSigners]) throws -> TrimmedTransaction {
        let check = signatureCheck(on: network, accounts: accounts)
        try check.checkTrimmable()
        let unused = check.unused
        let keep = signatures.enumerated().filter { index, _ in !unused.contains { $0.index == index + 1 } }.map(\.element)
        return TrimmedTransaction(envelope: unused.isEmpty ? bytes : replacingSignatures(with: keep), removed: unused, check: check)
    }
}

extension SignedTransaction {
    /// The signed envelope without the signatures no check of the network would take
    /// (`TransactionEnvelope.trimmed(on:accounts:)`): the same transaction, hash and signature.
    package func trimmed(on network: StellarNetwork, accounts: [AccountSigners]) throws -> (signed: SignedTransaction, trimmed: TrimmedTransaction) {
        let trimmed = try TransactionEnvelope(xdr: envelope).trimmed(on: network, accounts: accounts)
        return (SignedTransaction(envelope: trimmed.envelope, hash: hash, wasAlreadySigned: wasAlreadySigned, signature: signature,
                                  removed: trimmed.removed), trimmed)
    }
}

extension SignatureCheck {
    /// Throws unless the extra signatures of the envelope can be taken out: every needed account known, for a
    /// fee bump none of the inner signatures extra, and the signature about to be added (`newSignatureBy`) not
    /// extra itself: trimming would take it out again, so it is refused before it is made.
    package func checkTrimmable() throws {
        guard isComplete else {
            var unknown: [String] = []
            for account in accounts where !account.isKnown && !unknown.contains(account.account) { unknown.append(account.account) }
            throw TrimError.accountsUnknown(unknown)
        }
        let inner = unused.filter { $0.part == .inner }
        guard inner.isEmpty else { throw TrimError.innerSignaturesExtra(inner.map(\.index)) }
        if let key = newSignatureBy, isNewSignatureUsed == false { throw TrimError.newSignatureExtra(key: key, roles: signingKeyRoles) }
    }
}
