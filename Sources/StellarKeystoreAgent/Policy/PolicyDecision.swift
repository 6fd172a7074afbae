import StellarKeys
import StellarTransactions

/// One signing request as a policy sees it: who asks, for which key, on which network, and what the agent decoded
/// of it (`Outflow`, from the envelope or preimage it reviewed; never the caller's description).
package struct PolicyRequest: Sendable {
    /// The process that asks: its executable as the kernel reports it, its parents' (the nearest first), its uid.
    package struct Caller: Sendable {
        package var executable: String
        package var parents: [String]
        package var uid: UInt32?
        /// The files the caller and its parents run, as the agent found them (`/proc/PID/exe`), the nearest parent
        /// first; nil where none could be read. With them a rule's executable matches by the file its path names
        /// now, not by the path the kernel reports (which another mount can show for another file); without them
        /// (a policy checked against a caller described by its path alone), by the path.
        package var files: (executable: ExecutableFile?, parents: [ExecutableFile?])?
        package init(executable: String, parents: [String] = [], uid: UInt32? = nil,
                     files: (executable: ExecutableFile?, parents: [ExecutableFile?])? = nil) {
            self.executable = executable
            self.parents = parents
            self.uid = uid
            self.files = files
        }
    }

    /// The key's name, when it has one (the agent's keys do; `policy check` may be given an address alone).
    package var identityName: String?
    package var identityAddress: String
    package var caller: Caller
    /// Nil for a message or a payload, which name none: they match only rules that name no network.
    package var network: StellarNetwork?
    package var kind: AgentPolicy.Kind
    /// What a transaction or authorization can move (`Outflow`); nil for a message or a payload.
    package var outflow: Outflow?
    /// A `signAuthEntry` preimage that binds no address (V1).
    package var isV1Authorization: Bool

    package init(identityName: String?, identityAddress: String, caller: Caller, network: StellarNetwork?, kind: AgentPolicy.Kind,
                outflow: Outflow? = nil, isV1Authorization: Bool = false) {
        self.identityName = identityName
        self.identityAddress = identityAddress
        self.caller = caller
        self.network = network
        self.kind = kind
        self.outflow = outflow
        self.isV1Authorization = isV1Authorization
    }
}

/// What the policy says of one request.
package enum PolicyDecision: Sendable, Equatable {
    /// Sign, and count `spending` in the rule's windows.
    case allow(PolicySpending)
    /// Over a limit marked `ask`: sign only if the agent's person says yes (the reason added to the question);
    /// an agent that asks nobody refuses.
    case ask(String, PolicySpending)
    case refuse(String)

    /// The reason of an `ask` or a `refuse`.
    package var reason: String? {
        switch self {
        case .allow: nil
        case .ask(let reason, _), .refuse(let reason): reason
        }
    }
}

/// What a request signed under a rule adds to the rule's windows: stroops by the asset its limits name.
package struct PolicySpending: Sendable, Equatable {
    package let rule: String
    /// Only amounts above zero, for assets a windowed limit names.
    package let amounts: [String: Int64]
}

extension AgentPolicy {
    /// The decision on `request` at `now` (Unix seconds), `spent(rule, asset, window)` giving what the rule has
    /// spent of `asset` in the last `window` seconds. Pure: the agent calls it under the windows' lock
    /// (`PolicyWindows.decide`), so that what it allows is recorded before another request is decided.
    ///
    /// The first rule that matches (identity, caller, network, kind) decides. Its checks, in order, each a
    /// refusal naming the rule: a V1 authorization unless allowed; operation types, contract functions,
    /// destinations and assets outside its lists (and trades on the order book, whose counterparties no list of
    /// destinations names); a request whose outflow cannot be counted, when the rule
    /// caps amounts or lists destinations or assets; a fee over `maxFee`; missing or too distant time bounds;
    /// an asset moved that no limit names, when the rule has limits; then its limits, the hard ones first (a
    /// refusal), then those marked `ask`. A classic asset and its Stellar Asset Contract on the request's network
    /// are one asset, in `assets` and in limits.
    package func decision(for request: PolicyRequest, now: Int64, spent: (String, String, Int) -> Int64) -> PolicyDecision {
        guard let rule = rules.first(where: { $0.matches(request) }) else {
            return .refuse("no rule allows \(request.kind.rawValue) requests for \(request.identityName ?? request.identityAddress) "
                + "from \(request.caller.executable)" + (request.network.map { " on \($0.name ?? "this network")" } ?? ""))
        }
        return rule.decision(for: request, now: now, spent: spent)
    }
}

extension AgentPolicy.Rule {
    func matches(_ request: PolicyRequest) -> Bool {
        guard kinds.contains(request.kind) else { return false }
        if let identities, !identities.contains(where: { $0 == request.identityAddress || $0 == request.identityName }) { return false }
        if let networks, !networks.contains(where: { $0 == request.network?.passphrase }) { return false }
        if let callers, !callers.contains(where: { $0.matches(request.caller) }) { return false }
        return true
    }

