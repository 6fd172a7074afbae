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
        let fields = ["tx_env_xdr": request.tx_env_xdr, "tx_hash": request.tx_hash, "payload": request.payload, "address": request.address,
                      "root_invocation": request.root_invocation].compactMapValues { $0 }
        let answer: HostSigning.Answer
        do {
            // The host builds only V1 preimages, which bind no address: signed only when the user said so
            // (`--plugin-arg keystore:allow-v1=yes`); any other risk is refused, as the host asks nobody mid-way.
            answer = try key.run(HostSigning(mode: request.mode, networkPassphrase: request.network_passphrase, fields: fields,
                                             nonce: request.nonce, signatureExpirationLedger: request.signature_expiration_ledger,
                                             allowing: request.args?["allow-v1"] == "yes" ? .notAddressBound : []))
        } catch CLIError.noTerminal(_, _) {
            // The PIN options the command line would suggest are not the plugin's: stellar-cli passes none.
            throw SignerPluginError.noKey
        }
        switch answer {
        case .decoratedSignature(let signature): Console.print("[\"\(Base64.string(signature))\"]")
        case .authorizationSignature(let signature): Console.print(Base64.string(signature))
        }
    }
}

/// What is wrong with a signer-plugin request (bad input), or why no key could sign it (no session).
enum SignerPluginError: CommandLineError {
    case arguments, malformed, secretArgument
    /// Not JSON, not an object, or a key given twice: what `StrictJSON` found.
    case unreadable(String)
    case wrongType(String, String)
    case unknownArgument(String)
    /// No session, no agent holding the key, and no terminal to type the PIN on.
    case noKey

    var message: String {
        switch self {
        case .arguments: "As \(SignerPlugin.name), keystore takes no arguments: it reads one JSON request on standard input (see docs/STELLAR-CLI.md)."
        case .malformed: "The signer-plugin request is not a JSON object with a mode and a network_passphrase."
        case .unreadable(let reason): "The signer-plugin request cannot be read: \(reason)."
        case .wrongType(let field, let expected): "The request's \(field) is not \(expected)."
        case .secretArgument: "A plugin argument looks like a secret (a seed, a recovery phrase, a lockout code or an age identity); it was not used. The key comes from the keystore, never from the request."
        case .unknownArgument(let name): "Unknown plugin argument '\(name)'; the known ones are name (the identity) and allow-v1 (yes)."
        case .noKey:
            "There is no session, and no terminal to ask for the PIN on; in the shell that runs stellar, start a session (eval \"$(keystore login --session)\") or hand the key to the agent (eval \"$(keystore agent)\", then keystore login --agent)."
        }
    }

    var exitStatus: ExitStatus {
        if case .noKey = self { return .session }
        return .invalidInput
    }
}

extension HostRequestError: CommandLineError { var exitStatus: ExitStatus { .invalidInput } }
