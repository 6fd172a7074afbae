#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StellarKeys

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

    private static func visible(_ string: String) -> String {
        var shown = ""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\\": shown += "\\\\"
            case "\"": shown += "\\\""
            case " ": shown += " "
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                shown += TerminalText.escaped(String(scalar), limit: nil)
            case _ where isHidden(scalar):
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// Whether a terminal would show `scalar` as something other than itself: nothing at all, a change to its
    /// neighbours, or a space that is not the space.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isDefaultIgnorableCodePoint || properties.isVariationSelector { return true }
        switch properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .privateUse, .unassigned, .surrogate,
             .nonspacingMark, .spacingMark, .enclosingMark, .control:
            return true
        default:
            return false
        }
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

    static func operation(_ operation: XDR.Operation) -> TransactionSummary.Operation {
        var fields: [TransactionSummary.Field] = []
        func add(_ name: String, _ value: TransactionSummary.Value) { fields.append(.init(name: name, value: value)) }
        func add(_ name: String, _ value: String) { add(name, .plain(value)) }
        let type: String
        switch operation.body {
        case .createAccountOp(let op):
            type = "CREATE_ACCOUNT"
            add("destination", account(op.destination))
            add("starting balance", amount(op.startingBalance) + " XLM")
        case .paymentOp(let op):
            type = "PAYMENT"
            add("destination", muxed(op.destination))
            add("asset", asset(op.asset))
            add("amount", amount(op.amount))
        case .pathPaymentStrictReceiveOp(let op):
            type = "PATH_PAYMENT_STRICT_RECEIVE"
            add("destination", muxed(op.destination))
            add("sends at most", amount(op.sendMax) + " " + asset(op.sendAsset))
            add("receives", amount(op.destAmount) + " " + asset(op.destAsset))
            add("path", path(op.path))
        case .pathPaymentStrictSendOp(let op):
            type = "PATH_PAYMENT_STRICT_SEND"
            add("destination", muxed(op.destination))
            add("sends", amount(op.sendAmount) + " " + asset(op.sendAsset))
            add("receives at least", amount(op.destMin) + " " + asset(op.destAsset))
            add("path", path(op.path))
        case .manageSellOfferOp(let op):
            type = "MANAGE_SELL_OFFER"
            add("selling", amount(op.amount) + " " + asset(op.selling))
            add("buying", asset(op.buying))
            add("price", price(op.price))
            add("offer", offer(op.offerID, amount: op.amount))
        case .manageBuyOfferOp(let op):
            type = "MANAGE_BUY_OFFER"
            add("buying", amount(op.buyAmount) + " " + asset(op.buying))
            add("selling", asset(op.selling))
            add("price", price(op.price))
            add("offer", offer(op.offerID, amount: op.buyAmount))
        case .createPassiveSellOfferOp(let op):
            type = "CREATE_PASSIVE_SELL_OFFER"
            add("selling", amount(op.amount) + " " + asset(op.selling))
            add("buying", asset(op.buying))
            add("price", price(op.price))
        case .setOptionsOp(let op):
            type = "SET_OPTIONS"
            if let value = op.inflationDest { add("inflation dest", account(value)) }
            if let value = op.clearFlags { add("clear flags", flags(value, accountFlags)) }
            if let value = op.setFlags { add("set flags", flags(value, accountFlags)) }
            if let value = op.masterWeight { add("master weight", String(value)) }
            if let value = op.lowThreshold { add("low threshold", String(value)) }
            if let value = op.medThreshold { add("medium threshold", String(value)) }
            if let value = op.highThreshold { add("high threshold", String(value)) }
            if let value = op.homeDomain { add("home domain", .text(value.value)) }
            if let signer = op.signer {
                add("signer", signerKey(signer.key) + (signer.weight == 0 ? " removed (weight 0)" : " with weight \(signer.weight)"))
            }
            if fields.isEmpty { add("changes", "nothing") }
        case .changeTrustOp(let op):
            type = "CHANGE_TRUST"
            switch op.line {
            case .native: add("asset", "XLM")
            case .alphaNum4(let asset): add("asset", credit(asset.assetCode.value, asset.issuer))
            case .alphaNum12(let asset): add("asset", credit(asset.assetCode.value, asset.issuer))
            case .liquidityPool(.constantProduct(let pool)):
                add("pool", asset(pool.assetA) + " / " + asset(pool.assetB) + ", fee \(pool.fee) basis points")
            }
            add("limit", op.limit == 0 ? "0 (removes the trustline)" : op.limit == Int64.max ? "maximum" : amount(op.limit))
        case .allowTrustOp(let op):
            type = "ALLOW_TRUST"
            add("trustor", account(op.trustor))
            switch op.asset {
            case .assetCode4(let value): add("asset code", code(value.value))
            case .assetCode12(let value): add("asset code", code(value.value))
            }
            add("authorize", flags(op.authorize, trustLineFlags))
        case .destination(let destination):
            type = "ACCOUNT_MERGE"
            add("merge into", muxed(destination))
        case .inflation:
            type = "INFLATION"
        case .manageDataOp(let op):
            type = "MANAGE_DATA"
            add("name", .text(op.dataName.value))
            if let value = op.dataValue?.value {
                add("value", "\(value.count) bytes: \(Hex.string(value))" + (value.allSatisfy { $0 >= 0x20 && $0 < 0x7F } ? " (\(quoted(value)))" : ""))
            } else {
                add("value", "deleted")
            }
        case .bumpSequenceOp(let op):
            type = "BUMP_SEQUENCE"
            add("bump to", String(op.bumpTo))
        case .createClaimableBalanceOp(let op):
            type = "CREATE_CLAIMABLE_BALANCE"
            add("amount", amount(op.amount) + " " + asset(op.asset))
            for case .v0(let claimant) in op.claimants {
                add("claimant", account(claimant.destination))
            }
        case .claimClaimableBalanceOp(let op):
            type = "CLAIM_CLAIMABLE_BALANCE"
            add("balance", balance(op.balanceID))
        case .beginSponsoringFutureReservesOp(let op):
            type = "BEGIN_SPONSORING_FUTURE_RESERVES"
            add("sponsored", account(op.sponsoredID))
        case .endSponsoringFutureReserves:
            type = "END_SPONSORING_FUTURE_RESERVES"
        case .revokeSponsorshipOp(let op):
            type = "REVOKE_SPONSORSHIP"
            switch op {
            case .ledgerKey(let key): add("of", ledgerKey(key))
            case .signer(let signer): add("of signer", signerKey(signer.signerKey) + " on " + account(signer.accountID))
            }
        case .clawbackOp(let op):
            type = "CLAWBACK"
            add("from", muxed(op.from))
            add("amount", amount(op.amount) + " " + asset(op.asset))
        case .clawbackClaimableBalanceOp(let op):
            type = "CLAWBACK_CLAIMABLE_BALANCE"
            add("balance", balance(op.balanceID))
        case .setTrustLineFlagsOp(let op):
            type = "SET_TRUST_LINE_FLAGS"
            add("trustor", account(op.trustor))
            add("asset", asset(op.asset))
            add("clear flags", flags(op.clearFlags, trustLineFlags))
            add("set flags", flags(op.setFlags, trustLineFlags))
        case .liquidityPoolDepositOp(let op):
            type = "LIQUIDITY_POOL_DEPOSIT"
            add("pool", pool(op.liquidityPoolID))
            add("at most", amount(op.maxAmountA) + " A and " + amount(op.maxAmountB) + " B")
            add("price between", price(op.minPrice) + " and " + price(op.maxPrice))
        case .liquidityPoolWithdrawOp(let op):
            type = "LIQUIDITY_POOL_WITHDRAW"
            add("pool", pool(op.liquidityPoolID))
            add("shares", amount(op.amount))
            add("at least", amount(op.minAmountA) + " A and " + amount(op.minAmountB) + " B")
        case .invokeHostFunctionOp(let op):
            type = "INVOKE_HOST_FUNCTION"
            switch op.hostFunction {
            case .invokeContract(let call):
                add("contract", address(call.contractAddress))
                add("function", .text(call.functionName.value))
                add("arguments", .count(call.args.count))
            case .createContract(let create):
                add("creates", contract(create.contractIDPreimage, create.executable))
            case .createContractV2(let create):
                add("creates", contract(create.contractIDPreimage, create.executable))
                add("constructor args", .count(create.constructorArgs.count))
            case .wasm(let wasm):
                add("uploads", "contract code of \(wasm.count) bytes, SHA-256 \(Hex.string(wasm.withUnsafeBytes { Sodium.sha256($0) }))")
            }
            add("authorizations", .count(op.auth.count))
        case .extendFootprintTTLOp(let op):
            type = "EXTEND_FOOTPRINT_TTL"
            add("extend to", "\(op.extendTo) ledgers")
        case .restoreFootprintOp:
            type = "RESTORE_FOOTPRINT"
        }
        // The XDR name in lower case, as Horizon and stellar-sdk's JSON name operations, in text and JSON alike.
        return .init(type: type.lowercased(), source: operation.sourceAccount.map(muxed), fields: fields)
    }

    static func contract(_ preimage: XDR.ContractIDPreimage, _ executable: XDR.ContractExecutable) -> String {
        let code: String
        switch executable {
        case .wasmHash(let hash): code = "Wasm \(Hex.string(hash.value))"
        case .stellarAsset: code = "the Stellar asset contract"
        case .externalRef: code = "an external executable"
        }
        switch preimage {
        case .fromAddress(let from): return "a contract of \(code), deployed by \(address(from.address))"
        case .fromAsset(let asset): return "\(code) for \(Self.asset(asset))"
        }
    }

    static func ledgerKey(_ key: XDR.LedgerKey) -> String {
        switch key {
        case .account(let entry): "account " + account(entry.accountID)
        case .trustLine(let entry):
            "trustline of " + account(entry.accountID) + " for " + {
                switch entry.asset {
                case .native: "XLM"
                case .alphaNum4(let asset): credit(asset.assetCode.value, asset.issuer)
                case .alphaNum12(let asset): credit(asset.assetCode.value, asset.issuer)
                case .liquidityPoolID(let id): pool(id)
                }
            }()
        case .offer(let entry): "offer \(entry.offerID) of " + account(entry.sellerID)
        case .data(let entry): "data \(quoted(entry.dataName.value)) of " + account(entry.accountID)
        case .claimableBalance(let entry): "claimable balance " + balance(entry.balanceID)
        case .liquidityPool(let entry): "liquidity pool " + pool(entry.liquidityPoolID)
        case .contractData(let entry): "contract data of " + address(entry.contract)
        case .contractCode(let entry): "contract code " + Hex.string(entry.hash.value)
        case .configSetting: "a configuration setting"
        case .ttl(let entry): "TTL of " + Hex.string(entry.keyHash.value)
        }
    }

    /// The key behind an account, muxed or not.
    static func ed25519(of account: XDR.MuxedAccount) -> [UInt8] {
        switch account {
        case .ed25519(let raw): raw.value
        case .med25519(let muxed): muxed.ed25519.value
        }
    }

    /// The lines `TransactionSummary.warnings` holds, but the one about the signer.
    static func warnings(_ transaction: XDR.Transaction, now: Date) -> [String] {
        var warnings: [String] = []
        let timeBounds: XDR.TimeBounds? = switch transaction.cond {
        case .timeBounds(let bounds): bounds
        case .v2(let v2): v2.timeBounds
        case .none: nil
        }
        let seconds = UInt64(max(0, now.timeIntervalSince1970))
        if let timeBounds, timeBounds.maxTime != 0, timeBounds.maxTime < seconds {
            warnings.append("EXPIRED: its time bounds ended at \(time(timeBounds.maxTime)), before now by this machine's clock; the network will refuse it")
        }
        if let timeBounds, timeBounds.minTime > seconds {
            warnings.append("NOT YET VALID: its time bounds start at \(time(timeBounds.minTime)), after now by this machine's clock")
        }
        for (index, operation) in transaction.operations.enumerated() {
            let number = "operation \(index + 1)"
            let account = operation.sourceAccount.map(muxed) ?? muxed(transaction.sourceAccount)
            switch operation.body {
            case .setOptionsOp(let op):
                if op.masterWeight == 0 {
                    warnings.append("\(number) sets the master key's weight of \(account) to 0: its own key can no longer sign for it")
                }
                if op.lowThreshold != nil || op.medThreshold != nil || op.highThreshold != nil {
                    let set = [("low", op.lowThreshold), ("medium", op.medThreshold), ("high", op.highThreshold)]
                        .compactMap { name, value in value.map { "\(name) \($0)" } }.joined(separator: ", ")
                    warnings.append("\(number) changes the signature thresholds of \(account): \(set)")
                }
                if let signer = op.signer, signer.weight > 0 {
                    warnings.append("\(number) adds \(signerKey(signer.key)) as a signer of \(account), with weight \(signer.weight): it can then sign for it")
                }
            case .destination(let destination):
                warnings.append("\(number) merges \(account) away: the account is deleted and all its XLM goes to \(muxed(destination))")
            default:
                break
            }
        }
        return warnings
    }
}
