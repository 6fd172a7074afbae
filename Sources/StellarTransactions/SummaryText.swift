import FoundationEssentials
import StellarKeys
import StellarText

/// How `TransactionSummary` shows each XDR value: StrKeys for keys and addresses, `CODE:ISSUER` for assets,
/// amounts with exactly 7 decimals, ISO 8601 times, and text from the envelope quoted so that it shows what it is.
enum SummaryText {
    static func strKey(_ kind: StrKey.Kind, _ payload: [UInt8]) -> String {
        (try? StrKey(kind: kind, payload: payload).stringValue) ?? "(invalid \(kind.rawValue) \(Hex.string(payload)))"
    }

    static func account(_ key: XDR.PublicKey) -> String {
        guard case .ed25519(let raw) = key else { return "?" }
        return strKey(.accountID, raw.value)
    }

    static func muxed(_ account: XDR.MuxedAccount) -> String {
        switch account {
        case .ed25519(let raw): strKey(.accountID, raw.value)
        case .med25519(let muxed): muxedAccount(muxed.ed25519.value, id: muxed.id)
        }
    }

    /// `M…`, through the StrKey code that builds muxed accounts everywhere else.
    static func muxedAccount(_ ed25519: [UInt8], id: UInt64) -> String {
        (try? PublicKey(rawRepresentation: ed25519)).map { StrKey.muxedAccount($0, id: id).stringValue }
            ?? "(invalid muxed account \(Hex.string(ed25519)))"
    }

    /// Stroops as XLM (or asset units): 7 decimals, exactly.
    static func amount(_ stroops: Int64) -> String {
        let magnitude = stroops.magnitude
        let fraction = String(magnitude % 10_000_000)
        return (stroops < 0 ? "-" : "") + "\(magnitude / 10_000_000)." + String(repeating: "0", count: 7 - fraction.count) + fraction
    }

