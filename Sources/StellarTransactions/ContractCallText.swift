import StellarKeys

/// What an `INVOKE_HOST_FUNCTION` operation does, for a person: the call with every argument (`SCValText`), a
/// sentence for the SEP-41 token functions whose arguments have exactly the expected types, what a contract
/// creation makes, and every authorisation entry with its credentials and its invocation tree (the first
/// `mostInvocations` calls of it), marked strict when its root is exactly this operation's call. What a bound
/// leaves out is an `Elision`, said where it happens.
enum ContractCallText {
    typealias Field = TransactionSummary.Field

    /// The calls of one invocation tree shown, in depth-first order; the rest are counted and hashed. A real
    /// call's tree holds a handful (a swap through a router, a few more); 11,000 of them once scrolled a
    /// summary's first lines out of a terminal.
    static let mostInvocations = 32

    static func fields(_ op: XDR.InvokeHostFunctionOp, elided: inout [Elision]) -> [Field] {
        var fields: [Field] = []
        func add(_ name: String, _ value: TransactionSummary.Value) { fields.append(.init(name: name, value: value)) }
        func shown(_ value: XDR.SCVal, at place: String) -> String {
            var found: [Elision] = []
            let text = SCValText.shown(value, elided: &found)
            elided += found.map { $0.at(place) }
            return text
        }
        switch op.hostFunction {
        case .invokeContract(let call):
            add("contract", .plain(SummaryText.address(call.contractAddress)))
            add("function", .text(call.functionName.value))
            add("arguments", .count(call.args.count))
            for (index, argument) in call.args.enumerated() {
                add("argument \(index + 1)", .typed(shown(argument, at: "argument \(index + 1)"), SCValJSON.tree(argument)))
            }
            if let sentence = sep41(call) { add("reads as", .plain(sentence)) }
        case .createContract(let create):
            add("creates", .plain(created(create.contractIDPreimage, create.executable)))
        case .createContractV2(let create):
            add("creates", .plain(created(create.contractIDPreimage, create.executable)))
            add("constructor args", .count(create.constructorArgs.count))
            for (index, argument) in create.constructorArgs.enumerated() {
                add("constructor arg \(index + 1)", .typed(shown(argument, at: "constructor arg \(index + 1)"), SCValJSON.tree(argument)))
            }
        case .wasm(let wasm):
            add("uploads", .plain("contract code of \(wasm.count) bytes, SHA-256 \(Hex.string(wasm.withUnsafeBytes { Sodium.sha256($0) }))"))
        }
        add("authorizations", .count(op.auth.count))
        for (index, entry) in op.auth.enumerated() {
            // Strictness is a question for an address's own signature; the source account's is the transaction's.
            var strictness = ""
            let strict = isStrict(entry, for: op.hostFunction)
            if case .sourceAccount = entry.credentials {} else {
                strictness = strict ? ", strict" : ", NOT STRICT: its root is not this call"
            }
            add("authorization \(index + 1)", .typed(credentials(entry.credentials) + strictness, SCValJSON.entry(entry, strict: strict)))
            if case .addressWithDelegates(let credentials) = entry.credentials {
                for (depth, delegate) in delegateLines(credentials.delegates) {
                    add(String(repeating: "  ", count: depth) + "delegate", .plain(delegate))
                }
            }
            var found: [Elision] = []
            for (depth, line) in invocationLines(entry.rootInvocation, elided: &found) {
                add(String(repeating: "  ", count: depth) + "invokes", .plain(line))
            }
            elided += found.map { $0.at("authorization \(index + 1)") }
        }
        return fields
    }

    /// Whether an entry authorises exactly this operation's host function at its root: a signature for anything
    /// else could be replayed in another transaction whose tree contains it.
    static func isStrict(_ entry: XDR.SorobanAuthorizationEntry, for function: XDR.HostFunction) -> Bool {
        switch (entry.rootInvocation.function, function) {
        case (.contractFn(let authorized), .invokeContract(let called)):
            return exact(authorized) == exact(called)
        case (.createContractHostFn(let authorized), .createContract(let called)):
            return created(authorized.contractIDPreimage, authorized.executable) == created(called.contractIDPreimage, called.executable)
        case (.createContractV2HostFn(let authorized), .createContractV2(let called)):
            return created(authorized.contractIDPreimage, authorized.executable) == created(called.contractIDPreimage, called.executable)
                && authorized.constructorArgs.map(SCValText.exact) == called.constructorArgs.map(SCValText.exact)
        default:
            return false
        }
    }

