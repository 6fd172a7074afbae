import StellarKeys
import StellarText

/// Why a SEP-45 challenge was refused. Each is one rule of `ContractWebAuthChallenge`; none is ever signed past.
/// Entries are numbered from 1, in the server's order.
public enum ContractWebAuthError: KeystoreError, Equatable {
    case unreadable(String)
    case noEntries
    case otherNetwork(serverSays: String, expected: StellarNetwork)
    /// The account signing in, or the web-auth contract expected, is not a `C…` address.
    case notAContract(String)
    case credentials(entry: Int, String)
    case notAContractCall(entry: Int)
    case otherContract(entry: Int, String)
    case otherFunction(entry: Int, String)
    case subInvocations(entry: Int)
    case argumentCount(entry: Int, Int)
    case argumentNotAMap(entry: Int, String)
    case unknownArgument(entry: Int, String)
    case otherAccount(String?)
    case otherHomeDomain(String?)
    case otherWebAuthDomain(String?)
    case otherWebAuthDomainAccount(String?)
    case noNonce
    case clientDomainPair
    case unexpectedClientDomain
    case missingClientDomain
    case otherClientDomain(String)
    case otherClientDomainAccount(String)
    case nonceDiffers
    case invocationsDiffer
    case duplicateEntry(String)
    case unexpectedEntry(String)
    case missingServerEntry
    case missingClientEntry
    case missingClientDomainEntry
    case entrySigned(String)
    case noExpirationLedger(String)
    /// An entry to sign asks for a signature valid after the server's own.
    case expirationAfterServer(String, ledger: UInt32, server: UInt32)
    /// A ledger given for the client's signatures that is 0 or after the server's own: nothing was signed.
    case expirationOutOfRange(ledger: UInt32, server: UInt32)
    case serverEntryUnsigned
    case serverSignatureMalformed
    case notSignedByServer
    /// A signed entry that is not the one reviewed with a signature added: never sent.
    case signedEntryChanged

    /// A stable name for each rule, for machine-readable reports and for tests that check which rule refused.
    public var rule: String {
        switch self {
        case .unreadable: "unreadable"
        case .noEntries: "no-entries"
        case .otherNetwork: "network"
        case .notAContract: "client-account"
        case .credentials: "credentials"
        case .notAContractCall: "not-contract-call"
        case .otherContract: "contract"
        case .otherFunction: "function"
        case .subInvocations: "sub-invocations"
        case .argumentCount: "arguments"
        case .argumentNotAMap: "argument-map"
        case .unknownArgument: "unknown-argument"
        case .otherAccount: "account"
        case .otherHomeDomain: "home-domain"
        case .otherWebAuthDomain: "web-auth-domain"
        case .otherWebAuthDomainAccount: "web-auth-domain-account"
        case .noNonce: "nonce"
        case .clientDomainPair: "client-domain-pair"
        case .unexpectedClientDomain: "unexpected-client-domain"
        case .missingClientDomain: "missing-client-domain"
        case .otherClientDomain: "client-domain"
        case .otherClientDomainAccount: "client-domain-account"
        case .nonceDiffers: "nonce-differs"
        case .invocationsDiffer: "invocations-differ"
        case .duplicateEntry: "duplicate-entry"
        case .unexpectedEntry: "unexpected-entry"
        case .missingServerEntry: "missing-server-entry"
        case .missingClientEntry: "missing-client-entry"
        case .missingClientDomainEntry: "missing-client-domain-entry"
        case .entrySigned: "entry-signed"
        case .noExpirationLedger, .expirationAfterServer: "expiration-ledger"
        case .expirationOutOfRange: "given-expiration-ledger"
        case .serverEntryUnsigned: "server-unsigned"
        case .serverSignatureMalformed: "server-signature-shape"
        case .notSignedByServer: "server-signature"
        case .signedEntryChanged: "signed-entry-changed"
        }
    }

