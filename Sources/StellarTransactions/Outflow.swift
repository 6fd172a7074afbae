import StellarKeys

/// What one signing request can move, read from the decoded request itself (never from a caller's description of
/// it), so that a policy can cap it. Every operation counts, whatever its source, and every `transfer`, whatever its
/// `from`: a key's signature may authorize another account's operation (one it co-signs) or a transfer from a smart
/// account or an entry's bound address (one it signs for), and which accounts a key signs for cannot be known from
/// the request. Counting them all can only refuse more. A muxed `M…` destination is kept as written (its `G…` is
/// what receives; its id, like a memo, says for whom), so that a policy can tell one id from another.
///
/// Counted, per asset, in stroops:
/// - `payment`: its amount; `pathPaymentStrictReceive`: its send maximum; `pathPaymentStrictSend`: its send amount;
///   `createAccount`: its starting balance (native); `createClaimableBalance`: its amount;
/// - `manageSellOffer` and `createPassiveSellOffer`: the amount offered of the asset sold (0 deletes an offer);
///   `manageBuyOffer`: the most it can sell, `ceil(buyAmount × n / d)` of the asset sold;
/// - a contract call `transfer(from, to, amount)` (SEP-41's signature, whatever the contract), made by an
///   operation or in an authorization tree: `amount` of the asset `C…` that the contract is (a classic asset's
///   Stellar Asset Contract is matched by `StellarAssetContract.id(of:on:)`);
/// - `clawback`: its amount of its asset (it leaves an account and goes to no one);
/// - the fee: a transaction's fee, a fee bump's outer fee (the inner fee is then not charged to anyone).
///
/// Not countable (`uncountable` says why), because what they move is not in the request: `accountMerge` (the
/// whole balance), `liquidityPoolDeposit` (the pool's assets are not in the operation), `clawbackClaimableBalance`
/// (a balance's id), `allowTrust` and `setTrustLineFlags` (revoking pulls offers and pool shares the ledger holds),
/// `beginSponsoringFutureReserves` and `revokeSponsorship` (reserves the ledger sets), an authorized contract call
/// other than `transfer` (the authorization lets the contract move what it holds for the authorizing address), and
/// any amount that cannot be read as one (negative, a price with a zero denominator). Operations that move nothing
/// out count 0; sums past `Int64.max` stay at `Int64.max`.
package struct Outflow: Sendable, Equatable {
    /// A contract function called, or authorized, by the request.
    package struct Call: Sendable, Hashable {
        /// `C…`.
        package let contract: String
        package let function: String
    }

    /// Stroops (the asset's units at 7 decimals) by asset: `native`, `CODE:ISSUER`, or a contract's `C…`.
    package private(set) var amounts: [String: Int64] = [:]
    /// Where what is counted goes, as written: accounts `G…`, muxed accounts `M…` and contracts `C…`, in order,
    /// each once.
    package private(set) var destinations: [String] = []
    /// The transaction's memo (a fee bump's inner transaction's), nil when it has none; always nil for an
    /// authorization. An exchange credits a deposit to its account by the memo.
    package private(set) var memo: Memo?
    /// The operation types of the transaction, in order, each once, named as in the XDR (`payment`,
    /// `invokeHostFunction`, …); empty for an authorization.
    package private(set) var operations: [String] = []
    /// Every contract function the request calls or authorizes, in order, each once.
    package private(set) var calls: [Call] = []
    /// The fee, in stroops (a fee bump's outer fee); included in `amounts`.
    package private(set) var fee: Int64 = 0
    /// The transaction's time bounds (0 for no bound), nil when it has none; always nil for an authorization.
    package private(set) var timeBounds: (min: UInt64, max: UInt64)?
    /// The operations that trade on the order book, in order, each once: an offer (not a deletion), and a path
    /// payment that converts or goes through a path. What they sell goes to whoever takes the other side (an offer
    /// the caller placed at any price, or a path through an asset the caller picked), whom the request does not
    /// name: a list of destinations cannot be checked against them. What they sell is counted in `amounts`; what
    /// they buy comes in. A path payment of one asset with an empty path converts nothing: it pays its destination.
    package private(set) var trades: [String] = []
    /// Why what the request moves cannot be counted, one reason a line; empty when it can.
    package private(set) var uncountable: [String] = []

    package var isCountable: Bool { uncountable.isEmpty }

    package static func == (a: Outflow, b: Outflow) -> Bool {
        a.amounts == b.amounts && a.destinations == b.destinations && a.operations == b.operations && a.calls == b.calls
            && a.fee == b.fee && a.timeBounds?.min == b.timeBounds?.min && a.timeBounds?.max == b.timeBounds?.max
            && a.uncountable == b.uncountable && a.trades == b.trades && a.memo == b.memo
    }

    /// What `envelope` can move.
    package init(of envelope: TransactionEnvelope) {
        let inner: XDR.Transaction?
        switch envelope.decoded {
        case .v0(let tx):
            addFee(Int64(tx.fee))
            timeBounds = tx.timeBounds.map { ($0.minTime, $0.maxTime) }
            memo = Memo(tx.memo)
            add(tx.operations)
            inner = nil
        case .v1(let tx):
            addFee(Int64(tx.fee))
            inner = tx
        case .feeBump(let bump):
            addFee(bump.fee)
            guard case .v1(let wrapped) = bump.innerTx else { inner = nil; break }
            inner = wrapped.tx
        }
        if let tx = inner {
            memo = Memo(tx.memo)
            switch tx.cond {
            case .none: timeBounds = nil
            case .timeBounds(let bounds): timeBounds = (bounds.minTime, bounds.maxTime)
            case .v2(let conditions): timeBounds = conditions.timeBounds.map { ($0.minTime, $0.maxTime) }
            }
            add(tx.operations)
        }
    }

    /// What `preimage` authorizes to move: every invocation of its tree.
    package init(of preimage: AuthorizationPreimage) {
        add(authorized: preimage.invocation)
    }

    // MARK: Counting

    private mutating func add(_ operations: [XDR.Operation]) {
        for operation in operations {
            let type = Self.name(of: operation.body)
            if !self.operations.contains(type) { self.operations.append(type) }
            switch operation.body {
            case .paymentOp(let op):
                add(op.amount, of: op.asset, to: SummaryText.muxed(op.destination), as: type)
            case .pathPaymentStrictReceiveOp(let op):
                add(op.sendMax, of: op.sendAsset, to: SummaryText.muxed(op.destination), as: type)
                if Self.name(of: op.sendAsset) != Self.name(of: op.destAsset) || !op.path.isEmpty { addTrade(type) }
            case .pathPaymentStrictSendOp(let op):
                add(op.sendAmount, of: op.sendAsset, to: SummaryText.muxed(op.destination), as: type)
                if Self.name(of: op.sendAsset) != Self.name(of: op.destAsset) || !op.path.isEmpty { addTrade(type) }
            case .createAccountOp(let op):
                add(op.startingBalance, of: .native, to: SummaryText.account(op.destination), as: type)
            case .createClaimableBalanceOp(let op):
                add(op.amount, of: op.asset, to: nil, as: type)
                for case .v0(let claimant) in op.claimants { addDestination(SummaryText.account(claimant.destination)) }
            case .manageSellOfferOp(let op):
                add(op.amount, of: op.selling, to: nil, as: type)
                if op.amount > 0 { addTrade(type) }  // 0 deletes the offer, which pays no one
            case .createPassiveSellOfferOp(let op):
                add(op.amount, of: op.selling, to: nil, as: type)
                if op.amount > 0 { addTrade(type) }
            case .manageBuyOfferOp(let op):
                if op.buyAmount > 0 { addTrade(type) }
                guard op.buyAmount >= 0, op.price.n >= 0, op.price.d > 0 else {
                    uncountable.append("\(type): an amount or price that is not one")
                    continue
                }
                // ceil(buyAmount × n / d), in 128 bits: the product of two 63-bit numbers fits, the quotient may not.
                let (product, divisor) = (Int128(op.buyAmount) * Int128(op.price.n), Int128(op.price.d))
                let most = (product + divisor - 1) / divisor
                add(most > Int128(Int64.max) ? Int64.max : Int64(most), of: op.selling, to: nil, as: type)
            case .destination(let destination):
                uncountable.append("accountMerge moves the account's whole balance")
                addDestination(SummaryText.muxed(destination))
            case .liquidityPoolDepositOp:
                uncountable.append("liquidityPoolDeposit names a pool, not the assets it takes")
            case .invokeHostFunctionOp(let op):
                add(op)
            case .clawbackOp(let op):
                // Value leaves an account (the key may sign as the asset's issuer) and goes to no one: it is burned.
                add(op.amount, of: op.asset, to: nil, as: type)
            // What these move is in the ledger, not in the operation; none has an amount that would be an honest
            // count, so a rule that counts refuses them.
            case .clawbackClaimableBalanceOp:
                uncountable.append("clawbackClaimableBalance names a balance, not its asset and amount")
            case .allowTrustOp, .setTrustLineFlagsOp:
                // Revoking an authorization pulls the trustor's offers and turns its pool shares into claimable
                // balances: what moves is what the ledger holds.
                uncountable.append("\(type) changes what an account may hold, and what that moves is in the ledger")
            case .beginSponsoringFutureReservesOp:
                // The sponsor pays a base reserve for each entry the sponsored account creates until the end of
                // the sandwich: a count of entries and a reserve that the ledger, not the request, states.
                uncountable.append("beginSponsoringFutureReserves pays reserves the ledger sets, for entries another account creates")
            case .revokeSponsorshipOp:
                uncountable.append("revokeSponsorship moves a sponsored entry's reserve, which the ledger states")
            default:
                // Nothing leaves an account: changeTrust, setOptions, manageData, bumpSequence, inflation,
                // claimClaimableBalance and liquidityPoolWithdraw (they bring in), the footprint operations (their
                // cost is the fee), and endSponsoringFutureReserves, which only closes the sandwich that a
                // beginSponsoringFutureReserves of the same transaction opens (that one is not countable).
                break
            }
        }
    }

    /// A host function an operation invokes: the contract call it makes (a `transfer` counted; any other call
    /// uncountable when the operation carries authorization entries, whose credentials may be the key's or an
    /// address's it signs for), and each entry's tree, counted as a signed authorization is. An entry whose root is
    /// the operation's own call has that root judged once, above: only its sub-invocations are walked.
    private mutating func add(_ op: XDR.InvokeHostFunctionOp) {
        var root: XDR.InvokeContractArgs?
        if case .invokeContract(let call) = op.hostFunction {
            root = call
            addCall(call)
            if let transfer = Self.transfer(call) {
                add(transfer)
            } else if !op.auth.isEmpty {
                addUncountable(call)
            }
        }
        for entry in op.auth {
            let invocation = entry.rootInvocation
            if let root, case .contractFn(let authorized) = invocation.function, Self.same(authorized, root) {
                for sub in invocation.subInvocations { add(authorized: sub) }
            } else {
                add(authorized: invocation)
            }
        }
    }

    /// Every invocation of an authorized tree: a `transfer` is counted, whatever its `from`; any other contract
    /// call is listed, and cannot be counted, since the authorization lets it move what it holds for the
    /// authorizing address. Creating a contract moves nothing out.
    private mutating func add(authorized invocation: XDR.SorobanAuthorizedInvocation) {
        if case .contractFn(let call) = invocation.function {
            addCall(call)
            if let transfer = Self.transfer(call) {
                add(transfer)
            } else {
                addUncountable(call)
            }
        }
        for sub in invocation.subInvocations { add(authorized: sub) }
    }

    private mutating func addUncountable(_ call: XDR.InvokeContractArgs) {
        let function = String(decoding: call.functionName.value, as: UTF8.self)
        let reason = "\(SummaryText.address(call.contractAddress)).\(function) is authorized and is not a transfer"
        if !uncountable.contains(reason) { uncountable.append(reason) }
    }

    private struct Transfer { let contract, to: String; let amount: Int64? }

    /// `call` as SEP-41's `transfer(from: Address, to: Address, amount: i128)`, nil when it is not one. An amount
    /// below zero is nil (what it moves is not one a cap can count); one past `Int64.max` is `Int64.max` (more
    /// than any cap).
    private static func transfer(_ call: XDR.InvokeContractArgs) -> Transfer? {
        guard call.functionName.value == Array("transfer".utf8), call.args.count == 3,
              case .address = call.args[0], case .address(let to) = call.args[1],
              case .i128(let amount) = call.args[2] else { return nil }
        let value: Int64? = if amount.hi == 0 { amount.lo > UInt64(Int64.max) ? .max : Int64(amount.lo) } else if amount.hi > 0 { .max } else { nil }
        return Transfer(contract: SummaryText.address(call.contractAddress), to: SummaryText.address(to), amount: value)
    }

    private mutating func add(_ transfer: Transfer) {
        guard let amount = transfer.amount else {
            uncountable.append("a transfer on \(transfer.contract) of an amount below zero")
            return
        }
        add(amount, asset: transfer.contract)
        addDestination(transfer.to)
    }

    private static func same(_ a: XDR.InvokeContractArgs, _ b: XDR.InvokeContractArgs) -> Bool {
        SummaryText.address(a.contractAddress) == SummaryText.address(b.contractAddress) && a.functionName.value == b.functionName.value
            && a.args.map(SCValText.exact) == b.args.map(SCValText.exact)
    }

    private mutating func add(_ amount: Int64, of asset: XDR.Asset, to destination: String?, as type: String) {
        guard amount >= 0 else {
            uncountable.append("\(type): an amount below zero")
            return
        }
        add(amount, asset: Self.name(of: asset))
        if let destination { addDestination(destination) }
    }

    private mutating func add(_ amount: Int64, asset: String) {
        guard amount != 0 else { return }  // a deleted offer, a zero fee: nothing moves
        let (sum, overflow) = amounts[asset, default: 0].addingReportingOverflow(amount)
        amounts[asset] = overflow ? .max : sum
    }

    private mutating func addFee(_ value: Int64) {
        fee = max(value, 0)
        add(fee, asset: "native")
    }

    private mutating func addDestination(_ destination: String) {
        if !destinations.contains(destination) { destinations.append(destination) }
    }

    private mutating func addTrade(_ operation: String) {
        if !trades.contains(operation) { trades.append(operation) }
    }

    private mutating func addCall(_ call: XDR.InvokeContractArgs) {
        let call = Call(contract: SummaryText.address(call.contractAddress), function: String(decoding: call.functionName.value, as: UTF8.self))
        if !calls.contains(call) { calls.append(call) }
    }

    // MARK: Names

    /// `native` or `CODE:ISSUER`.
    static func name(of asset: XDR.Asset) -> String {
        switch asset {
        case .native: "native"
        case .alphaNum4(let credit): SummaryText.credit(credit.assetCode.value, credit.issuer)
        case .alphaNum12(let credit): SummaryText.credit(credit.assetCode.value, credit.issuer)
        }
    }

    /// The operation type as the XDR names it, in camel case: `payment`, `pathPaymentStrictSend`.
    static func name(of body: XDR.OperationBody) -> String {
        switch body {
        case .createAccountOp: "createAccount"
        case .paymentOp: "payment"
        case .pathPaymentStrictReceiveOp: "pathPaymentStrictReceive"
        case .manageSellOfferOp: "manageSellOffer"
        case .createPassiveSellOfferOp: "createPassiveSellOffer"
        case .setOptionsOp: "setOptions"
        case .changeTrustOp: "changeTrust"
        case .allowTrustOp: "allowTrust"
        case .destination: "accountMerge"
        case .inflation: "inflation"
        case .manageDataOp: "manageData"
        case .bumpSequenceOp: "bumpSequence"
        case .manageBuyOfferOp: "manageBuyOffer"
        case .pathPaymentStrictSendOp: "pathPaymentStrictSend"
        case .createClaimableBalanceOp: "createClaimableBalance"
        case .claimClaimableBalanceOp: "claimClaimableBalance"
        case .beginSponsoringFutureReservesOp: "beginSponsoringFutureReserves"
        case .endSponsoringFutureReserves: "endSponsoringFutureReserves"
        case .revokeSponsorshipOp: "revokeSponsorship"
        case .clawbackOp: "clawback"
        case .clawbackClaimableBalanceOp: "clawbackClaimableBalance"
        case .setTrustLineFlagsOp: "setTrustLineFlags"
        case .liquidityPoolDepositOp: "liquidityPoolDeposit"
        case .liquidityPoolWithdrawOp: "liquidityPoolWithdraw"
        case .invokeHostFunctionOp: "invokeHostFunction"
        case .extendFootprintTTLOp: "extendFootprintTtl"
        case .restoreFootprintOp: "restoreFootprint"
        }
    }

    /// Every operation type's name, as `operations` gives them (a policy refuses a name that is not one).
    package static let operationNames = [
        "createAccount", "payment", "pathPaymentStrictReceive", "manageSellOffer", "createPassiveSellOffer", "setOptions",
        "changeTrust", "allowTrust", "accountMerge", "inflation", "manageData", "bumpSequence", "manageBuyOffer",
        "pathPaymentStrictSend", "createClaimableBalance", "claimClaimableBalance", "beginSponsoringFutureReserves",
        "endSponsoringFutureReserves", "revokeSponsorship", "clawback", "clawbackClaimableBalance", "setTrustLineFlags",
        "liquidityPoolDeposit", "liquidityPoolWithdraw", "invokeHostFunction", "extendFootprintTtl", "restoreFootprint",
    ]
}