    static func credentials(_ credentials: XDR.SorobanCredentials) -> String {
        func address(_ address: XDR.SorobanAddressCredentials) -> String {
            "\(SummaryText.address(address.address)), nonce \(address.nonce), signature expires after ledger \(address.signatureExpirationLedger)"
        }
        switch credentials {
        case .sourceAccount: return "by the transaction's source account"
        case .address(let credentials): return "by " + address(credentials)
        case .addressV2(let credentials): return "by " + address(credentials) + " (bound to the address, CAP-71)"
        case .addressWithDelegates(let credentials):
            return "by " + address(credentials.addressCredentials) + ", with \(credentials.delegates.count) delegate signature(s)"
        }
    }

    /// A delegate tree (CAP-71), one line per delegate with its depth, depth first: its address and whether it is
    /// signed yet. Bounded by the entry's size, as the tree is.
    static func delegateLines(_ delegates: [XDR.SorobanDelegateSignature], depth: Int = 0) -> [(Int, String)] {
        delegates.flatMap { delegate -> [(Int, String)] in
            let signed = if case .void = delegate.signature { "not signed yet" } else { "signed" }
            return [(depth, "\(SummaryText.address(delegate.address)), \(signed)")] + delegateLines(delegate.nestedDelegates, depth: depth + 1)
        }
    }

    /// The invocation tree, one line per call with its depth, depth first: the first `mostInvocations` calls,
    /// then a line that counts the rest (their exact form's SHA-256 is in `elided`).
    static func invocationLines(_ root: XDR.SorobanAuthorizedInvocation, elided: inout [Elision]) -> [(Int, String)] {
        var lines: [(Int, String)] = [], notShown: [String] = [], count = 0
        func walk(_ invocation: XDR.SorobanAuthorizedInvocation, depth: Int) {
            count += 1
            if lines.count < mostInvocations {
                var found: [Elision] = []
                lines.append((depth, line(invocation.function, elided: &found)))
                elided += found.map { $0.at("invocation \(count)") }
            } else {
                notShown.append("\(depth) " + exact(invocation.function).joined(separator: ", "))
            }
            // Depth is bounded by the XDR reader (`XDRReader.maximumDepth`), so this recursion is too.
            for invoked in invocation.subInvocations { walk(invoked, depth: depth + 1) }
        }
        walk(root, depth: 0)
        if !notShown.isEmpty {
            lines.append((0, "… \(notShown.count) more invocations not shown"))
            elided.append(Elision("\(notShown.count) of \(count) invocations not shown", hashing: notShown.joined(separator: "\n"),
                                  of: "their exact form", isWhole: true))
        }
        return lines
    }

    private static func line(_ function: XDR.SorobanAuthorizedFunction, elided: inout [Elision]) -> String {
        func shown(_ arguments: [XDR.SCVal]) -> String {
            arguments.enumerated().map { index, argument in
                var found: [Elision] = []
                let text = SCValText.shown(argument, elided: &found)
                elided += found.map { $0.at("argument \(index + 1)") }
                return text
            }.joined(separator: ", ")
        }
        switch function {
        case .contractFn(let invoked):
            return "\(SummaryText.address(invoked.contractAddress)) \(SummaryText.quoted(invoked.functionName.value))(" + shown(invoked.args) + ")"
        case .createContractHostFn(let create):
            return "create " + created(create.contractIDPreimage, create.executable)
        case .createContractV2HostFn(let create):
            return "create " + created(create.contractIDPreimage, create.executable) + " with (" + shown(create.constructorArgs) + ")"
        }
    }

    /// An authorization context, as a smart account's rule is chosen for it: the contract and function called,
    /// or the contract created.
    static func contextName(_ function: XDR.SorobanAuthorizedFunction) -> String {
        switch function {
        case .contractFn(let invoked): "\(SummaryText.address(invoked.contractAddress)) \(SummaryText.quoted(invoked.functionName.value))"
        case .createContractHostFn(let create): "creating " + created(create.contractIDPreimage, create.executable)
        case .createContractV2HostFn(let create): "creating " + created(create.contractIDPreimage, create.executable)
        }
    }

