import Glibc
import StellarKeystore
import StellarText
import StellarKeys
import StellarTransactions

/// The protocol's methods (docs/AGENT.md), answered.
extension KeystoreAgent {
    /// The answer to one request line (its newline included), and the log line for it. `addKey` is answered by
    /// the connection itself, since its seed follows the request.
    package func answer(_ request: AgentRequest, from peer: AgentCaller) -> (response: [UInt8], log: String) {
        let code: AgentProtocol.ErrorCode, message: String, reason: String?
        do {
            let (result, identity) = try result(for: request, from: peer)
            return (AgentJSON.result(id: request.id, result), "\(request.method.rawValue) \(identity) ok")
        } catch AgentError.rejected(let why) {
            let error = AgentError.rejected(why)
            let logged = switch why {
            case .declined: "declined"
            case .timedOut: "withdrawn: nobody answered within \(questionTimeout) s"
            case .keyDropped: "withdrawn: its key was dropped"
            case .clientLeft: "withdrawn: the client left"
            }
            return (AgentJSON.error(id: request.id, code: error.code, message: error.message, reason: error.reason),
                    "\(request.method.rawValue) \(logged)")
        } catch let refusal as AgentRequest.Refusal {
            (code, message, reason) = (.invalidRequest, refusal.message, nil)
        } catch let error as AgentError {
            (code, message, reason) = (error.code, error.message, error.reason)
        } catch {
            (code, message, reason) = (.invalidRequest, (error as? KeystoreError)?.message ?? "\(error)", nil)
        }
        return (AgentJSON.error(id: request.id, code: code, message: message, reason: reason),
                "\(request.method.rawValue) refused: \(message)")
    }

    private func result(for request: AgentRequest, from peer: AgentCaller) throws -> (AgentJSON, String) {
        func named(_ key: HeldKey) -> String { "\(key.name.rawValue) \(key.address)" }
        func signed(_ key: HeldKey, _ members: [(String, AgentJSON)]) -> (AgentJSON, String) {
            (.object(members + [("signerAddress", .string(key.address))]), named(key))
        }
        switch request.method {
        case .getAddress:
            let key = try key(for: try request.string("address"), signing: false)
            return (.object([("address", .string(key.address))]), named(key))
        case .signPayload:
            let payload = try request.base64("payload") ?? { throw AgentRequest.Refusal(id: request.id, message: "'payload' is missing") }()
            let (signature, key) = try signing(.payload(payload), for: try request.string("address"), by: peer, as: PolicyFacts(kind: .payload))
            return signed(key, [("signature", .string(Base64.string(signature)))])
        case .signMessage:
            let text = try request.string("message")
            let base64 = try request.base64("messageBase64")
            guard (text == nil) != (base64 == nil) else {
                throw AgentRequest.Refusal(id: request.id, message: "give exactly one of 'message' and 'messageBase64'")
            }
            let message = text.map { Array($0.utf8) } ?? base64 ?? []
            let (signature, key) = try signing(.message(message), for: try request.string("address"), by: peer, as: PolicyFacts(kind: .message))
            return signed(key, [("signedMessage", .string(Base64.string(signature)))])
        case .signTransaction:
            let xdr = try request.requiredString("xdr"), passphrase = try request.requiredString("networkPassphrase")
            let envelope = try TransactionEnvelope(base64: xdr)
            let network = try StellarNetwork(passphrase: passphrase)
            let facts = PolicyFacts(kind: .transaction) { Outflow(of: envelope) }
            let (result, key) = try signing(.transaction(envelope, network: network), for: try request.string("address"), by: peer, as: facts)
            return signed(key, [("signedTxXdr", .string(result.base64))])
        case .signAuthEntry:
            let authEntry = try request.requiredString("authEntry"), passphrase = try request.requiredString("networkPassphrase")
            let preimage = try AuthorizationPreimage(base64: authEntry)
            let network = try StellarNetwork(passphrase: passphrase)
            let rules = try request.ruleIDs("contextRuleIds")
            let form = try request.string("signatureForm").map { text in
                try P256SignatureForm(argument: text) ?? { throw AgentRequest.Refusal(id: request.id, message: "'signatureForm' is webauthn or secp256r1") }()
            } ?? .webAuthn
            let facts = PolicyFacts(kind: .authEntry, isV1Authorization: preimage.boundAddress == nil) { Outflow(of: preimage) }
            let (signature, key) = try signing(.authorization(preimage, network: network, contextRuleIDs: rules, allowing: options.allowing,
                                                              p256Form: form),
                                               for: try request.string("address"), by: peer, as: facts)
            return signed(key, [("signedAuthEntry", .string(Base64.string(signature)))])
        case .listKeys:
            let listed = heldKeys().map { key -> AgentJSON in
                .object([("name", .string(key.name)), ("keystore", .string(key.keystore)), ("address", .string(key.address)),
                         ("expiresIn", key.expiresIn.map(AgentJSON.integer) ?? .null),
                         ("idleExpiresIn", key.idleExpiresIn.map(AgentJSON.integer) ?? .null)])
            }
            return (.object([("keys", .array(listed))]), "")
        case .status:
            return (.object([("pid", .integer(Int(getpid()))), ("socket", .string(socketPath)), ("keys", .integer(heldKeys().count)),
                             ("ttl", options.ttl.map(AgentJSON.integer) ?? .null), ("idle", options.idle.map(AgentJSON.integer) ?? .null),
                             ("confirm", .boolean(options.confirm != nil)),
                             ("allowV1", .boolean(options.allowing.contains(.notAddressBound))),
                             ("socketActivated", .boolean(isSocketActivated)),
                             ("confirmScope", options.confirm == nil ? .null : .string(options.confirmationScope.rawValue)),
                             ("confirmTimeout", options.confirm == nil ? .null : .integer(questionTimeout)),
                             ("policy", try policyWindows())]), "")
        case .lock:
            return (.object([("removed", .integer(lockAll()))]), "")
        case .removeKey:
            let address = try request.string("address"), name = try request.string("name")
            guard (address == nil) != (name == nil) else {
                throw AgentRequest.Refusal(id: request.id, message: "give exactly one of 'address' and 'name'")
            }
            let removed = remove(address: address, name: name, keystore: try request.string("keystore"))
            return (.object([("removed", .integer(removed))]), address ?? name ?? "")
        case .addKey, .shutdown:
            throw AgentRequest.Refusal(id: request.id, message: "\(request.method.rawValue) is answered by the connection")
        }
    }

