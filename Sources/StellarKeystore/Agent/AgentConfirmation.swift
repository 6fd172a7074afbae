#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StellarKeys

extension KeystoreAgent {
    /// The key that signs a request, once the `confirm` callback (if any) said yes to what `lines` show of it.
    /// Callbacks are asked one at a time; a no is SEP-43's −4. The key is taken again after the yes: one dropped
    /// meanwhile (`lock`, `removeKey`, its TTL) signs nothing, and no copy of it waits through the question.
    func approved(_ address: String?, by caller: AgentCaller, showing lines: (HeldKey) -> [String]) throws -> HeldKey {
        guard let confirm = options.confirm else { return try key(for: address, signing: true) }
        let (shown, held) = try { () throws(AgentError) -> ([String], String) in
            let key = try key(for: address, signing: false)
            return (lines(key), key.address)
        }()
        let yes = confirming.withLock { _ in confirm(AgentConfirmation(caller: caller.description, lines: shown)) }
        guard yes else { throw AgentError.rejected }
        return try key(for: held, signing: true)
    }
}

/// What `--confirm` shows before a signature: who asks, and what would be signed.
public struct AgentConfirmation: Sendable {
    /// The calling process: its pid and executable, as the kernel reports them.
    public let caller: String
    /// The summary, as `sign-tx` and `sign-auth` show theirs.
    public let lines: [String]
}
