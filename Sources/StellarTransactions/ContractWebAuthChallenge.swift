import StellarKeys
import StellarText

/// What a client knows before it asks a SEP-45 server for a challenge: who the server is (its stellar.toml
/// `SIGNING_KEY`, `WEB_AUTH_CONTRACT_ID` and network), for which service (the home domain) and where (the
/// web-auth endpoint's host), and which contract account signs in. A challenge is checked against this, never
/// against anything the challenge says of itself.
public struct ContractWebAuthExpectation: Sendable, Equatable {
    public var serverKey: PublicKey
    /// The contract whose `web_auth_verify` every entry authorizes (`WEB_AUTH_CONTRACT_ID`, `C…`).
    public var webAuthContract: String
    public var homeDomain: String
    /// The endpoint's host, with `:port` when its URL names one (SEP-45's own example is `localhost:8080`).
    public var webAuthDomain: String
    public var network: StellarNetwork
    /// The contract account signing in (`C…`).
    public var clientAccount: String
    public var clientDomain: WebAuthExpectation.ClientDomain?

    public init(serverKey: PublicKey, webAuthContract: String, homeDomain: String, webAuthDomain: String,
                network: StellarNetwork, clientAccount: String, clientDomain: WebAuthExpectation.ClientDomain? = nil) {
        self.serverKey = serverKey
        self.webAuthContract = webAuthContract
        self.homeDomain = homeDomain
        self.webAuthDomain = webAuthDomain
        self.network = network
        self.clientAccount = clientAccount
        self.clientDomain = clientDomain
    }
}

/// A SEP-45 challenge (draft 0.1.1): the `SorobanAuthorizationEntries` a server asks a contract account to sign,
/// after every check the SEP lists for a client, so that nothing but a sign-in can be signed through it. The
/// client's entry (and the client domain's) is signed as it was given but for its signature expiration ledger,
/// which SEP-45 leaves to the client (`expirationLedger`), and `signed(client:clientDomain:)` puts the signed
/// bytes back among the others.
///
/// A signed entry is a real authorization: a hostile server could ask for one that moves the account's funds. So,
/// before any key is touched:
///
/// 1. the entries are strict XDR, at most `maximumEntries`; a `network_passphrase` sent with them names the
///    expected network;
/// 2. every entry has address credentials (`…_ADDRESS` or `…_ADDRESS_V2`; the source account's and CAP-71's
///    delegates are refused, as stellar-sdk does), and its root invocation is a `contract_fn` call of
///    `web_auth_verify` on `WEB_AUTH_CONTRACT_ID`, with no sub-invocations (which are what could move funds) and
///    exactly one argument: a map of symbols to strings, no key twice, only the keys SEP-45 names;
/// 3. `account` is the account asked for, `home_domain` the home domain, `web_auth_domain` the endpoint's host,
///    `web_auth_domain_account` the server's `SIGNING_KEY`, and `nonce` is there, not empty;
/// 4. `client_domain` and `client_domain_account` come together, only when a client domain was asked for, and
///    then they must be there, with that domain and its `SIGNING_KEY`;
/// 5. the nonce is the same in every entry, and so is the whole invocation;
/// 6. there is exactly one entry for the server, one for the account, one for the client domain when asked for,
///    and no other: nothing else is asked of the client;
/// 7. the entries the client signs carry no signature yet, and the ledger they are signed through is not 0 and
///    not after the server's own signature's (see `expirationLedger`);
/// 8. the server's entry carries the server's signature, `Vec[Map{public_key, signature}]`, valid over the
///    SHA-256 of its `HashIDPreimage` on the expected network.
///
/// SEP-45 also has the client simulate the signed entries on a Soroban RPC and look at the footprint. There is no
/// RPC here: with one root call and no sub-invocations, the client's authorization covers `web_auth_verify` on
/// the contract the server's stellar.toml names, and nothing that contract calls with it.
public struct ContractWebAuthChallenge: Sendable {
    /// The largest challenge read, in base64: a real one is about 2 KiB for three entries.
    public static let maximumTextSize = 64 << 10
    /// One each for the server, the account and a client domain, with room for a server that splits its own.
    public static let maximumEntries = 8
    public static let function = "web_auth_verify"
    /// The keys of `web_auth_verify`'s map that SEP-45 names. Any other key is refused: the client signs every
    /// byte of the invocation, and a key it does not know (a scope, an amount) is a statement it cannot judge.
    public static let argumentNames: Set<String> = ["account", "home_domain", "web_auth_domain", "web_auth_domain_account",
                                                    "nonce", "client_domain", "client_domain_account"]

