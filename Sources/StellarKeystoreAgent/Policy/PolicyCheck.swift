import StellarKeys
import StellarTransactions

/// What an agent with a policy would answer to requests given as text, without a key or an agent: each request
/// decoded and counted as the agent does, asked for `identity`, and decided against the windows as they are in the
/// keystore directory, recording nothing (each request on its own, as if it were the next one).
package struct PolicyCheck {
    package let windows: PolicyWindows
    let identity: PublicKey
    let name: String?
    let caller: PolicyRequest.Caller
    let network: StellarNetwork
    let authEntries: Bool

    /// `network` is a well-known network's name or a passphrase; with `authEntries`, requests are authorization
    /// preimages (`signAuthEntry`), else transaction envelopes.
    package init(policy path: String, keystoreDirectory: String, identity: String, name: String?, caller: PolicyRequest.Caller,
                network: String, authEntries: Bool) throws {
        windows = PolicyWindows(directory: keystoreDirectory, policy: try AgentPolicy(contentsOf: path))
        self.identity = try PublicKey(accountID: identity)
        self.name = name
        self.caller = caller
        self.network = try (try? StellarNetwork(named: network)) ?? StellarNetwork(passphrase: network)
        self.authEntries = authEntries
    }

    /// The decision on one request in base64.
    package func decision(for text: String) throws -> PolicyDecision {
        let outflow: Outflow
        var isV1 = false
        if authEntries {
            let preimage = try AuthorizationPreimage(base64: text)
            try preimage.check(on: network)
            isV1 = preimage.boundAddress == nil
            outflow = Outflow(of: preimage)
        } else {
            outflow = Outflow(of: try TransactionEnvelope(base64: text))
        }
        let request = PolicyRequest(identityName: name, identityAddress: identity.accountID, caller: caller, network: network,
                                    kind: authEntries ? .authEntry : .transaction, outflow: outflow, isV1Authorization: isV1)
        return try windows.decision(for: request)
    }
}