    /// A function of an invocation tree in a form no two different ones share: what an elision of it hashes.
    private static func exact(_ function: XDR.SorobanAuthorizedFunction) -> [String] {
        switch function {
        case .contractFn(let invoked): exact(invoked)
        case .createContractHostFn(let create): ["create", created(create.contractIDPreimage, create.executable)]
        case .createContractV2HostFn(let create):
            ["create", created(create.contractIDPreimage, create.executable)] + create.constructorArgs.map(SCValText.exact)
        }
    }

    private static func exact(_ call: XDR.InvokeContractArgs) -> [String] {
        [SummaryText.address(call.contractAddress), Hex.string(call.functionName.value)] + call.args.map(SCValText.exact)
    }

    static func created(_ preimage: XDR.ContractIDPreimage, _ executable: XDR.ContractExecutable) -> String {
        let code: String
        switch executable {
        case .wasmHash(let hash): code = "Wasm \(Hex.string(hash.value))"
        case .stellarAsset: code = "the Stellar asset contract"
        case .externalRef: code = "an external executable"
        }
        switch preimage {
        case .fromAddress(let from):
            return "a contract of \(code), deployed by \(SummaryText.address(from.address)) with salt \(Hex.string(from.salt.value))"
        case .fromAsset(let asset): return "\(code) for \(SummaryText.asset(asset))"
        }
    }

    // MARK: SEP-41

    /// The SEP-41 token functions, by their argument types; a call with other types gets no sentence, since a
    /// name alone proves nothing about what a contract does.
    private enum Kind { case address, amount, ledger }
    private static let tokenFunctions: [String: [Kind]] = [
        "transfer": [.address, .address, .amount], "transfer_from": [.address, .address, .address, .amount],
        "approve": [.address, .address, .amount, .ledger], "burn": [.address, .amount], "burn_from": [.address, .address, .amount],
        "mint": [.address, .amount], "clawback": [.address, .amount],
    ]

    static func sep41(_ call: XDR.InvokeContractArgs) -> String? {
        let name = String(decoding: call.functionName.value, as: UTF8.self)
        guard let kinds = tokenFunctions[name], kinds.count == call.args.count else { return nil }
        var addresses: [String] = []
        var amount = ""
        var ledger = ""
        for (kind, argument) in zip(kinds, call.args) {
            switch (kind, argument) {
            case (.address, .address(let address)): addresses.append(SummaryText.address(address))
            case (.amount, .i128(let parts)): amount = WideInteger(signedWords: [UInt64(bitPattern: parts.hi), parts.lo]).decimal
            case (.ledger, .u32(let number)): ledger = String(number)
            default: return nil
            }
        }
        let quantity = "\(amount) (\(sevenDecimals(amount)) at 7 decimals, as every Stellar Asset Contract has)"
        let contract = SummaryText.address(call.contractAddress)
        switch name {
        case "transfer": return "transfer \(quantity) from \(addresses[0]) to \(addresses[1]) on \(contract)"
        case "transfer_from": return "\(addresses[0]) transfers \(quantity) from \(addresses[1]) to \(addresses[2]) on \(contract)"
        case "approve": return "\(addresses[0]) lets \(addresses[1]) spend \(quantity) until ledger \(ledger) on \(contract)"
        case "burn": return "burn \(quantity) of \(addresses[0]) on \(contract)"
        case "burn_from": return "\(addresses[0]) burns \(quantity) of \(addresses[1]) on \(contract)"
        case "mint": return "mint \(quantity) to \(addresses[0]) on \(contract)"
        default: return "claw back \(quantity) from \(addresses[0]) on \(contract)"
        }
    }

    /// An exact decimal integer with the point moved 7 places left.
    static func sevenDecimals(_ integer: String) -> String {
        let negative = integer.hasPrefix("-")
        let digits = negative ? String(integer.dropFirst()) : integer
        let padded = String(repeating: "0", count: max(0, 8 - digits.count)) + digits
        return (negative ? "-" : "") + padded.dropLast(7) + "." + padded.suffix(7)
    }
}