extension Outflow {
    /// A transaction's memo, as written.
    package enum Memo: Sendable, Hashable {
        case text([UInt8])
        case id(UInt64)
        case hash([UInt8])
        case `return`([UInt8])

        init?(_ memo: XDR.Memo) {
            switch memo {
            case .none: return nil
            case .text(let bytes): self = .text(bytes)
            case .id(let id): self = .id(id)
            case .hash(let hash): self = .hash(hash.value)
            case .retHash(let hash): self = .return(hash.value)
            }
        }

        /// As a summary shows it: `text "deposit-7731"`, `id 7731`, `hash 0001…`.
        package var shown: String {
            switch self {
            case .text(let bytes): "text " + SummaryText.quoted(bytes)
            case .id(let id): "id \(id)"
            case .hash(let bytes): "hash \(Hex.string(bytes))"
            case .return(let bytes): "return \(Hex.string(bytes))"
            }
        }
    }
}

/// The contract a classic asset has on a network (its Stellar Asset Contract): the id is fixed by the asset and the
/// network, so a cap on `USDC:G…` also caps a `transfer` on its contract.
package enum StellarAssetContract {
    /// `C…` for `native` or `CODE:ISSUER` on `network`; nil when `asset` is neither.
    /// SHA-256 of the `HashIDPreimage` `ENVELOPE_TYPE_CONTRACT_ID` (8): network ID, `CONTRACT_ID_PREIMAGE_FROM_ASSET`
    /// (1), the asset's XDR.
    package static func id(of asset: String, on network: StellarNetwork) -> String? {
        guard let xdr = assetXDR(asset) else { return nil }
        let preimage: [UInt8] = [0, 0, 0, 8] + network.id + [0, 0, 0, 1] + xdr
        let hash = preimage.withUnsafeBytes { Sodium.sha256($0) }
        return SummaryText.strKey(.contract, hash)
    }

    /// An `Asset`'s XDR from `native` or `CODE:ISSUER` (a code of 1 to 4 letters and digits is `alphanum4`, of 5
    /// to 12 `alphanum12`, as the network reads them).
    static func assetXDR(_ asset: String) -> [UInt8]? {
        if asset == "native" { return [0, 0, 0, 0] }
        let parts = asset.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let issuer = try? StrKey(String(parts[1]), as: .accountID) else { return nil }
        let code = Array(parts[0].utf8)
        guard (1...12).contains(code.count),
              code.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }) else { return nil }
        let width = code.count <= 4 ? 4 : 12
        return [0, 0, 0, width == 4 ? 1 : 2] + code + [UInt8](repeating: 0, count: width - code.count) + [0, 0, 0, 0] + issuer.payload
    }
}
