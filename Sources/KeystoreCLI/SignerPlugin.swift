import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

/// stellar-cli's proposed signer-plugin protocol, as keystore speaks it when run as `stellar-signer-keystore` (a
/// symlink): `stellar … --sign-with-plugin keystore=G…` spawns it, writes one JSON request on its standard input,
/// closes it, and reads one answer from its standard output; standard error is the user's. A change to the
/// protocol is a change here only. Read from stellar-cli's `add-signer-plugins` branch at commit
/// 9aecec476d4b0c5979a4bdaf8c62171e758343ce (`cmd/soroban-cli/src/signer/mod.rs`, `PluginSigner`); quoted in
/// docs/STELLAR-CLI.md.
///
/// - `{"mode": "sign_tx", "tx_env_xdr", "tx_hash", "network_passphrase", "args"}` → a JSON array of base64
///   `DecoratedSignature`s (here, one).
/// - `{"mode": "sign_auth", "payload", "network_passphrase", "address", "nonce", "signature_expiration_ledger",
///   "root_invocation", "args"}` → the base64 XDR of the signature `SCVal`.
///
/// The key comes from `$KEYSTORE_SESSION`, the agent at `$KEYSTORE_AGENT` or the PIN typed on the terminal, never
/// from the request; `args.name` picks the identity. What is signed is recomputed from the request and shown before the PIN.
struct SignerPlugin {
    /// The name stellar-cli looks for on PATH for `--sign-with-plugin keystore=…`.
    static let name = "stellar-signer-keystore"
    /// The largest request read: an envelope's limit, and room for the rest.
    static let maximumRequestSize = TransactionEnvelope.maximumTextSize + 64 * 1024

    struct Request {
        let mode: String
        let network_passphrase: String
        let args: [String: String]?
        let tx_env_xdr, tx_hash: String?
        let payload, address, root_invocation: String?
        let nonce: Int64?
        let signature_expiration_ledger: UInt32?

        /// The request, read strictly (`StrictJSON`), as every JSON from outside is: a key given twice is refused,
        /// where Foundation's decoder would read the first and Python the last. A field that is absent or null is
        /// not given; one of another type is refused. Other fields are the host's, and left alone.
        init(_ bytes: [UInt8]) throws {
            let members: [String: StrictJSON.Value]
            do {
                members = try StrictJSON.parse(bytes, integersOnly: false)
            } catch let violation as StrictJSON.Violation {
                throw SignerPluginError.unreadable(violation.reason)
            }
            func given(_ field: String) -> StrictJSON.Value? { members[field].flatMap { $0 == .null ? nil : $0 } }
            func text(_ field: String) throws -> String? {
                guard let value = given(field) else { return nil }
                guard let text = value.string else { throw SignerPluginError.wrongType(field, "a string") }
                return text
            }
            func integer<Integer: FixedWidthInteger>(_ field: String, as type: Integer.Type) throws -> Integer? {
                guard let value = given(field) else { return nil }
                guard let integer = value.integer(as: type) else { throw SignerPluginError.wrongType(field, "an integer in range") }
                return integer
            }
            guard let mode = try text("mode"), let passphrase = try text("network_passphrase") else { throw SignerPluginError.malformed }
            self.mode = mode
            network_passphrase = passphrase
            if let value = given("args") {
                guard let object = value.object else { throw SignerPluginError.wrongType("args", "an object") }
                args = try object.mapValues { argument in
                    guard let text = argument.string else { throw SignerPluginError.wrongType("args", "an object of strings") }
                    return text
                }
            } else {
                args = nil
            }
            tx_env_xdr = try text("tx_env_xdr")
            tx_hash = try text("tx_hash")
            payload = try text("payload")
            address = try text("address")
            root_invocation = try text("root_invocation")
            nonce = try integer("nonce", as: Int64.self)
            signature_expiration_ledger = try integer("signature_expiration_ledger", as: UInt32.self)
        }
    }

    static func run(arguments: [String]) throws {
        guard arguments.isEmpty else { throw SignerPluginError.arguments }
        let bytes = try Console.readAll(STDIN_FILENO, source: "standard input", limit: maximumRequestSize)
        let request = try Request(bytes)
        let known: Set<String> = ["name", "allow-v1"]
        if let unknown = request.args?.keys.first(where: { !known.contains($0) }) {
            throw SignerPluginError.unknownArgument(TerminalText.escaped(unknown))
        }
        // A seed or phrase pasted as an argument must not come back in an error about the name.
        if !SecretArguments.secrets(in: Array((request.args ?? [:]).values)).isEmpty { throw SignerPluginError.secretArgument }
        let key = try SigningKeyOptions.parse(request.args?["name"].map { ["--name", $0] } ?? [])
        let network = try StellarNetwork(passphrase: request.network_passphrase)
        do {
            switch request.mode {
            case "sign_tx": try signTransaction(request, network: network, key: key)
            case "sign_auth": try signAuthorization(request, network: network, key: key)
            default: throw SignerPluginError.unknownMode(TerminalText.escaped(request.mode))
            }
        } catch CLIError.noTerminal(_, _) {
            // The PIN options the command line would suggest are not the plugin's: stellar-cli passes none.
            throw SignerPluginError.noKey
        }
    }