    public let expectation: ContractWebAuthExpectation
    /// Each entry's XDR as the server sent it, in its order.
    public let entries: [[UInt8]]
    /// Where the server's entry, the account's and the client domain's are in `entries`.
    public let serverEntry: Int
    public let clientEntry: Int
    public let clientDomainEntry: Int?
    /// The nonce the server put in the invocation.
    public let nonce: [UInt8]
    /// The ledger through which the server's signature is valid.
    public let serverExpirationLedger: UInt32
    /// The ledger through which the account's signature will be valid. SEP-45 has the client choose it ("Setting
    /// Signature Expiration Ledger": a near-future ledger), and stellar-sdk's challenge builder leaves it 0 in the
    /// client's entries (stellar-sdk 16.1.1, `build_challenge_authorization_entries`); a client with no Soroban RPC
    /// cannot learn the current ledger. So, unless one is given (`expiring(afterLedger:)`): the ledger the server
    /// put in the account's entry if it put one, else the server's own signature's, which the server chose
    /// near-future (stellar-sdk: the latest ledger + 180, about 15 minutes). The challenge is dead after that ledger
    /// anyway (its server entry no longer verifies), so a signature through it lasts no longer than the sign-in it is
    /// for, and is valid until then. A ledger after the server's is refused, whoever chose it: it would only give a
    /// stolen signature longer to be replayed.
    public private(set) var expirationLedger: UInt32
    /// Where `expirationLedger` came from.
    public private(set) var expirationChoice: ExpirationChoice
    /// The same for the client domain's entry (the ledger it carries, else the server's; a given one is for both).
    public private(set) var clientDomainExpirationLedger: UInt32?

    /// Who chose the ledger through which the client's signatures are valid.
    public enum ExpirationChoice: Sendable, Equatable {
        /// The server, in the entry to sign.
        case challenge
        /// No one: the entry carried 0 (SEP-45 leaves it to the client), and the server's own signature's is used.
        case serverSignature
        /// The caller, with `expiring(afterLedger:)`.
        case given
    }
    /// The entries the client signs (1-based: the account's, the client domain's) whose credentials are V1
    /// (`…_ADDRESS`): their signatures bind no address (CAP-71-02), unlike `…_ADDRESS_V2`'s.
    public let notAddressBound: [Int]

    /// Checks `base64` (the answer's `authorization_entries`) against `expectation`. `serverNetworkPassphrase`
    /// is the answer's `network_passphrase`, if the server sent one.
    public init(base64 text: String, serverNetworkPassphrase: String? = nil, expecting expectation: ContractWebAuthExpectation) throws {
        guard text.utf8.count <= Self.maximumTextSize else {
            throw ContractWebAuthError.unreadable("it is \(text.utf8.count) bytes, more than the \(Self.maximumTextSize / 1024) KiB read")
        }
        let compact = Base64.removingWhiteSpace(text.utf8)
        guard let bytes = Base64.decode(compact), !bytes.isEmpty else { throw ContractWebAuthError.unreadable("it is not base64") }
        try self.init(xdr: bytes, serverNetworkPassphrase: serverNetworkPassphrase, expecting: expectation)
    }

