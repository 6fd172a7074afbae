import StellarText

/// A host's request as stellar-cli's signer-plugin protocol writes it, one JSON object: `mode`,
/// `network_passphrase`, the fields of what is signed (`tx_env_xdr`, `tx_hash`; `payload`, `address`, `nonce`,
/// `signature_expiration_ledger`, `root_invocation`) and the plugin arguments the host passed on (`args`). Read
/// from stellar-cli's `add-signer-plugins` branch at commit 9aecec476d4b0c5979a4bdaf8c62171e758343ce
/// (`cmd/soroban-cli/src/signer/mod.rs`, `PluginSigner`).
public struct HostRequest: Sendable {
    /// The plugin arguments the host passed on, for the plugin to read; nil when it passed none.
    public let arguments: [String: String]?
    let mode: String
    let networkPassphrase: String
    let fields: [String: String]
    let nonce: Int64?
    let signatureExpirationLedger: UInt32?

    /// The request, read strictly (`StrictJSON`), as every JSON from outside is: a key given twice is refused,
    /// where Foundation's decoder would read the first and Python the last. A field that is absent or null is
    /// not given; one of another type is refused. Other fields are the host's, and left alone.
    public init(json bytes: [UInt8]) throws {
        let members: [String: StrictJSON.Value]
        do {
            members = try StrictJSON.parse(bytes, integersOnly: false)
        } catch let violation as StrictJSON.Violation {
            throw HostRequestError.unreadable(violation.reason)
        }
        func given(_ field: String) -> StrictJSON.Value? { members[field].flatMap { $0 == .null ? nil : $0 } }
        func text(_ field: String) throws -> String? {
            guard let value = given(field) else { return nil }
            guard let text = value.string else { throw HostRequestError.wrongType(field, "a string") }
            return text
        }
        func integer<Integer: FixedWidthInteger>(_ field: String, as type: Integer.Type) throws -> Integer? {
            guard let value = given(field) else { return nil }
            guard let integer = value.integer(as: type) else { throw HostRequestError.wrongType(field, "an integer in range") }
            return integer
        }
        guard let mode = try text("mode"), let passphrase = try text("network_passphrase") else { throw HostRequestError.malformed }
        self.mode = mode
        networkPassphrase = passphrase
        if let value = given("args") {
            guard let object = value.object else { throw HostRequestError.wrongType("args", "an object") }
            arguments = try object.mapValues { argument in
                guard let text = argument.string else { throw HostRequestError.wrongType("args", "an object of strings") }
                return text
            }
        } else {
            arguments = nil
        }
        var fields: [String: String] = [:]
        for name in ["tx_env_xdr", "tx_hash", "payload", "address", "root_invocation"] { fields[name] = try text(name) }
        self.fields = fields
        nonce = try integer("nonce", as: Int64.self)
        signatureExpirationLedger = try integer("signature_expiration_ledger", as: UInt32.self)
    }

    /// The signing the host asks for, with the risks accepted up front (a host asks nobody mid-way).
    public func signing(allowing: AuthorizationRisks) -> HostSigning {
        HostSigning(mode: mode, networkPassphrase: networkPassphrase, fields: fields, nonce: nonce,
                    signatureExpirationLedger: signatureExpirationLedger, allowing: allowing)
    }
}
