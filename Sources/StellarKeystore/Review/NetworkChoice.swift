import StellarTransactions

/// The network a caller named for a signature: by name (`public`, `testnet`, …), by passphrase, or in its
/// environment (`STELLAR_NETWORK`, `STELLAR_NETWORK_PASSPHRASE`, as stellar-cli reads them). Never guessed: a
/// transaction's signature counts on one network only, and one signed for another is a signature given away.
/// Made from what was given as is; the rule runs when the network is needed (`network()`).
public struct NetworkChoice: Sendable, Equatable {
    let name: String?
    let passphrase: String?
    let environment: [String: String]

    /// `name` or `passphrase` as given (both given, they must name one network), else `environment`'s.
    public init(name: String? = nil, passphrase: String? = nil, environment: [String: String] = [:]) {
        self.name = name
        self.passphrase = passphrase
        self.environment = environment
    }

    /// The network named, or nil when none is: a name before a passphrase before the environment.
    public func networkIfNamed() throws -> StellarNetwork? {
        switch (name, passphrase) {
        case (let name?, nil): return try StellarNetwork(named: name)
        case (nil, let passphrase?): return try StellarNetwork(passphrase: passphrase)
        case (let name?, let passphrase?):
            let named = try StellarNetwork(named: name)
            guard named.passphrase == passphrase else { throw TransactionError.conflictingNetworks }
            return named
        case (nil, nil): return try StellarNetwork(environment: environment)
        }
    }

    /// The network named; none named is `TransactionError.noNetwork`.
    public func network() throws -> StellarNetwork {
        guard let network = try networkIfNamed() else { throw TransactionError.noNetwork }
        return network
    }
}