    public init(xdr bytes: [UInt8], serverNetworkPassphrase: String? = nil, expecting expected: ContractWebAuthExpectation) throws {
        // 1. The entries and the network.
        let slots = try Self.slots(bytes)
        guard !slots.isEmpty else { throw ContractWebAuthError.noEntries }
        if let passphrase = serverNetworkPassphrase, passphrase != expected.network.passphrase {
            throw ContractWebAuthError.otherNetwork(serverSays: passphrase, expected: expected.network)
        }
        for address in [expected.clientAccount, expected.webAuthContract] {
            guard (try? StrKey(address))?.kind == .contract else { throw ContractWebAuthError.notAContract(address) }
        }
        // 2 to 4. Each entry's credentials and invocation.
        var nonces: [[UInt8]] = []
        for slot in slots {
            nonces.append(try Self.checkInvocation(slot, expecting: expected))
        }
        // 5. One nonce, one invocation.
        guard nonces.allSatisfy({ $0 == nonces[0] }) else { throw ContractWebAuthError.nonceDiffers }
        guard slots.allSatisfy({ bytes[$0.invocationRange] == bytes[slots[0].invocationRange] }) else {
            throw ContractWebAuthError.invocationsDiffer
        }
        // 6. Whose each entry is.
        var server: Int?, account: Int?, domain: Int?
        for (index, slot) in slots.enumerated() {
            let address = slot.address ?? ""
            func claim(_ place: inout Int?) throws {
                guard place == nil else { throw ContractWebAuthError.duplicateEntry(address) }
                place = index
            }
            if address == expected.serverKey.accountID {
                try claim(&server)
            } else if address == expected.clientAccount {
                try claim(&account)
            } else if let wanted = expected.clientDomain, address == wanted.key.accountID {
                try claim(&domain)
            } else {
                throw ContractWebAuthError.unexpectedEntry(address)
            }
        }
        guard let server else { throw ContractWebAuthError.missingServerEntry }
        guard let account else { throw ContractWebAuthError.missingClientEntry }
        if expected.clientDomain != nil && domain == nil { throw ContractWebAuthError.missingClientDomainEntry }
        // 8. The server's signature, first: rule 7 bounds the client's ledger by the one it commits to.
        try Self.checkServerSignature(slots[server], in: bytes, expecting: expected)
        // 7. What the client signs is not signed yet, and is valid no longer than the server's signature.
        let serverExpiration = slots[server].expirationLedger
        for index in [account] + (domain.map { [$0] } ?? []) {
            let slot = slots[index]
            guard case .void = slot.signature else { throw ContractWebAuthError.entrySigned(slot.address ?? "") }
            guard slot.expirationLedger != 0 || serverExpiration != 0 else { throw ContractWebAuthError.noExpirationLedger(slot.address ?? "") }
            guard slot.expirationLedger <= serverExpiration else {
                throw ContractWebAuthError.expirationAfterServer(slot.address ?? "", ledger: slot.expirationLedger, server: serverExpiration)
            }
        }
        self.expectation = expected
        self.entries = slots.map { Array(bytes[$0.range]) }
        self.serverEntry = server
        self.clientEntry = account
        self.clientDomainEntry = domain
        self.nonce = nonces[0]
        self.serverExpirationLedger = serverExpiration
        let proposed = slots[account].expirationLedger
        self.expirationLedger = proposed != 0 ? proposed : serverExpiration
        self.expirationChoice = proposed != 0 ? .challenge : .serverSignature
        self.clientDomainExpirationLedger = domain.map { slots[$0].expirationLedger != 0 ? slots[$0].expirationLedger : serverExpiration }
        self.notAddressBound = ([account] + (domain.map { [$0] } ?? [])).filter { !slots[$0].isAddressBound }.map { $0 + 1 }.sorted()
    }

    /// The same challenge, with the account's signature (and the client domain's) valid through `ledger`: one the
    /// caller learnt from the network, such as the current ledger and a few more, as SEP-45 suggests. Not 0, and
    /// not after the server's own signature's (`serverExpirationLedger`), after which the sign-in cannot complete.
    public func expiring(afterLedger ledger: UInt32) throws -> ContractWebAuthChallenge {
        guard ledger != 0, ledger <= serverExpirationLedger else {
            throw ContractWebAuthError.expirationOutOfRange(ledger: ledger, server: serverExpirationLedger)
        }
        var chosen = self
        chosen.expirationLedger = ledger
        chosen.expirationChoice = .given
        chosen.clientDomainExpirationLedger = clientDomainEntry.map { _ in ledger }
        return chosen
    }

    /// The `SorobanAuthorizationEntries` to send back: the server's entries as they came, with the account's entry
    /// replaced by `client` and the client domain's by `clientDomain` (each signed through its `…ExpirationLedger`,
    /// the same entry otherwise).
    public func signed(client: [UInt8], clientDomain: [UInt8]? = nil) throws -> [UInt8] {
        var out = Self.bigEndian(UInt32(entries.count))
        for (index, entry) in entries.enumerated() {
            switch index {
            case clientEntry: out += try Self.sameEntry(signed: client, as: entry, through: expirationLedger)
            case clientDomainEntry:
                out += try Self.sameEntry(signed: clientDomain ?? entry, as: entry, through: clientDomainExpirationLedger ?? 0)
            default: out += entry
            }
        }
        return out
    }
}

