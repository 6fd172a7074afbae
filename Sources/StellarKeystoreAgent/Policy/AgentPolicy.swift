import Glibc
import StellarKeys
import StellarText
import StellarTransactions

/// What an agent signs without a person: a written list of rules (docs/AGENT.md, "Policies"). With a policy the
/// agent signs what a rule allows, asks its person where a rule says so, and refuses the rest, saying which rule
/// and which limit.
///
/// The file is JSON, read strictly (`StrictJSON`: a key given twice is refused; so is a field this reader does not
/// know, a value of the wrong type, an empty list, an unknown name), each fault named by its path in the file
/// (`rules[2].limits[0].perWindow`):
///
/// ```json
/// { "version": 1,
///   "rules": [
///     { "name": "payment-bot",
///       "identities": ["payouts"],
///       "callers": [{ "executable": "/usr/local/bin/payout-bot" }],
///       "networks": ["public"],
///       "kinds": ["transaction"],
///       "operations": ["payment"],
///       "destinations": ["GA…", { "destination": "GB…", "memoText": "deposit-7731" }],
///       "limits": [{ "asset": "native", "perWindow": "100", "window": "24h" }],
///       "maxFee": "0.01" } ] }
/// ```
///
/// A rule matches a request by who asks and what for: `identities` (key names or `G…` addresses), `callers`
/// (the executable the process runs, `/proc/PID/exe`, matched by the file the listed path names, optionally its
/// parents' executables, nearest first, and a uid), `networks` (`public`, `testnet`, `futurenet`, or a passphrase) and `kinds`
/// (`transaction`, `authEntry`, `message`, `payload`; required, so that raw payloads are signed only where a rule
/// names them). A field left out matches every request. The first rule that matches decides: its limits allow,
/// ask or refuse, and a later rule is not tried (so that a refusal names one rule). No rule matching is a refusal.
package struct AgentPolicy: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        case transaction, authEntry, message, payload
    }

    /// A process allowed to ask: its executable's path, the paths of its parents (the nearest first; those given
    /// must match, the rest of the chain is not looked at), and its uid.
    package struct Caller: Sendable, Equatable {
        package let executable: String
        package let parents: [String]
        package let uid: UInt32?
    }

    /// A cap on what the rule's requests move, per asset (one asset under its classic and its contract names): per
    /// request, and per rolling window.
    /// With `ask`, going over it asks the agent's person instead of refusing (an agent that asks nobody refuses).
    package struct Limit: Sendable, Equatable {
        /// `native`, `CODE:ISSUER` or a contract `C…`; a classic asset's cap also counts its Stellar Asset Contract.
        package let asset: String
        /// Stroops.
        package let perRequest: Int64?
        /// Stroops within `window` seconds.
        package let perWindow: Int64?
        package let window: Int?
        package let ask: Bool
    }

    /// Where a rule lets a request send: an account `G…`, a muxed account `M…` or a contract `C…`, and the memo
    /// the transaction must carry to send there (an exchange's deposit address is its account and a memo).
    package struct Destination: Sendable, Equatable {
        package let address: String
        package let memo: Outflow.Memo?

        /// Whether a request with `memo` may send to `destination` (as `Outflow` writes it). A listed `M…` is
        /// that account and id only. A listed `G…` is the account and its muxed forms too, since what is sent
        /// lands in it, but not when it asks for a memo: a muxed id is a second say on whom to credit, which a
        /// receiver may read instead of the memo.
        func takes(_ destination: String, memo given: Outflow.Memo?) -> Bool {
            if let memo, memo != given { return false }
            if destination == address { return true }
            guard memo == nil, address.hasPrefix("G"), let muxed = try? StrKey(destination, as: .muxedAccount) else { return false }
            return muxed.ed25519PublicKey?.accountID == address
        }
    }

    package struct Rule: Sendable {
        package let name: String
        package let identities: [String]?
        package let callers: [Caller]?
        /// Passphrases.
        package let networks: [String]?
        package let kinds: Set<Kind>
        package let operations: Set<String>?
        /// Contract `C…` → its functions allowed (nil: any of them).
        package let contracts: [String: Set<String>?]?
        package let destinations: [Destination]?
        package let assets: [String]?
        package let limits: [Limit]
        /// Stroops.
        package let maxFee: Int64?
        /// Seconds: a transaction must have a latest time, no further ahead than this.
        package let expiresWithin: Int?
        /// Sign V1 authorization preimages, whose signature binds no address (refused otherwise).
        package let allowsV1Authorizations: Bool
    }

    package let rules: [Rule]

    /// The longest window and `expiresWithin` (a year): a window holds what was spent for that long.
    package static let longestDuration = 366 * 86_400
    /// The largest policy file read.
    package static let largestFile = 1 << 20

    // MARK: Reading

    /// A policy read from `bytes` (the file's contents).
    package init(json bytes: [UInt8]) throws {
        let top: [String: StrictJSON.Value]
        do {
            top = try StrictJSON.parse(bytes, integersOnly: false)
        } catch let violation as StrictJSON.Violation {
            throw PolicyError.invalid(field: nil, line: violation.line, violation.reason)
        } catch {
            throw PolicyError.invalid(field: nil, line: nil, "\(error)")
        }
        var fields = Fields(top, path: "")
        do {
            guard try fields.integer("version", required: true) == 1 else { throw PolicyError.invalid(field: "version", line: nil, "this reader knows version 1") }
            let rules = try fields.list("rules", required: true)!.enumerated().map { index, value in
                try Rule(Fields(try Fields.object(value, path: "rules[\(index)]"), path: "rules[\(index)]"))
            }
            try fields.finish()
            var names = Set<String>()
            for (index, rule) in rules.enumerated() where !names.insert(rule.name).inserted {
                throw PolicyError.invalid(field: "rules[\(index)].name", line: nil, "another rule is named \(rule.name)")
            }
            self.rules = rules
        }
    }

    /// The policy in the file at `path`, which must be a regular file of this user's that no one else can write
    /// (the file decides what the agent signs), read through one descriptor: what is checked is what is read.
    package init(contentsOf path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw errno == ELOOP ? PolicyError.unsafeFile(path) : PolicyError.unreadable(path, errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw PolicyError.unsafeFile(path)
        }
        guard info.st_size <= Self.largestFile else { throw PolicyError.invalid(field: nil, line: nil, "it is larger than 1 MiB") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw PolicyError.unreadable(path, errno) }
            if got == 0 { break }
            count += got
        }
        guard count <= Self.largestFile else { throw PolicyError.invalid(field: nil, line: nil, "it is larger than 1 MiB") }
        try self.init(json: Array(bytes[..<count]))
    }

    // MARK: Amounts and durations

    /// Stroops from a decimal string in the asset's units, up to 7 decimals ("100", "0.5"); nil if it is not one
    /// or does not fit 64 bits.
    package static func stroops(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit),
              whole.count <= 19 else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 7, fraction.allSatisfy(\.isASCIIDigit), parts.count == 1 || !fraction.isEmpty else { return nil }
        fraction += String(repeating: "0", count: 7 - fraction.count)
        guard let units = Int64(whole), let part = Int64(fraction) else { return nil }
        let (scaled, overflow) = units.multipliedReportingOverflow(by: 10_000_000)
        guard !overflow else { return nil }
        let (sum, over) = scaled.addingReportingOverflow(part)
        return over ? nil : sum
    }

    /// Stroops as the asset's units, without trailing zeros: "96.5", "100".
    package static func units(_ stroops: Int64) -> String {
        let whole = stroops / 10_000_000, part = stroops % 10_000_000
        guard part != 0 else { return "\(whole)" }
        var fraction = String(part)
        fraction = String(repeating: "0", count: 7 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }

    /// Seconds from "90s", "15m", "24h", "7d"; nil if it is not one or is not from 1 s to `longestDuration`.
    package static func seconds(_ text: String) -> Int? {
        guard let unit = text.last, let count = Int(text.dropLast()), text.dropLast().allSatisfy(\.isASCIIDigit), count > 0,
              count <= longestDuration else { return nil }
        let seconds: Int
        switch unit {
        case "s": seconds = count
        case "m": seconds = count * 60
        case "h": seconds = count * 3600
        case "d": seconds = count * 86_400
        default: return nil
        }
        return seconds <= longestDuration ? seconds : nil
    }

    /// "24h" for 86400, "90s" for 90: the largest unit that divides it.
    package static func duration(_ seconds: Int) -> String {
        if seconds % 86_400 == 0 && seconds >= 86_400 * 2 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Why a policy file was not taken.
package enum PolicyError: KeystoreError, Equatable {
    /// Not a regular file of this user's that no one else can write.
    case unsafeFile(String)
    case unreadable(String, Int32)
    /// A fault at `field` (its path, `rules[2].limits[0].perWindow`) or, without one, in the JSON at `line`.
    case invalid(field: String?, line: Int?, String)
    /// Rules name callers, and the kernel does not say which process wrote each request (before Linux 6.5).
    case writersNotNamed

    package var message: String {
        switch self {
        case .unsafeFile(let path):
            "The policy \(TerminalText.escaped(path, limit: nil)) is not a regular file of yours that no one else can write; it was not read."
        case .unreadable(let path, let code): "The policy \(TerminalText.escaped(path, limit: nil)) could not be read: \(String(cString: strerror(code)))."
        case .invalid(let field, let line, let reason):
            "The policy is refused: " + [line.map { "line \($0)" }, field].compactMap { $0 }.joined(separator: ", ")
                + (field == nil && line == nil ? "" : ": ") + reason + "."
        case .writersNotNamed:
            "The policy's rules name callers, and this kernel does not say which process wrote each request (SO_PASSPIDFD, "
                + "Linux 6.5): a connection passed to another process would still be taken for the one that made it. The agent did not start."
        }
    }
}

extension AgentPolicy.Rule {
    init(_ fields: AgentPolicy.Fields) throws {
        var fields = fields
        name = try fields.string("name", required: true)!
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || Array("._-".utf8).contains(byte)
        }) else {
            throw fields.fault("name", "a rule's name is 1 to 64 letters, digits, '.', '_' or '-'")
        }
        identities = try fields.strings("identities") { path, text throws in
            if text.hasPrefix("G") && text.utf8.count == 56 {
                guard (try? PublicKey(accountID: text)) != nil else { throw PolicyError.invalid(field: path, line: nil, "not a valid G… address") }
            }
            return text
        }
        callers = try fields.list("callers")?.enumerated().map { index, value throws in
            let path = fields.path("callers[\(index)]")
            var caller = AgentPolicy.Fields(try AgentPolicy.Fields.object(value, path: path), path: path)
            let executable = try caller.string("executable", required: true)!
            let parents = try caller.strings("parents") { path, text throws in
                guard text.hasPrefix("/") else { throw PolicyError.invalid(field: path, line: nil, "an executable is named by its absolute path") }
                return text
            } ?? []
            guard executable.hasPrefix("/") else { throw caller.fault("executable", "an executable is named by its absolute path") }
            let uid = try caller.integer("uid").map { value throws in
                guard let uid = UInt32(exactly: value) else { throw caller.fault("uid", "not a uid") }
                return uid
            }
            try caller.finish()
            return AgentPolicy.Caller(executable: executable, parents: parents, uid: uid)
        }
        networks = try fields.strings("networks") { path, text throws in
            if let named = try? StellarNetwork(named: text) { return named.passphrase }
            guard text.contains(" ") else { throw PolicyError.invalid(field: path, line: nil, "not public, testnet, futurenet or a network passphrase") }
            return text
        }
        kinds = Set(try fields.strings("kinds", required: true) { path, text throws in
            guard AgentPolicy.Kind(rawValue: text) != nil else {
                throw PolicyError.invalid(field: path, line: nil, "not one of transaction, authEntry, message, payload")
            }
            return text
        }!.compactMap(AgentPolicy.Kind.init(rawValue:)))
        operations = try fields.strings("operations") { path, text throws in
            guard Outflow.operationNames.contains(text) else { throw PolicyError.invalid(field: path, line: nil, "not an operation type (payment, invokeHostFunction, …)") }
            return text
        }.map(Set.init)
        contracts = try fields.list("contracts").map { list throws in
            var contracts: [String: Set<String>?] = [:]
            for (index, value) in list.enumerated() {
                let path = fields.path("contracts[\(index)]")
                var entry = AgentPolicy.Fields(try AgentPolicy.Fields.object(value, path: path), path: path)
                let contract = try entry.string("contract", required: true)!
                guard (try? StrKey(contract, as: .contract)) != nil else { throw entry.fault("contract", "not a contract address C…") }
                guard contracts[contract] == nil else { throw entry.fault("contract", "the contract is listed twice") }
                contracts[contract] = try entry.strings("functions") { _, text in text }.map(Set.init)
                try entry.finish()
            }
            return contracts
        }
        destinations = try fields.list("destinations")?.enumerated().reduce(into: [AgentPolicy.Destination]()) { list, item throws in
            let path = fields.path("destinations[\(item.offset)]")
            let destination = try AgentPolicy.Destination(item.element, path: path)
            guard !list.contains(destination) else { throw PolicyError.invalid(field: path, line: nil, "listed twice") }
            list.append(destination)
        }
        assets = try fields.strings("assets") { path, text throws in
            try AgentPolicy.Fields.asset(text, path: path)
        }
        limits = try (fields.list("limits") ?? []).enumerated().map { index, value throws in
            let path = fields.path("limits[\(index)]")
            var limit = AgentPolicy.Fields(try AgentPolicy.Fields.object(value, path: path), path: path)
            let asset = try AgentPolicy.Fields.asset(try limit.string("asset", required: true)!, path: limit.path("asset"))
            let perRequest = try limit.amount("perRequest")
            let perWindow = try limit.amount("perWindow")
            let window = try limit.duration("window")
            let ask = try limit.boolean("ask") ?? false
            try limit.finish()
            guard perRequest != nil || perWindow != nil else { throw limit.fault(nil, "a limit sets perRequest, perWindow or both") }
            guard (perWindow == nil) == (window == nil) else { throw limit.fault(window == nil ? "window" : "perWindow", "perWindow and window go together") }
            return AgentPolicy.Limit(asset: asset, perRequest: perRequest, perWindow: perWindow, window: window, ask: ask)
        }
        maxFee = try fields.amount("maxFee")
        expiresWithin = try fields.duration("expiresWithin")
        allowsV1Authorizations = try fields.boolean("allowV1Authorizations") ?? false
        try fields.finish()
        // A raw payload can be a transaction's hash: limits on a payload rule would be a promise nothing keeps.
        let limiting = [("limits", !limits.isEmpty), ("destinations", destinations != nil), ("assets", assets != nil),
                        ("operations", operations != nil), ("contracts", contracts != nil), ("maxFee", maxFee != nil),
                        ("expiresWithin", expiresWithin != nil)]
        if kinds.contains(.payload), let (field, _) = limiting.first(where: \.1) {
            throw fields.fault(field, "a rule for payloads sets no limits, since a payload can be a transaction's hash "
                + "(give payloads a rule of their own)")
        }
        // An authorization entry expires at a ledger, and the agent, offline, knows no ledger to bound it by: entries
        // signed over weeks could all be submitted in one day, so a window would promise what nothing keeps.
        if kinds.contains(.authEntry), let index = limits.firstIndex(where: { $0.perWindow != nil }) {
            throw PolicyError.invalid(field: fields.path("limits[\(index)].perWindow"), line: nil,
                "a window cannot cap authorization entries: their expiration is a ledger, which the agent cannot place in time, "
                + "so entries signed over weeks could be submitted together (give authorization entries a rule of their own, with perRequest)")
        }
        if expiresWithin != nil, !kinds.contains(.transaction) {
            throw fields.fault("expiresWithin", "expiresWithin bounds a transaction's time bounds; an authorization entry's expiration is "
                + "a ledger, which the agent cannot place in time")
        }
        // A window counts a transaction's spend until its latest time is a window past (`PolicyWindows.submittable`):
        // one without a latest time could be submitted any day, with a month's others, past the window's cap.
        if kinds.contains(.transaction), expiresWithin == nil, limits.contains(where: { $0.perWindow != nil }) {
            throw fields.fault("expiresWithin", "a rule that sets perWindow for transactions sets expiresWithin (a transaction "
                + "without a latest time can be saved up and submitted with later ones, past the window)")
        }
        // Without operations, a limited rule would still allow setOptions (a new signer) and the like, which move nothing;
        // and contracts, which judges contract calls only, would let any classic operation through (an accountMerge).
        let capped = limiting.filter { ["limits", "destinations", "assets", "maxFee", "contracts"].contains($0.0) }
        if kinds.contains(.transaction), operations == nil, let (field, _) = capped.first(where: \.1) {
            throw fields.fault("operations", "a rule that sets \(field) for transactions lists its operations "
                + "(without, it allows every operation that moves nothing, setOptions too)")
        }
    }
}