    /// Each windowed limit of the policy's rules and what was spent in it; null without a policy.
    private func policyWindows() throws -> AgentJSON {
        guard let windows = options.policy else { return .null }
        return .array(try windows.windows().map { window in
            .object([("rule", .string(window.rule)), ("asset", .string(window.limit.asset)), ("window", .integer(window.limit.window ?? 0)),
                     ("perWindow", .string(AgentPolicy.units(window.limit.perWindow ?? 0))), ("spent", .string(AgentPolicy.units(window.spent))),
                     ("ask", .boolean(window.limit.ask))])
        })
    }

    /// `request` signed by the held key for `address`, through the conversation every signing path has, once:
    /// its review (every check that needs only the public key), then, when the agent asks its person, the
    /// review's summary as the question, then its approval. A request that fails its review, or needs a consent the
    /// agent was not started to give, is refused before anyone is asked. After a yes the key is looked up again:
    /// one removed, locked or expired while the question was open signs nothing (and dropping it withdrew the
    /// question already). Without a question nobody reads a summary, so none is made (`approveUnshown`).
    private func signing<Signed>(_ request: SigningRequest<Signed>, for address: String?, by peer: AgentCaller,
                                 as facts: PolicyFacts) throws -> (Signed, HeldKey) {
        if let windows = options.policy { return try signing(request, for: address, by: peer, as: facts, under: windows) }
        guard asks(about: request.network) else {
            let key = try key(for: address, signing: true)
            return (try SigningKey(holding: key.signer).approveUnshown(request), key)
        }
        // Marked used when it signs, after the answer, not while a question waits.
        let key = try key(for: address, signing: false)
        let review = try SigningKey(holding: key.signer).review(request)
        if let needed = review.consentNeeded { throw needed.refusal }
        try ask(about: key, network: request.network, lines: review.summary.text, isElided: review.summary.isElided, by: peer)
        _ = try self.key(for: key.address, signing: true)
        return (try review.approve { throw ReviewError.noPIN }.signed, key)
    }

