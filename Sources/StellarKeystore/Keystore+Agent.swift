import StellarKeys
import StellarTransactions

extension Keystore {
    // MARK: The signing agent

    /// Hands identity `signer`'s key to the agent behind `client`, for at most `ttl` seconds. The signer comes
    /// from `signIn`, so the PIN, its wait after wrong guesses and the TPM's lockout all applied here, in the
    /// client, where the person is.
    public func addToAgent(_ signer: Signer, client: AgentClient, ttl: Duration? = nil) throws {
        try client.add(signer, keystore: identity(signer.name).keystore, ttl: ttl.map { Int($0.components.seconds) })
    }

    /// Drops identity `name`'s key from the agent; returns how many keys went (0 or 1).
    @discardableResult
    public func removeFromAgent(_ name: IdentityName, client: AgentClient) throws -> Int {
        try client.remove(name: name, keystore: identity(name).keystore)
    }

    /// The key a signing command uses, in this order: the agent's, when `agent` is given and holds the
    /// identity's current key (its address read from the vault, so that a key replaced since it was added is
    /// never used); the session's, when `sessionToken` is set and alive; else the vault's, with a PIN.
    ///
    /// An agent that is not running, or does not hold the key, falls through to the session or PIN with a
    /// warning saying why; without either, its error stands, so that a script never sits on a prompt nobody sees
    /// (the rule `signer(sessionToken:name:pinAvailable:pin:)` has for a dead session). With a session and no
    /// `name`, the identity is the session's, which only the session knows: the agent is not asked.
    public func signer(agent: AgentClient?, sessionToken: String?, name: IdentityName?, pinAvailable: Bool,
                       pin: () throws -> PIN) throws -> any Signing {
        if let agent, name != nil || sessionToken == nil {
            let identity = name ?? .default
            do {
                return try agent.signer(for: try address(of: identity), name: identity)
            } catch let error as AgentError {
                guard sessionToken != nil || pinAvailable else { throw error }
                warn("\(error.message) Using \(sessionToken != nil ? "the session" : "the PIN") instead.")
            }
        }
        return try signer(sessionToken: sessionToken, name: name, pinAvailable: pinAvailable, pin: pin)
    }
}