    func decision(for request: PolicyRequest, now: Int64, spent: (String, String, Int) -> Int64) -> PolicyDecision {
        func refuse(_ why: String) -> PolicyDecision { .refuse("rule \(name): \(why)") }
        if request.isV1Authorization && !allowsV1Authorizations {
            return refuse("V1 authorizations (whose signature binds no address) are not allowed")
        }
        guard let outflow = request.outflow else { return .allow(PolicySpending(rule: name, amounts: [:])) }
        if let operations, let other = outflow.operations.first(where: { !operations.contains($0) }) {
            return refuse("operation \(other) is not allowed")
        }
        if let contracts {
            for call in outflow.calls {
                guard let functions = contracts[call.contract] else { return refuse("contract \(call.contract) is not allowed") }
                if let functions, !functions.contains(call.function) {
                    return refuse("function \(call.function) of contract \(call.contract) is not allowed")
                }
            }
        }
        let countingNeeded = !limits.isEmpty || destinations != nil || assets != nil
        if countingNeeded, let why = outflow.uncountable.first {
            return refuse("what this request moves cannot be counted (\(why))")
        }
        // What an offer or a converting path payment sells goes to whoever trades with it: no list can name them.
        if destinations != nil, let trade = outflow.trades.first {
            return refuse("\(trade) trades on the order book, paying whoever takes the other side, which destinations cannot name")
        }
        if let destinations, let why = outflow.destinations.lazy.compactMap({ destinations.refusal(of: $0, memo: outflow.memo, in: request.kind) }).first {
            return refuse(why)
        }
        // One asset, two names: a classic asset is its Stellar Asset Contract on the request's network.
        func same(_ a: String) -> String { request.network.flatMap { StellarAssetContract.id(of: a, on: $0) } ?? a }
        let moved = outflow.amounts.sorted { $0.key < $1.key }
        // The fee alone is native that maxFee caps, when it is set: then it need not be named in assets or limits.
        func isCappedFee(_ asset: String, _ amount: Int64) -> Bool { asset == "native" && maxFee != nil && amount <= outflow.fee }
        if let assets {
            let allowed = Set(assets.map(same))
            for (asset, amount) in moved where !allowed.contains(same(asset)) && !isCappedFee(asset, amount) {
                return refuse("asset \(Self.shown(asset)) is not allowed")
            }
        }
        if let maxFee, outflow.fee > maxFee {
            return refuse("fees over \(AgentPolicy.units(maxFee)) XLM: this one \(AgentPolicy.units(outflow.fee))")
        }
        if let expiresWithin, request.kind == .transaction {
            guard let bounds = outflow.timeBounds, bounds.max != 0 else { return refuse("a transaction must have a latest time (time bounds)") }
            let latest = now + Int64(expiresWithin)
            if bounds.max > UInt64(max(latest, 0)) {
                return refuse("a transaction must expire within \(AgentPolicy.duration(expiresWithin)): this one is valid "
                    + "\(Int64(clamping: bounds.max) - now) s ahead")
            }
        }
        if !limits.isEmpty {
            // An asset no limit names would be unlimited.
            let named = Set(limits.map { same($0.asset) })
            for (asset, amount) in moved where !named.contains(same(asset)) && !isCappedFee(asset, amount) {
                return refuse("moves \(Self.shown(asset)), which no limit of the rule names")
            }
        }
        var asking: String?
        var windowed: [String: Int64] = [:]
        for limit in limits.sorted(by: { !$0.ask && $1.ask }) {
            let amount = outflow.amounts.filter { same($0.key) == same(limit.asset) }.values
                .reduce(Int64(0)) { $0.addingReportingOverflow($1).overflow ? .max : $0 + $1 }
            var over: String?
            if let perRequest = limit.perRequest, amount > perRequest {
                over = "over \(AgentPolicy.units(perRequest)) \(Self.shown(limit.asset)) per request: this one \(AgentPolicy.units(amount))"
            } else if let perWindow = limit.perWindow, let window = limit.window {
                let already = spent(name, limit.asset, window)
                let (total, overflow) = already.addingReportingOverflow(amount)
                if overflow || total > perWindow {
                    over = "over \(AgentPolicy.units(perWindow)) \(Self.shown(limit.asset)) per \(AgentPolicy.duration(window)): "
                        + "\(AgentPolicy.units(already)) spent, this one \(AgentPolicy.units(amount))"
                }
            }
            if let over {
                guard limit.ask else { return refuse(over) }
                asking = asking ?? over
            }
            // Recorded once under one of the asset's names: its windows count either name (`PolicyWindows`), so two
            // limits naming it two ways must not record it twice.
            if limit.window != nil && amount > 0 && !windowed.keys.contains(where: { same($0) == same(limit.asset) }) {
                windowed[limit.asset] = amount
            }
        }
        let spending = PolicySpending(rule: name, amounts: windowed)
        return asking.map { .ask("rule \(name): \($0)", spending) } ?? .allow(spending)
    }

    /// `XLM`, `USDC:GA5Z…` (the issuer's first characters), or a contract `C…` in full.
    static func shown(_ asset: String) -> String {
        if asset == "native" { return "XLM" }
        guard let colon = asset.firstIndex(of: ":") else { return asset }
        return String(asset[..<colon]) + ":" + asset[asset.index(after: colon)...].prefix(5) + "…"
    }
}

extension AgentPolicy.Caller {
    func matches(_ caller: PolicyRequest.Caller) -> Bool {
        guard parents.count <= caller.parents.count else { return false }
        if let files = caller.files {
            guard let file = files.executable, ExecutableFile(path: executable) == file, parents.count <= files.parents.count,
                  zip(parents, files.parents).allSatisfy({ listed, running in running != nil && ExecutableFile(path: listed) == running })
            else { return false }
        } else {
            guard executable == caller.executable, zip(parents, caller.parents).allSatisfy({ $0 == $1 }) else { return false }
        }
        if let uid, uid != caller.uid { return false }
        return true
    }
}
