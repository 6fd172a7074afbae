import ArgumentParser
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

/// How a signing command gets its key: the agent named by `$KEYSTORE_AGENT` when it holds the key, else the
/// signed-in session named by `$KEYSTORE_SESSION`, else the vault and its PIN (terminal, `--pin-stdin`,
/// `--pin-file` or `--pin-fd`, as for `login`); the rule is `Keystore.signingKey(as:keys:)`'s.
///
/// `IdentityOptions`' and `PINOptions`' options, declared flat rather than as nested groups (see `NamesKeystore`).
struct SigningKeyOptions: ParsableArguments, NamesIdentity, GivesPIN {
    @Option(help: HomeOptions.homeHelp) var home: String?
    @Flag(help: HomeOptions.jsonHelp) var json = false
    @Option(help: HomeOptions.tpmTctiHelp) var tpmTcti: String?
    @Option(help: IdentityOptions.nameHelp, completion: .custom(Completions.identities)) var name: String?
    @Flag(help: PINOptions.stdinHelp) var pinStdin = false
    @Option(help: PINOptions.fileHelp) var pinFile: String?
    @Option(help: PINOptions.fdHelp) var pinFd: Int32?

    func validate() throws {
        try validateKeystore()
        try validatePIN()
    }

    static let sessionVariable = "KEYSTORE_SESSION"

    /// The session token in the environment, if one is set.
    static var sessionToken: String? {
        guard let text = Environment[sessionVariable], !text.isEmpty else { return nil }
        return text
    }

    static let agentVariable = "KEYSTORE_AGENT"

    /// The agent named by `$KEYSTORE_AGENT` (its socket's path), if one is set.
    static var agent: AgentClient? {
        guard let path = Environment[agentVariable], !path.isEmpty else { return nil }
        return AgentClient(socketPath: path)
    }
}

/// A signing key, as a command that declares the signing-key options chooses it.
extension NamesIdentity where Self: GivesPIN {
    /// Where the key may come from: the environment's agent and session, and whether a PIN can be had.
    var sources: KeySources {
        .automatic(agent: SigningKeyOptions.agent, session: SigningKeyOptions.sessionToken, pinAvailable: { [self] in isAvailable })
    }

    /// `request` signed by this key through the library's one conversation (review → show → consent and PIN →
    /// approve), shown and asked on the terminal. What is printed after is read from the approval.
    /// (Written for `key.run(.payload(…))`, which names the request's type by its case.)
    func run<Signed>(_ request: SigningRequest<Signed>, alreadyRead: PINLine? = nil, quiet: Bool = false) throws -> Approval<Signed> {
        try run(request, alreadyRead: alreadyRead, quiet: quiet, secondIdentity: nil)
    }

    /// `task` (a transaction as given, a sign-in) decoded, resolved and signed by this key in the library's one
    /// call, shown and asked on the terminal as the PIN options say. `alreadyRead` is a PIN the command had to read
    /// before it could tell whether one is needed (as `sign-tx` reads the PIN line of standard input before the
    /// envelope); `secondIdentity` is a sign-in's client-domain identity, whose PIN is asked by its name.
    func run<Task: SigningTask>(_ task: Task, alreadyRead: PINLine? = nil, quiet: Bool = false, secondIdentity: String? = nil) throws -> Task.Outcome {
        let keystore = try self.keystore()
        return try SigningRunner(presenter: TerminalPresenter(pin: self, alreadyRead: alreadyRead, quiet: quiet, secondIdentity: secondIdentity))
            .run(task, as: try identityIfGiven(), in: keystore, keys: sources)
    }
}

/// The terminal as a signing conversation's presenter: the summary on standard error (and on the terminal when
/// the PIN is typed there and standard error goes elsewhere, so that the person typing it sees what it signs), a
/// consent asked as a typed yes, the PIN read as the PIN options say.
struct TerminalPresenter: SigningPresenter {
    let pin: any GivesPIN
    /// A PIN line read before the request could be (`--pin-stdin` with the input on standard input).
    var alreadyRead: PINLine?
    /// `--quiet`: no summary unless a question follows it.
    var quiet = false
    /// A sign-in's client-domain identity, whose PIN is asked as "PIN for NAME".
    var secondIdentity: String?

    var personIsPresent: Bool { alreadyRead == nil && pin.isInteractive && SecretInput.hasTerminal }

    var showsSummaries: Bool { !quiet }

    func show(_ summary: SigningSummary, for source: KeySource) {
        let text = Array(summary.text.map { $0 + "\n" }.joined().utf8)
        Console.write(text, to: STDERR_FILENO)
        if isatty(STDERR_FILENO) == 0 && pin.isInteractive && source.asksPIN {
            let tty = SecretInput.openTerminal(O_WRONLY)
            if tty >= 0 {
                Console.write(text, to: tty)
                close(tty)
            }
        }
    }

    /// `yes` gives the consent, anything else refuses; a script gets the refusal, and the flags to say it.
    func agrees(to needed: SigningConsent) throws -> Bool {
        let flags = (needed.risks.contains(.notStrict) ? ["--allow-non-strict"] : []) + (needed.risks.contains(.notAddressBound) ? ["--allow-v1"] : [])
            + (needed.requestedNetwork != nil ? ["--network"] : [])
        let answer = try SecretInput.prompt(needed.question + " Type yes to sign it anyway: ", asking: "a confirmation",
                                            instead: flags.joined(separator: " "))
        return answer.withUnsafeBytes({ Array($0) }) == Array("yes".utf8)
    }