extension AgentPolicy.Destination {
    /// `"G…"`, or `{"destination": "G…", "memoText": "…"}` (1 to 28 bytes) or `{…, "memoId": "…"}` (a decimal
    /// string, since a memo id takes 64 bits and a JSON number does not keep them in every reader).
    init(_ value: StrictJSON.Value, path: String) throws {
        if let text = value.string {
            self.init(address: try Self.address(text, path: path), memo: nil)
            return
        }
        guard value.object != nil else { throw PolicyError.invalid(field: path, line: nil, "\(value.kind.rawValue), not a string or an object") }
        var entry = AgentPolicy.Fields(try AgentPolicy.Fields.object(value, path: path), path: path)
        let address = try Self.address(try entry.string("destination", required: true)!, path: entry.path("destination"))
        let text = try entry.string("memoText"), id = try entry.string("memoId")
        try entry.finish()
        var memo: Outflow.Memo?
        if let text {
            guard (1...28).contains(text.utf8.count) else { throw entry.fault("memoText", "a memo's text is 1 to 28 bytes") }
            memo = .text(Array(text.utf8))
        }
        if let id {
            guard text == nil else { throw entry.fault(nil, "a transaction has one memo: give memoText or memoId, not both") }
            guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = UInt64(id) else {
                throw entry.fault("memoId", "a memo id is a decimal string from 0 to 18446744073709551615")
            }
            memo = .id(value)
        }
        self.init(address: address, memo: memo)
    }

