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
}
