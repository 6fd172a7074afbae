import StellarKeys
import StellarText
/// The network a transaction is for, by its passphrase: the hash that is signed depends on it, so a signature
/// made for one network is worthless on another. keystore never guesses it (stellar-cli quietly defaults to
/// testnet, SEP-7 to the public network): it is named, or the command stops.
public struct StellarNetwork: Sendable, Equatable {
    /// `public`, `testnet` or `futurenet`, or nil for a passphrase given as such.
    public let name: String?
    public let passphrase: String
    /// SHA-256 of the passphrase: the network ID that starts every signature payload. Computed once, since a
    /// batch hashes every envelope with it.
    public let id: [UInt8]

    public static let `public` = StellarNetwork(name: "public", passphrase: "Public Global Stellar Network ; September 2015")
    public static let testnet = StellarNetwork(name: "testnet", passphrase: "Test SDF Network ; September 2015")
    public static let futurenet = StellarNetwork(name: "futurenet", passphrase: "Test SDF Future Network ; October 2022")
    package static let wellKnown = [StellarNetwork.public, .testnet, .futurenet]
    /// Other names of well-known networks, as the Stellar tools accept them.
    package static let aliases = ["mainnet": "public", "pubnet": "public"]

    private init(name: String?, passphrase: String) {
        self.name = name
        self.passphrase = passphrase
        id = Array(passphrase.utf8).withUnsafeBytes { Sodium.sha256($0) }
    }

    /// One of the well-known networks by name, or by one of its `aliases` (`mainnet` and `pubnet` also name the
    /// public one, as in the Stellar tools).
    public init(named name: String) throws {
        let wanted = Self.aliases[name] ?? name
        guard let network = Self.wellKnown.first(where: { $0.name == wanted }) else {
            throw TransactionError.unknownNetwork(name)
        }
        self = network
    }

    /// Any other network, by its passphrase; a well-known passphrase gets its name.
    public init(passphrase: String) throws {
        guard !passphrase.isEmpty else { throw TransactionError.unknownNetwork("") }
        self = Self.wellKnown.first { $0.passphrase == passphrase } ?? StellarNetwork(name: nil, passphrase: passphrase)
    }

    /// `STELLAR_NETWORK` (a name) or `STELLAR_NETWORK_PASSPHRASE`, as stellar-cli reads them; nil when neither
    /// is set. Both set and disagreeing is refused rather than one picked.
    public init?(environment: [String: String]) throws {
        let name = environment["STELLAR_NETWORK"].flatMap { $0.isEmpty ? nil : $0 }
        let passphrase = environment["STELLAR_NETWORK_PASSPHRASE"].flatMap { $0.isEmpty ? nil : $0 }
        switch (name, passphrase) {
        case (nil, nil): return nil
        case (let name?, nil): try self.init(named: name)
        case (nil, let passphrase?): try self.init(passphrase: passphrase)
        case (let name?, let passphrase?):
            let named = try StellarNetwork(named: name)
            guard named.passphrase == passphrase else { throw TransactionError.conflictingNetworks }
            self = named
        }
    }

    /// How a summary names it: a well-known network by name and passphrase, any other by its passphrase, quoted
    /// as every text from outside is (`SigningSummary.quoted`).
    public var shown: String {
        name.map { "\($0) (\(passphrase))" } ?? SummaryText.quoted(passphrase)
    }

    /// How a one-line message names it: as `shown`, but another network's passphrase escaped and, past
    /// `TerminalText.valueLimit` characters, cut in its middle, so that a passphrase from outside (a request's, of
    /// up to a megabyte) cannot flood the line.
    package var shownBriefly: String {
        name.map { "\($0) (\(passphrase))" } ?? "\"" + TerminalText.escaped(passphrase) + "\""
    }
}