    static func address(_ text: String, path: String) throws -> String {
        guard let key = try? StrKey(text), key.kind == .accountID || key.kind == .contract || key.kind == .muxedAccount else {
            throw PolicyError.invalid(field: path, line: nil, "not an account G…, a muxed account M… or a contract C…")
        }
        return text
    }
}

extension [AgentPolicy.Destination] {
    /// Why a request with `memo` may not send to `destination`, naming the memo it lacks; nil when it may.
    func refusal(of destination: String, memo: Outflow.Memo?, in kind: AgentPolicy.Kind) -> String? {
        guard !contains(where: { $0.takes(destination, memo: memo) }) else { return nil }
        guard let required = first(where: { $0.address == destination && $0.memo != nil })?.memo else {
            if let account = (try? StrKey(destination, as: .muxedAccount))?.ed25519PublicKey?.accountID,
               contains(where: { $0.address == account && $0.memo != nil }) {
                return "destination \(destination) is not allowed: its account is listed with a memo, which a muxed id would route around"
            }
            return "destination \(destination) is not allowed"
        }
        let given = memo.map { "this transaction's is \($0.shown)" } ?? (kind == .transaction ? "this transaction has none" : "this request has none")
        return "destination \(destination) takes only memo \(required.shown): \(given)"
    }
}