extension ContractWebAuthChallenge {
    /// One entry, and where its parts sit in the bytes of the whole list.
    struct Slot {
        /// 1-based, for messages.
        let number: Int
        var range: Range<Int>
        let entry: XDR.SorobanAuthorizationEntry
        /// For address credentials: the address (`G…`, `C…`) and where its `SCAddress` sits; nil otherwise.
        var address: String?
        var addressRange: Range<Int> = 0..<0
        var expirationOffset = 0
        var expirationLedger: UInt32 = 0
        var signature: XDR.SCVal = .void
        var isAddressBound = false
        var invocationRange: Range<Int> = 0..<0
    }

    static func slots(_ bytes: [UInt8]) throws -> [Slot] {
        var reader = XDRReader(bytes)
        var slots: [Slot] = []
        do {
            let count = try reader.uint32()
            guard count <= maximumEntries else {
                throw XDRError(offset: 0, expected: "at most \(maximumEntries) entries, not \(count)")
            }
            for index in 0..<Int(count) {
                let start = reader.offset
                var walker = reader
                var slot = Slot(number: index + 1, range: start..<start, entry: try XDR.SorobanAuthorizationEntry(xdr: &reader))
                slot.range = start..<reader.offset
                // The same entry again, noting where each part sits (address credentials only: others are refused).
                let type = try walker.int32()
                if type == 1 || type == 2 {
                    let addressStart = walker.offset
                    slot.address = SummaryText.address(try XDR.SCAddress(xdr: &walker))
                    slot.addressRange = addressStart..<walker.offset
                    _ = try walker.int64()
                    slot.expirationOffset = walker.offset
                    slot.expirationLedger = try walker.uint32()
                    slot.signature = try XDR.SCVal(xdr: &walker)
                    slot.isAddressBound = type == 2
                    let invocationStart = walker.offset
                    _ = try XDR.SorobanAuthorizedInvocation(xdr: &walker)
                    slot.invocationRange = invocationStart..<walker.offset
                }
                slots.append(slot)
            }
            try reader.finish()
        } catch let error as XDRError {
            throw ContractWebAuthError.unreadable("at byte \(error.offset), expected \(error.expected)")
        }
        return slots
    }

    /// Rules 2 to 4 for one entry; its nonce.
    static func checkInvocation(_ slot: Slot, expecting expected: ContractWebAuthExpectation) throws -> [UInt8] {
        let number = slot.number
        switch slot.entry.credentials {
        case .address, .addressV2: break
        case .sourceAccount: throw ContractWebAuthError.credentials(entry: number, "the transaction's source account")
        case .addressWithDelegates: throw ContractWebAuthError.credentials(entry: number, "an address with delegates (CAP-71)")
        }
        let root = slot.entry.rootInvocation
        guard case .contractFn(let call) = root.function else { throw ContractWebAuthError.notAContractCall(entry: number) }
        let contract = SummaryText.address(call.contractAddress)
        guard contract == expected.webAuthContract else { throw ContractWebAuthError.otherContract(entry: number, contract) }
        guard call.functionName.value == Array(function.utf8) else {
            throw ContractWebAuthError.otherFunction(entry: number, SummaryText.quoted(call.functionName.value))
        }
        guard root.subInvocations.isEmpty else { throw ContractWebAuthError.subInvocations(entry: number) }
        guard call.args.count == 1 else { throw ContractWebAuthError.argumentCount(entry: number, call.args.count) }
        guard case .map(let map?) = call.args[0] else { throw ContractWebAuthError.argumentNotAMap(entry: number, "it is not a map") }
        var arguments: [String: [UInt8]] = [:]
        for pair in map.value {
            guard case .sym(let key) = pair.key else { throw ContractWebAuthError.argumentNotAMap(entry: number, "a key is not a symbol") }
            let name = String(decoding: key.value, as: UTF8.self)
            guard argumentNames.contains(name), Array(name.utf8) == key.value else {
                throw ContractWebAuthError.unknownArgument(entry: number, SummaryText.quoted(key.value))
            }
            guard case .str(let value) = pair.val else {
                throw ContractWebAuthError.argumentNotAMap(entry: number, "\(name)'s value is not a string")
            }
            guard arguments.updateValue(value.value, forKey: name) == nil else {
                throw ContractWebAuthError.argumentNotAMap(entry: number, "\(name) is given twice")
            }
        }
        func check(_ name: String, _ wanted: String, _ error: (String?) -> ContractWebAuthError) throws {
            guard arguments[name] == Array(wanted.utf8) else { throw error(arguments[name].map(SummaryText.quoted)) }
        }
        try check("account", expected.clientAccount, ContractWebAuthError.otherAccount)
        try check("home_domain", expected.homeDomain, ContractWebAuthError.otherHomeDomain)
        try check("web_auth_domain", expected.webAuthDomain, ContractWebAuthError.otherWebAuthDomain)
        try check("web_auth_domain_account", expected.serverKey.accountID, ContractWebAuthError.otherWebAuthDomainAccount)
        guard let nonce = arguments["nonce"], !nonce.isEmpty else { throw ContractWebAuthError.noNonce }
        switch (arguments["client_domain"], arguments["client_domain_account"], expected.clientDomain) {
        case (nil, nil, nil): break
        case (nil, nil, _?): throw ContractWebAuthError.missingClientDomain
        case (_?, nil, _), (nil, _?, _): throw ContractWebAuthError.clientDomainPair
        case (_?, _?, nil): throw ContractWebAuthError.unexpectedClientDomain
        case (let domain?, let account?, let wanted?):
            guard domain == Array(wanted.domain.utf8) else { throw ContractWebAuthError.otherClientDomain(SummaryText.quoted(domain)) }
            guard account == Array(wanted.key.accountID.utf8) else {
                throw ContractWebAuthError.otherClientDomainAccount(SummaryText.quoted(account))
            }
        }
        return nonce
    }

