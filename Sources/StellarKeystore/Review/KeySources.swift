import StellarKeys

/// Where a signing key may come from, in this order: a signing agent that holds the identity's current key, a
/// live session, the vault and its PIN (`Keystore.signingKey(as:keys:)` has the rule).
public struct KeySources: Sendable {
    let agent: AgentClient?
    let sessionToken: String?
    /// Whether a PIN can be had without waiting on nobody (a person at a terminal, a PIN given to the program):
    /// only then does a dead agent or session fall back to the vault. Asked only when one cannot sign.
    let isPINAvailable: @Sendable () -> Bool

    var pinAvailable: Bool { isPINAvailable() }

    /// The vault and its PIN only.
    public static let vault = KeySources(agent: nil, sessionToken: nil, isPINAvailable: { true })

    /// The agent behind `agent` when it holds the key, else the session `session` (a token as `SessionToken`
    /// reads it) when it is alive, else the vault. `pinAvailable`: whether the vault's PIN can be asked when the
    /// agent or session cannot sign; if not, their error stands.
    public static func automatic(agent: AgentClient?, session: String?, pinAvailable: Bool = true) -> KeySources {
        KeySources(agent: agent, sessionToken: session, isPINAvailable: { pinAvailable })
    }

    /// The same, with whether a PIN can be had found out only when an agent or session cannot sign (finding it
    /// out can mean opening the terminal).
    package static func automatic(agent: AgentClient?, session: String?, pinAvailable: @escaping @Sendable () -> Bool) -> KeySources {
        KeySources(agent: agent, sessionToken: session, isPINAvailable: pinAvailable)
    }
}

/// Where the key of a review comes from; only `vault` and `token` ask for a PIN.
public enum KeySource: Sendable, Equatable {
    /// A signing agent holds it; it may ask its own person before it signs.
    case agent
    /// A live session holds it.
    case session
    /// The vault: its PIN opens it on approval.
    case vault(needsPIN: Bool)
    /// A key this process holds open already (a signing agent's own keys).
    case held
    /// A PKCS#11 token: its own user PIN (`PIN(token:)`) logs in to it on approval, and the token signs.
    case token

    /// Whether approving asks for a PIN.
    public var asksPIN: Bool { self == .vault(needsPIN: true) || self == .token }
}