    public var message: String {
        switch self {
        case .signedEntryChanged: return "A signed authorization entry is not the entry reviewed with a signature added; nothing was sent."
        case .expirationOutOfRange(let ledger, let server):
            return "Ledger \(ledger) cannot end this sign-in's signatures: it must be from 1 to \(server), the ledger through "
                + "which the server's own signature is valid; nothing was signed."
        case .notAContract(let address):
            return "\(SummaryText.quoted(address)) is not a contract (C…) address; SEP-45 signs in contract accounts only."
        default: break
        }
        return "The sign-in challenge was refused, nothing was signed: " + reason + "."
    }

    private var reason: String {
        switch self {
        case .unreadable(let why): "it is not a list of authorization entries (\(why))"
        case .noEntries: "it has no authorization entries"
        case .otherNetwork(let passphrase, let expected):
            "the server says it is on \(SummaryText.quoted(passphrase)), not \(expected.shown) as its stellar.toml says"
        case .notAContract, .signedEntryChanged, .expirationOutOfRange: ""  // `message` says these whole: they are not a challenge's rule
        case .credentials(let entry, let kind): "entry \(entry)'s credentials are \(kind), not an address's"
        case .notAContractCall(let entry): "entry \(entry) does not authorize a contract call"
        case .otherContract(let entry, let contract): "entry \(entry) calls \(contract), not the web-auth contract of the stellar.toml"
        case .otherFunction(let entry, let name): "entry \(entry) calls \(name), not \(ContractWebAuthChallenge.function)"
        case .subInvocations(let entry): "entry \(entry) authorizes further calls under \(ContractWebAuthChallenge.function)"
        case .argumentCount(let entry, let count): "entry \(entry) passes \(count) arguments, not one map"
        case .argumentNotAMap(let entry, let why): "entry \(entry)'s argument is not a map of symbols to strings (\(why))"
        case .unknownArgument(let entry, let key): "entry \(entry)'s argument has a key SEP-45 does not name, \(key)"
        case .otherAccount(let value): "its account is \(value ?? "missing"), not the account signing in"
        case .otherHomeDomain(let value): "its home_domain is \(value ?? "missing"), not the home domain asked for"
        case .otherWebAuthDomain(let value): "its web_auth_domain is \(value ?? "missing"), not the host of the web-auth endpoint"
        case .otherWebAuthDomainAccount(let value):
            "its web_auth_domain_account is \(value ?? "missing"), not the server's signing key"
        case .noNonce: "it has no nonce, or an empty one"
        case .clientDomainPair: "it has one of client_domain and client_domain_account without the other"
        case .unexpectedClientDomain: "it has a client_domain, and no client domain was asked for"
        case .missingClientDomain: "it has no client_domain, and a client domain was asked for"
        case .otherClientDomain(let value): "its client_domain is \(value), not the client domain asked for"
        case .otherClientDomainAccount(let value): "its client_domain_account is \(value), not the client domain's signing key"
        case .nonceDiffers: "its entries carry different nonces"
        case .invocationsDiffer: "its entries authorize different invocations"
        case .duplicateEntry(let address): "it has two entries for \(address)"
        case .unexpectedEntry(let address): "it has an entry for \(address), which is neither the server, the account nor the client domain"
        case .missingServerEntry: "it has no entry for the server's signing key"
        case .missingClientEntry: "it has no entry for the account signing in"
        case .missingClientDomainEntry: "it has no entry for the client domain's signing key"
        case .entrySigned(let address): "the entry for \(address) carries a signature already"
        case .noExpirationLedger(let address):
            "the entry for \(address) has no signature expiration ledger (0), nor has the server's own, whose signature is then valid on no ledger"
        case .expirationAfterServer(let address, let ledger, let server):
            "the entry for \(address) asks for a signature valid through ledger \(ledger), after the server's own (ledger \(server))"
        case .serverEntryUnsigned: "the server's entry is not signed"
        case .serverSignatureMalformed: "the server's entry is not signed as an account signs (one public_key and signature)"
        case .notSignedByServer: "the server's entry is not signed by the server's signing key on this network"
        }
    }
}