    /// Rule 8: `Vec[Map{"public_key": Bytes(32), "signature": Bytes(64)}]`, exactly one, the server's, valid.
    static func checkServerSignature(_ slot: Slot, in bytes: [UInt8], expecting expected: ContractWebAuthExpectation) throws {
        if case .void = slot.signature { throw ContractWebAuthError.serverEntryUnsigned }
        guard case .vec(let list?) = slot.signature, list.value.count == 1, case .map(let map?) = list.value[0],
              map.value.count == 2,
              case .sym(let first) = map.value[0].key, first.value == Array("public_key".utf8), case .bytes(let key) = map.value[0].val,
              case .sym(let second) = map.value[1].key, second.value == Array("signature".utf8), case .bytes(let signature) = map.value[1].val,
              key.value.count == 32, signature.value.count == 64 else {
            throw ContractWebAuthError.serverSignatureMalformed
        }
        var preimage: [UInt8] = slot.isAddressBound ? [0, 0, 0, 10] : [0, 0, 0, 9]  // ENVELOPE_TYPE_SOROBAN_AUTHORIZATION(_WITH_ADDRESS)
        preimage += expected.network.id + bytes[slot.expirationOffset - 8..<slot.expirationOffset + 4]
        if slot.isAddressBound { preimage += bytes[slot.addressRange] }
        preimage += bytes[slot.invocationRange]
        let hash = preimage.withUnsafeBytes { Sodium.sha256($0) }
        guard key.value == expected.serverKey.rawRepresentation, expected.serverKey.isValidSignature(signature.value, for: hash) else {
            throw ContractWebAuthError.notSignedByServer
        }
    }

    /// `signed`, checked to be `original` with only its signature changed and its expiration ledger `ledger` (the
    /// one reviewed): what a signer returns is never sent unless it is the entry that was reviewed. `original`
    /// itself passes, unsigned, when it carries `ledger`.
    static func sameEntry(signed: [UInt8], as original: [UInt8], through ledger: UInt32) throws -> [UInt8] {
        let was = bigEndian(1) + original, now = bigEndian(1) + signed
        guard let before = try slots(was).first, let after = try? slots(now), after.count == 1,
              was[..<before.expirationOffset] == now[..<after[0].expirationOffset], after[0].expirationLedger == ledger,
              was[before.invocationRange] == now[after[0].invocationRange] else {
            throw ContractWebAuthError.signedEntryChanged
        }
        return signed
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
