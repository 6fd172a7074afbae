import FoundationEssentials
import StellarKeys

extension SummaryText {
    /// Each of the 27 operations, by its XDR type, with its key fields as a person checks them; what a bound left
    /// out of them is added to `elided`.
    static func operation(_ operation: XDR.Operation, elided: inout [Elision]) -> TransactionSummary.Operation {
        var fields: [TransactionSummary.Field] = []
        func add(_ name: String, _ value: TransactionSummary.Value) { fields.append(.init(name: name, value: value)) }
        func add(_ name: String, _ value: String) { add(name, .plain(value)) }
        // The two path payments alike: where to, what is sent and what received (one of them a bound), the path.
        func addPathPayment(to destination: XDR.MuxedAccount, _ sends: String, _ sent: Int64, _ sendAsset: XDR.Asset,
                            _ receives: String, _ received: Int64, _ destAsset: XDR.Asset, through assets: [XDR.Asset]) {
            add("destination", muxed(destination))
            add(sends, amount(sent) + " " + asset(sendAsset))
            add(receives, amount(received) + " " + asset(destAsset))
            add("path", path(assets))
        }
        // The three offers alike: the side whose amount is given, the other side, the price and, but for a passive
        // offer, which offer it makes, changes or deletes.
        func addOffer(_ given: String, _ offered: Int64, _ givenAsset: XDR.Asset, _ other: String, _ otherAsset: XDR.Asset,
                      at offerPrice: XDR.Price, id: Int64? = nil) {
            add(given, amount(offered) + " " + asset(givenAsset))
            add(other, asset(otherAsset))
            add("price", price(offerPrice))
            if let id { add("offer", offer(id, amount: offered)) }
        }
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
            addPathPayment(to: op.destination, "sends at most", op.sendMax, op.sendAsset, "receives", op.destAmount, op.destAsset, through: op.path)
        case .pathPaymentStrictSendOp(let op):
            type = "PATH_PAYMENT_STRICT_SEND"
            addPathPayment(to: op.destination, "sends", op.sendAmount, op.sendAsset, "receives at least", op.destMin, op.destAsset, through: op.path)
        case .manageSellOfferOp(let op):
            type = "MANAGE_SELL_OFFER"
            addOffer("selling", op.amount, op.selling, "buying", op.buying, at: op.price, id: op.offerID)
        case .manageBuyOfferOp(let op):
            type = "MANAGE_BUY_OFFER"
            addOffer("buying", op.buyAmount, op.buying, "selling", op.selling, at: op.price, id: op.offerID)
        case .createPassiveSellOfferOp(let op):
            type = "CREATE_PASSIVE_SELL_OFFER"
            addOffer("selling", op.amount, op.selling, "buying", op.buying, at: op.price)
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
            fields += ContractCallText.fields(op, elided: &elided)
        case .extendFootprintTTLOp(let op):
            type = "EXTEND_FOOTPRINT_TTL"
            add("extend to", "\(op.extendTo) ledgers")
        case .restoreFootprintOp:
            type = "RESTORE_FOOTPRINT"
        }
        // The XDR name in lower case, as Horizon and stellar-sdk's JSON name operations, in text and JSON alike.
        return .init(type: type.lowercased(), source: operation.sourceAccount.map(muxed), fields: fields)
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
}