    private static func field<Value>(_ value: Value?, _ name: String) throws -> Value {
        guard let value else { throw SignerPluginError.missing(name) }
        return value
    }

    /// The whole envelope is reviewed and signed (through the agent too, which can then show it), and the
    /// signature taken from the signed envelope: never a bare hash.
    private static func signTransaction(_ request: Request, network: StellarNetwork, key: SigningKeyOptions) throws {
        let envelope = try TransactionEnvelope(base64: try field(request.tx_env_xdr, "tx_env_xdr"))
        guard let hash = Hex.bytes(try field(request.tx_hash, "tx_hash")) else { throw SignerPluginError.hashMismatch }
        let approval = try key.run(.transaction(envelope, network: network, expectedHash: hash))
        let signer = try approval.signer.ed25519Key()
        Console.print("[\"\(Base64.string(TransactionEnvelope.decoratedSignature(key: signer, signature: approval.signed.signature)))\"]")
    }

    private static func signAuthorization(_ request: Request, network: StellarNetwork, key: SigningKeyOptions) throws {
        guard let invocation = Base64.decode(Array(try field(request.root_invocation, "root_invocation").utf8)) else {
            throw SignerPluginError.notBase64("root_invocation")
        }
        let preimage = try AuthorizationPreimage(
            network: network, nonce: try field(request.nonce, "nonce"),
            signatureExpirationLedger: try field(request.signature_expiration_ledger, "signature_expiration_ledger"),
            invocation: invocation)
        guard let hash = Hex.bytes(try field(request.payload, "payload")) else { throw SignerPluginError.hashMismatch }
        guard let address = Base64.decode(Array(try field(request.address, "address").utf8)) else { throw SignerPluginError.notBase64("address") }
        // The host builds only V1 preimages, which bind no address: signed only when the user said so
        // (`--plugin-arg keystore:allow-v1=yes`).
        let allowing: AuthorizationRisks = request.args?["allow-v1"] == "yes" ? .notAddressBound : []
        // A host's request asks nobody mid-way: a risk not allowed here is refused (`SigningRefusal`).
        let approval = try key.run(.authorization(preimage, network: network, allowing: allowing, expectedHash: hash, forAddress: address))
        let signer = try approval.signer.ed25519Key()
        Console.print(Base64.string(TransactionEnvelope.accountSignature(key: signer, signature: approval.signed)))
    }
}

/// What is wrong with a signer-plugin request (bad input), or why no key could sign it (no session).
enum SignerPluginError: CommandLineError {
    case arguments, malformed, secretArgument
    /// Not JSON, not an object, or a key given twice: what `StrictJSON` found.
    case unreadable(String)
    case wrongType(String, String)
    case unknownArgument(String)
    case unknownMode(String)
    case missing(String)
    case notBase64(String)
    case hashMismatch
    /// No session, no agent holding the key, and no terminal to type the PIN on.
    case noKey

    var message: String {
        switch self {
        case .arguments: "As \(SignerPlugin.name), keystore takes no arguments: it reads one JSON request on standard input (see docs/STELLAR-CLI.md)."
        case .malformed: "The signer-plugin request is not a JSON object with a mode and a network_passphrase."
        case .unreadable(let reason): "The signer-plugin request cannot be read: \(reason)."
        case .wrongType(let field, let expected): "The request's \(field) is not \(expected)."
        case .secretArgument: "A plugin argument looks like a secret (a seed, a recovery phrase or a lockout code); it was not used. The key comes from the keystore, never from the request."
        case .unknownArgument(let name): "Unknown plugin argument '\(name)'; the known ones are name (the identity) and allow-v1 (yes)."
        case .unknownMode(let mode): "Unknown mode '\(mode)'; expected sign_tx or sign_auth."
        case .missing(let field): "The request has no \(field)."
        case .notBase64(let field): "The request's \(field) is not base64."
        case .hashMismatch: "The hash in the request is not the hash of what it asks to sign; nothing was signed."
        case .noKey:
            "There is no session, and no terminal to ask for the PIN on; in the shell that runs stellar, start a session (eval \"$(keystore login --session)\") or hand the key to the agent (eval \"$(keystore agent)\", then keystore login --agent)."
        }
    }

    var exitStatus: ExitStatus {
        if case .noKey = self { return .session }
        return .invalidInput
    }
}