extension AgentPolicy {
    /// An object's members, taken one by one, each named by its path; `finish` refuses any left over.
    struct Fields {
        private var members: [String: StrictJSON.Value]
        private let prefix: String

        init(_ members: [String: StrictJSON.Value], path: String) {
            self.members = members
            prefix = path
        }

        func path(_ name: String) -> String { prefix.isEmpty ? name : name.hasPrefix("[") ? prefix + name : prefix + "." + name }

        func fault(_ name: String?, _ reason: String) -> PolicyError {
            .invalid(field: name.map(path) ?? (prefix.isEmpty ? nil : prefix), line: nil, reason)
        }

        static func object(_ value: StrictJSON.Value, path: String) throws -> [String: StrictJSON.Value] {
            guard let object = value.object else { throw PolicyError.invalid(field: path, line: nil, "\(value.kind.rawValue), not an object") }
            return object
        }

        private mutating func take(_ name: String, _ kind: StrictJSON.Kind, required: Bool) throws -> StrictJSON.Value? {
            guard let value = members.removeValue(forKey: name) else {
                if required { throw fault(name, "missing") }
                return nil
            }
            guard value.kind == kind else { throw fault(name, "\(value.kind.rawValue), not \(kind.rawValue)") }
            return value
        }

        mutating func string(_ name: String, required: Bool = false) throws -> String? {
            try take(name, .string, required: required)?.string
        }