    /// Text from the envelope (a memo, a data name, a home domain, a function name, a passphrase), quoted, in a
    /// form no two different byte strings share, so that a summary never shows two transactions alike:
    ///
    /// - printable ASCII is shown as is, with `\` and `"` escaped (`\\`, `\"`), so that nothing inside the
    ///   quotes can pass for an escape or end them;
    /// - anything else is followed by its bytes in hex, since other scripts hold look-alikes (Cyrillic `А`) and
    ///   invalid UTF-8 is shown as U+FFFD whatever it was;
    /// - and is never printed raw if a terminal would not show it as itself: control characters (`\xNN`),
    ///   format characters (bidi controls, zero-width and word joiners, the soft hyphen, tags), separators other
    ///   than the space, combining marks and variation selectors, private-use, unassigned and other invisible
    ///   (default-ignorable) code points are shown as `\u{XXXX}`.
    static func quoted(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "\"" + visible(String(decoding: bytes, as: UTF8.self)) + "\""
        }
        return "\"" + visible(String(decoding: bytes, as: UTF8.self)) + "\" (hex " + Hex.string(bytes) + ")"
    }

    static func quoted(_ text: String) -> String { quoted(Array(text.utf8)) }

    /// A name or a path as a word of its own when it is one (ASCII letters, digits and `. _ - / @ + :`, none of
    /// which can end a quote, start an escape or pass for another character), and `quoted` otherwise: an identity
    /// name stays `alice`, and a name or path with anything else in it is shown as every other text from outside.
    static func quotedIfNeeded(_ text: String) -> String {
        let plain = !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || Array("._-/@+:".utf8).contains(byte)
        }
        return plain ? text : quoted(text)
    }

    /// Each character as every message shows text from outside (`TerminalText.append(_:to:)`), with `\\` and `"`
    /// escaped so that nothing inside the quotes can pass for an escape or end them.
    private static func visible(_ string: String) -> String {
        var shown = ""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\\": shown += "\\\\"
            case "\"": shown += "\\\""
            default: TerminalText.append(scalar, to: &shown)
            }
        }
        return shown
    }

    /// An asset code by the network's rules: letters and digits, NUL padding at the end only, 1 to 4 characters
    /// in a 4-byte code and 5 to 12 in a 12-byte one (so that `USDC` has one form). Any other is shown as
    /// invalid, with its bytes: `US\0D` is not `US`.
    static func code(_ bytes: [UInt8]) -> String {
        let length = bytes.firstIndex(of: 0) ?? bytes.count
        let characters = bytes[..<length]
        let lengths = bytes.count == 4 ? 1...4 : 5...12
        let isValid = lengths.contains(length) && bytes[length...].allSatisfy { $0 == 0 }
            && characters.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }
        return isValid ? String(decoding: characters, as: UTF8.self) : "(invalid asset code \(Hex.string(bytes)))"
    }

    static func asset(_ asset: XDR.Asset) -> String {
        switch asset {
        case .native: "XLM"
        case .alphaNum4(let credit): self.credit(credit.assetCode.value, credit.issuer)
        case .alphaNum12(let credit): self.credit(credit.assetCode.value, credit.issuer)
        }
    }

    /// A credit asset as `CODE:ISSUER`.
    static func credit(_ assetCode: [UInt8], _ issuer: XDR.AccountID) -> String {
        code(assetCode) + ":" + account(issuer)
    }

    static func price(_ price: XDR.Price) -> String {
        guard price.d != 0 else { return "\(price.n)/0 (invalid)" }
        return "\(price.n)/\(price.d) (\(Double(price.n) / Double(price.d)))"
    }

    static func time(_ seconds: UInt64) -> String {
        guard seconds <= 253_402_300_799 else { return "\(seconds) s after 1970" }
        return Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601)
    }

    static func conditions(_ conditions: XDR.Preconditions) -> [String] {
        func bounds(_ time: XDR.TimeBounds) -> String {
            "valid " + (time.minTime == 0 ? "from any time" : "from \(Self.time(time.minTime))")
                + (time.maxTime == 0 ? " with no end" : " until \(Self.time(time.maxTime))")
        }
        switch conditions {
        case .none: return []
        case .timeBounds(let time): return [bounds(time)]
        case .v2(let v2):
            var all: [String] = []
            if let time = v2.timeBounds { all.append(bounds(time)) }
            if let ledgers = v2.ledgerBounds {
                all.append("ledgers from \(ledgers.minLedger)" + (ledgers.maxLedger == 0 ? " with no end" : " until \(ledgers.maxLedger)"))
            }
            if let minimum = v2.minSeqNum { all.append("source sequence at least \(minimum)") }
            if v2.minSeqAge > 0 { all.append("source sequence at least \(v2.minSeqAge) s old") }
            if v2.minSeqLedgerGap > 0 { all.append("source sequence at least \(v2.minSeqLedgerGap) ledgers old") }
            for signer in v2.extraSigners { all.append("also signed by \(signerKey(signer))") }
            return all
        }
    }

    static func memo(_ memo: XDR.Memo) -> String? {
        switch memo {
        case .none: nil
        case .text(let bytes): "text " + quoted(bytes)
        case .id(let id): "id \(id)"
        case .hash(let hash): "hash \(Hex.string(hash.value))"
        case .retHash(let hash): "return \(Hex.string(hash.value))"
        }
    }

    static func signerKey(_ key: XDR.SignerKey) -> String {
        switch key {
        case .ed25519(let raw): strKey(.accountID, raw.value)
        case .preAuthTx(let hash): strKey(.preAuthTx, hash.value)
        case .hashX(let hash): strKey(.sha256Hash, hash.value)
        case .ed25519SignedPayload(let signed):
            (try? PublicKey(rawRepresentation: signed.ed25519.value)).flatMap {
                try? StrKey.signedPayload(signer: $0, payload: signed.payload).stringValue
            } ?? "(invalid signed payload)"
        }
    }

    static func balance(_ id: XDR.ClaimableBalanceID) -> String {
        guard case .v0(let hash) = id else { return "?" }
        return strKey(.claimableBalance, [0] + hash.value)
    }

    static func pool(_ id: XDR.PoolID) -> String { strKey(.liquidityPool, id.value) }

    static func address(_ address: XDR.SCAddress) -> String {
        switch address {
        case .accountId(let key): account(key)
        case .contractId(let id): strKey(.contract, id.value)
        case .muxedAccount(let muxed): muxedAccount(muxed.ed25519.value, id: muxed.id)
        case .claimableBalanceId(let id): balance(id)
        case .liquidityPoolId(let id): pool(id)
        }
    }

    static let accountFlags = [(1, "AUTH_REQUIRED"), (2, "AUTH_REVOCABLE"), (4, "AUTH_IMMUTABLE"), (8, "AUTH_CLAWBACK_ENABLED")]
    static let trustLineFlags = [(1, "AUTHORIZED"), (2, "AUTHORIZED_TO_MAINTAIN_LIABILITIES"), (4, "TRUSTLINE_CLAWBACK_ENABLED")]

    static func flags(_ value: UInt32, _ names: [(Int, String)]) -> String {
        let named = names.filter { value & UInt32($0.0) != 0 }.map(\.1)
        let unknown = value & ~names.reduce(UInt32(0)) { $0 | UInt32($1.0) }
        return "\(value)" + (named.isEmpty && unknown == 0 ? "" : " (" + (named + (unknown == 0 ? [] : ["unknown \(unknown)"])).joined(separator: ", ") + ")")
    }

    /// Offer 0 makes a new offer; an amount of 0 deletes the offer named.
    static func offer(_ id: Int64, amount: Int64) -> String {
        id == 0 ? "new" : amount == 0 ? "\(id) (deleted)" : String(id)
    }

    static func path(_ assets: [XDR.Asset]) -> String {
        assets.isEmpty ? "direct" : assets.map(asset).joined(separator: " → ")
    }
}
