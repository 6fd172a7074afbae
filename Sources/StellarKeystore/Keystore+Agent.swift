import StellarKeys
import StellarTransactions

extension Keystore {
    // MARK: The signing agent

    /// Hands identity `name`'s key, whatever keeps it, to the agent behind `client`, for at most `ttl`: a sealed
    /// seed is opened here with its PIN and sent; a token's key or a TPM's is opened by the agent itself, with the
    /// PIN asked here (the agent must have the token's module or the TPM). `pin` is asked, once the key is ready
    /// for it, for the PIN that `KeyPIN` names.
    @discardableResult
    public func addToAgent(name: IdentityName, client: AgentClient, ttl: Duration? = nil, pin: (KeyPIN) throws -> PIN) throws -> OpenedKey {
        let key = try vaults.key(named: name)
        try key.checkReadyForPIN(in: self)
        try key.hand(to: client, ttl: ttl.map { Int($0.components.seconds) }, pin: pin(key.pin), in: self)
        return OpenedKey(name: name, key: key.key, token: key.token)
    }

    /// Drops identity `name`'s key from the agent; returns how many keys went (0 or 1).
    @discardableResult
    public func removeFromAgent(_ name: IdentityName, client: AgentClient) throws -> Int {
        try client.remove(name: name, keystore: identity(name).keystore)
    }
}
