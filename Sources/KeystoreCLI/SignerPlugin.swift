import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarText

/// stellar-cli's proposed signer-plugin protocol, as keystore speaks it when run as `stellar-signer-keystore` (a
/// symlink): `stellar … --sign-with-plugin keystore=G…` spawns it, writes one JSON request on its standard input,
/// closes it, and reads one answer from its standard output; standard error is the user's. The request is read
/// by the library (`HostRequest`); what the tool makes of its arguments is here. Read from stellar-cli's
/// `add-signer-plugins` branch at commit 9aecec476d4b0c5979a4bdaf8c62171e758343ce (`cmd/soroban-cli/src/signer/mod.rs`,
/// `PluginSigner`); quoted in docs/STELLAR-CLI.md.
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

    static func run(arguments: [String]) throws {
        guard arguments.isEmpty else { throw SignerPluginError.arguments }
        let bytes = try Console.readAll(STDIN_FILENO, source: "standard input", limit: maximumRequestSize)
        let request = try HostRequest(json: bytes)
        let known: Set<String> = ["name", "allow-v1"]
        if let unknown = request.arguments?.keys.first(where: { !known.contains($0) }) {
            throw SignerPluginError.unknownArgument(TerminalText.escaped(unknown))
        }
        // A seed or phrase pasted as an argument must not come back in an error about the name.
        if !SecretArguments.secrets(in: Array((request.arguments ?? [:]).values)).isEmpty { throw SignerPluginError.secretArgument }
        let key = try SigningKeyOptions.parse(request.arguments?["name"].map { ["--name", $0] } ?? [])
        let answer: HostSigning.Answer
        do {
            // The host builds only V1 preimages, which bind no address: signed only when the user said so
            // (`--plugin-arg keystore:allow-v1=yes`); any other risk is refused, as the host asks nobody mid-way.
            answer = try key.run(request.signing(allowing: request.arguments?["allow-v1"] == "yes" ? .notAddressBound : []))
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
    case arguments, secretArgument
    case unknownArgument(String)
    /// No session, no agent holding the key, and no terminal to type the PIN on.
    case noKey

    var message: String {
        switch self {
        case .arguments: "As \(SignerPlugin.name), keystore takes no arguments: it reads one JSON request on standard input (see docs/STELLAR-CLI.md)."
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