        mutating func boolean(_ name: String) throws -> Bool? {
            guard case .boolean(let value)? = try take(name, .boolean, required: false) else { return nil }
            return value
        }

        mutating func integer(_ name: String, required: Bool = false) throws -> Int64? {
            guard let value = try take(name, .integer, required: required) else { return nil }
            guard let integer = value.integer(as: Int64.self) else { throw fault(name, "a number too large") }
            return integer
        }

        /// A non-empty list.
        mutating func list(_ name: String, required: Bool = false) throws -> [StrictJSON.Value]? {
            guard case .array(let items)? = try take(name, .array, required: required) else { return nil }
            guard !items.isEmpty else { throw fault(name, "an empty list matches nothing (leave the field out to match every request)") }
            return items
        }

        /// A non-empty list of distinct strings, each checked by `check` (given its path).
        mutating func strings(_ name: String, required: Bool = false,
                              _ check: (String, String) throws -> String) throws -> [String]? {
            guard let items = try list(name, required: required) else { return nil }
            var seen: [String] = []
            for (index, item) in items.enumerated() {
                let itemPath = path("\(name)[\(index)]")
                guard let text = item.string else { throw PolicyError.invalid(field: itemPath, line: nil, "\(item.kind.rawValue), not a string") }
                let checked = try check(itemPath, text)
                guard !seen.contains(checked) else { throw PolicyError.invalid(field: itemPath, line: nil, "listed twice") }
                seen.append(checked)
            }
            return seen
        }

        /// An amount in the asset's units, as a decimal string: "100", "0.5".
        mutating func amount(_ name: String) throws -> Int64? {
            guard let text = try string(name) else { return nil }
            guard let stroops = AgentPolicy.stroops(text) else {
                throw fault(name, "an amount is a decimal string of at most 7 decimals, from 0 to 922337203685.4775807")
            }
            return stroops
        }

        mutating func duration(_ name: String) throws -> Int? {
            guard let text = try string(name) else { return nil }
            guard let seconds = AgentPolicy.seconds(text) else { throw fault(name, "a duration is a count and s, m, h or d, from 1s to 366d") }
            return seconds
        }

        static func asset(_ text: String, path: String) throws -> String {
            if text == "native" || (try? StrKey(text, as: .contract)) != nil { return text }
            guard StellarAssetContract.id(of: text, on: .testnet) != nil else {
                throw PolicyError.invalid(field: path, line: nil, "an asset is native, CODE:ISSUER or a contract C…")
            }
            return text
        }

        func finish() throws {
            if let unknown = members.keys.sorted().first { throw fault(unknown, "not a field this reader knows") }
        }
    }
}