    /// `request` signed under the agent's policy: decided by the policy on what the agent decoded of it, under the
    /// windows' lock, which records what an allowed request spends before it is signed; then signed through the
    /// conversation every signing path has (its review's checks before its approval), so that nothing the review
    /// refuses is signed, and a record whose signature was not made is taken back. A refusal is SEP-43's −4 with
    /// the reason (`policy`), before any question. Over a limit that says `ask`, the agent's person is asked with
    /// the reason above the review's summary; after a yes the decision is made again, under the lock, and recorded
    /// (a hard limit reached meanwhile still refuses). An allowed request is signed without a summary
    /// (`approveUnshown`, which reviews it as fully): nobody reads one.
    private func signing<Signed>(_ request: SigningRequest<Signed>, for address: String?, by peer: AgentCaller, as facts: PolicyFacts,
                                 under windows: PolicyWindows) throws -> (Signed, HeldKey) {
        let key = try key(for: address, signing: false)
        let question = try facts.request(for: key, network: request.network, by: peer, parents: windows.policy.namesParents)
        let (decision, recorded) = try Self.refusingWhenLocked { try windows.decide(question) }
        switch decision {
        case .refuse(let reason): throw AgentError.refusedByPolicy(reason)
        case .allow:
            do {
                _ = try self.key(for: key.address, signing: true)
                return (try SigningKey(holding: key.signer).approveUnshown(request), key)
            } catch {
                if let recorded { try? windows.takeBack(recorded) }
                throw error
            }
        case .ask(let reason, _):
            guard options.confirm != nil else { throw AgentError.refusedByPolicy(reason + " (and nobody is asked at this agent)") }
            let review = try SigningKey(holding: key.signer).review(request)
            if let needed = review.consentNeeded { throw needed.refusal }
            try ask(about: key, network: request.network, lines: ["The policy asks: \(reason)."] + review.summary.text,
                    isElided: review.summary.isElided, by: peer)
            let (answered, recordedAfterYes) = try Self.refusingWhenLocked { try windows.decide(question, recordingAsk: true) }
            if case .refuse(let reason) = answered { throw AgentError.refusedByPolicy(reason) }
            do {
                _ = try self.key(for: key.address, signing: true)
                return (try review.approve { throw ReviewError.noPIN }.signed, key)
            } catch {
                if let recordedAfterYes { try? windows.takeBack(recordedAfterYes) }
                throw error
            }
        }
    }

    /// A windows file whose lock another process holds past the wait is the policy's refusal (SEP-43 −4, `policy`),
    /// naming the file: nothing is signed while what was spent cannot be read, and the client is told so rather
    /// than kept waiting.
    private static func refusingWhenLocked<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as PolicyWindowsError {
            guard case .locked = error else { throw error }
            throw AgentError.refusedByPolicy(error.reason)
        }
    }
}

/// What a policy needs of a request beyond its caller and key: its kind, and what it can move, read from the request
/// the agent decoded.
struct PolicyFacts {
    let kind: AgentPolicy.Kind
    var isV1Authorization = false
    var outflow: (() -> Outflow)? = nil

    func request(for key: HeldKey, network: StellarNetwork?, by caller: AgentCaller, parents: Bool) throws -> PolicyRequest {
        // Counted whatever the key's address (a P-256 smart-account signer's too): every operation and transfer counts.
        let counted = outflow?()
        return PolicyRequest(identityName: key.name.rawValue, identityAddress: key.address,
                             caller: caller.isWriterNamed
                                ? Self.caller(caller, parents: parents ? caller.parentExecutables() : [])
                                // Not a path: a rule's executable is absolute, so none matches.
                                : .init(executable: "a process the kernel did not name", uid: caller.uid),
                             network: network, kind: kind, outflow: counted, isV1Authorization: isV1Authorization)
    }
}

extension PolicyFacts {
    /// `caller` as a policy matches it: by the files it and its parents run (`PolicyRequest.Caller.files`).
    static func caller(_ caller: AgentCaller, parents: [(path: String, file: ExecutableFile?)]) -> PolicyRequest.Caller {
        .init(executable: caller.executablePath ?? "", parents: parents.map(\.path), uid: caller.uid,
              files: (caller.executableFile, parents.map(\.file)))
    }
}

extension AgentPolicy {
    /// Why an agent does not start with this policy, or nil: a listed executable missing (`missingExecutable()`),
    /// or callers named where the kernel does not name each request's writer (`namingWriters` false).
    package func refusalAtStart(namingWriters: Bool) -> PolicyError? {
        if let missing = missingExecutable() { return missing }
        return namesCallers && !namingWriters ? .writersNotNamed : nil
    }

    /// The first executable a rule names (or a parent of one) that no file is at, by its field's path; nil if each is
    /// there. An agent does not start with one: the rule could match nothing, and a file put there later is not
    /// what the policy was written for.
    func missingExecutable() -> PolicyError? {
        for (index, rule) in rules.enumerated() {
            for (number, caller) in (rule.callers ?? []).enumerated() {
                let field = "rules[\(index)].callers[\(number)]"
                for (path, listed) in [(field + ".executable", caller.executable)]
                    + caller.parents.enumerated().map({ (field + ".parents[\($0.offset)]", $0.element) })
                    where ExecutableFile(path: listed) == nil {
                    return .invalid(field: path, line: nil, "no file is at \(listed)")
                }
            }
        }
        return nil
    }

    /// Whether any rule names a caller's parents (only then is the chain read).
    var namesParents: Bool { rules.contains { $0.callers?.contains { !$0.parents.isEmpty } ?? false } }
    /// Whether any rule names callers, which only a kernel that names each request's writer can tell apart.
    var namesCallers: Bool { rules.contains { $0.callers != nil } }
}