    func pin(for identity: IdentityName, source: KeySource) throws -> PIN {
        // Only two identities are ever asked: the signer's, and a client domain's when it is another.
        guard secondIdentity == identity.rawValue else { return try alreadyRead?.pin(for: source) ?? pin.read(for: source) }
        return try pin.read(prompt: "PIN for \(identity.rawValue): ")
    }
}

/// How signatures are printed.
enum SignatureFormat: String, ExpressibleByArgument, CaseIterable {
    case base64, hex

    // argument-parser's defaults for these describe each value with `String(describing:)`, whose dynamic casts
    // scan every protocol conformance in the binary, on every run of a command with a --format option: the raw
    // values say the same. (The descriptions are empty because each value's description is its raw value.)
    static var allValueStrings: [String] { allCases.map(\.rawValue) }
    static var allValueDescriptions: [String: String] { [:] }
    var defaultValueDescription: String { rawValue }

    var encoding: SigningBatch.Encoding { self == .hex ? .hex : .base64 }

    func encode(_ signature: [UInt8]) -> String { self == .hex ? Hex.string(signature) : Base64.string(signature) }

    /// The signature as `sign` and `sign-message` print it; with `--json`, beside the signer's address and, for a
    /// message, its SEP-53 hash.
    func print(_ approval: Approval<[UInt8]>, json: Bool, messageHash: [UInt8]? = nil) throws {
        struct Output: Encodable { let address, signature: String; let hash: String? }
        let signature = encode(approval.signed)
        try Console.printAnswer(json: json, Output(address: approval.signer.address, signature: signature, hash: messageHash.map(Hex.string)),
                                else: signature)
    }

    /// Reads a signature in either form: 128 hex digits, or base64 of 64 bytes.
    static func decode(_ text: String) throws -> [UInt8] {
        if text.utf8.count == 128, let bytes = Hex.bytes(text) { return bytes }
        guard let bytes = Base64.decode(text), bytes.count == 64 else { throw CLIError.malformedSignature }
        return bytes
    }
}

/// Where the bytes to sign or verify come from: `--file`, `--hex`, `--base64`, an argument, or standard input,
/// whichever options group or command declares them (`PayloadOptions` has their help).
protocol GivesPayload {
    var file: String? { get }
    var payloadHex: String? { get }
    var payloadBase64: String? { get }
}

extension GivesPayload {
    var payloadSourceCount: Int { [file != nil, payloadHex != nil, payloadBase64 != nil].filter { $0 }.count }

    /// The payload; `text` is the command's argument, if it takes one. Standard input is read whole and as is,
    /// byte for byte: `echo` adds a newline that becomes part of what is signed.
    func payload(text: String? = nil, for use: PayloadOptions.Use) throws -> [UInt8] {
        guard payloadSourceCount + (text == nil ? 0 : 1) <= 1 else {
            throw CLIError.conflictingOptions("a payload argument, --file, --hex or --base64")
        }
        if let text { return Array(text.utf8) }
        return try PayloadOptions.bytes(file: file, hex: payloadHex, base64: payloadBase64, for: use)
    }
}

/// The payload options, for a command that declares no others of its own.
struct PayloadOptions: ParsableArguments, GivesPayload {
    @Option(help: PayloadOptions.fileHelp) var file: String?
    @Option(name: .customLong("hex"), help: PayloadOptions.hexHelp) var payloadHex: String?
    @Option(name: .customLong("base64"), help: PayloadOptions.base64Help) var payloadBase64: String?

    static let fileHelp = ArgumentHelp("Read the payload from a file.", valueName: "path")
    static let hexHelp = ArgumentHelp("The payload as hex.", valueName: "hex")
    static let base64Help = ArgumentHelp("The payload as base64.", valueName: "b64")

    /// Far beyond any Stellar payload or message; what is larger is refused rather than held in memory.
    static let largestPayload = 16 << 20

    /// What the bytes are for: it names them in a prompt and in errors, and a SEP-53 message read from standard
    /// input loses its final newline (`SignedMessage.fromStandardInput`).
    enum Use {
        case signing, signingMessage, verifyingRaw, verifyingMessage
        var verb: String { self == .verifyingRaw || self == .verifyingMessage ? "verify" : "sign" }
        var noun: String { self == .signing || self == .verifyingRaw ? "Payload" : "Message" }
        var isMessage: Bool { self == .signingMessage || self == .verifyingMessage }
    }

    /// The bytes from `--hex`, `--base64`, `--file` or standard input. An empty file or standard input is
    /// refused: it is what a script gets when the step that made the payload failed, and a valid signature over
    /// nothing must not be the answer. An explicit `--hex ''` still signs the empty payload.
    static func bytes(file: String?, hex payloadHex: String? = nil, base64 payloadBase64: String? = nil, for use: Use) throws -> [UInt8] {
        if let payloadHex {
            guard let bytes = Hex.bytes(payloadHex) else { throw CLIError.invalidHex }
            return bytes
        }
        if let payloadBase64 {
            guard let bytes = Base64.decode(payloadBase64) else { throw CLIError.malformedBase64 }
            return bytes
        }
        let bytes = try Console.readInput(nil, file: file, prompt: use.noun, limit: largestPayload, advice: "sign a hash of it instead")
        guard !bytes.isEmpty else { throw CLIError.emptyPayload(source: file ?? "standard input", verb: use.verb) }
        return use.isMessage && file == nil ? SignedMessage.fromStandardInput(bytes) : bytes
    }
}
