import ArgumentParser
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

/// How a signing command gets its key: the agent named by `$KEYSTORE_AGENT` when it holds the key, else the
/// signed-in session named by `$KEYSTORE_SESSION`, else the vault and its PIN (terminal, `--pin-stdin`,
/// `--pin-file` or `--pin-fd`, as for `login`); the rule is `Keystore.signingKey(as:keys:)`'s.
struct SigningKeyOptions: ParsableArguments {
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

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

    /// Where the key may come from: the environment's agent and session, and whether a PIN can be had.
    var sources: KeySources {
        .automatic(agent: Self.agent, session: Self.sessionToken, pinAvailable: { [pin] in pin.isAvailable })
    }

    /// `request` reviewed for that key.
    func review<Signed>(_ request: SigningRequest<Signed>) throws -> SigningReview<Signed> {
        try identity.keystore.keystore().review(request, as: try identity.identityIfGiven(), keys: sources)
    }

    /// What is about to be signed, on standard error; also on the terminal when the PIN is about to be typed
    /// there and standard error goes elsewhere, so that the person typing it sees what it signs.
    func show<Signed>(_ review: borrowing SigningReview<Signed>) {
        let text = Array(review.summary.text.map { $0 + "\n" }.joined().utf8)
        Console.write(text, to: STDERR_FILENO)
        if isatty(STDERR_FILENO) == 0 && pin.isInteractive && review.keySource.asksPIN {
            let tty = SecretInput.openTerminal(O_WRONLY)
            if tty >= 0 {
                Console.write(text, to: tty)
                close(tty)
            }
        }
    }

    /// The summary, for commands that scripts call many times a second (`sign`, `sign-message`): shown only when
    /// a person is about to type the PIN on the terminal, and so is there to read it.
    func showIfPersonTypesPIN<Signed>(_ review: borrowing SigningReview<Signed>, alreadyRead: PINLine?) {
        if alreadyRead == nil && review.keySource.asksPIN && pin.isInteractive && SecretInput.hasTerminal { show(review) }
    }

    /// The summary, shown unless `quiet`; and for a consent the review needs beyond the PIN (risks not accepted by
    /// their flags), the answer of the person about to type the PIN at the terminal, asked after the whole
    /// summary: `yes` gives the consent, anything else refuses. A script gets the refusal, and the flags.
    func consentOrShow<Signed>(_ review: borrowing SigningReview<Signed>, alreadyRead: PINLine?, quiet: Bool) throws -> SigningConsent? {
        guard let needed = review.consentNeeded else {
            if !quiet { show(review) }
            return nil
        }
        guard alreadyRead == nil, pin.isInteractive, review.keySource.asksPIN, SecretInput.hasTerminal else {
            throw needed.refusal
        }
        show(review)
        let flags = (needed.risks.contains(.notStrict) ? ["--allow-non-strict"] : []) + (needed.risks.contains(.notAddressBound) ? ["--allow-v1"] : [])
            + (needed.requestedNetwork != nil ? ["--network"] : [])
        let answer = try SecretInput.prompt(needed.question + " Type yes to sign it anyway: ", asking: "a confirmation",
                                            instead: flags.joined(separator: " "))
        guard answer.withUnsafeBytes({ Array($0) }) == Array("yes".utf8) else { throw needed.refusal }
        return needed
    }

    /// Approves `review` with the PIN, read only if its key needs one: `alreadyRead` (a PIN the command had to
    /// read before it could tell, as `sign-tx` reads the PIN line of standard input before the envelope), else
    /// as the PIN options say. What is printed after is read from the approval, never from the review.
    func approve<Signed>(_ review: consuming SigningReview<Signed>, consent: SigningConsent? = nil,
                         alreadyRead: PINLine? = nil) throws -> Approval<Signed> {
        let source = review.keySource
        return try review.approve(consent: consent) { try alreadyRead?.pin(for: source) ?? pin.read(for: source) }
    }
}

/// How signatures are printed.
enum SignatureFormat: String, ExpressibleByArgument, CaseIterable {
    case base64, hex

    var encoding: SigningBatch.Encoding {
        switch self {
        case .base64: .base64
        case .hex: .hex
        }
    }

    func encode(_ signature: [UInt8]) -> String {
        switch self {
        case .base64: Base64.string(signature)
        case .hex: Hex.string(signature)
        }
    }

    /// Reads a signature in either form: 128 hex digits, or base64 of 64 bytes.
    static func decode(_ text: String) throws -> [UInt8] {
        if text.utf8.count == 128, let bytes = Hex.bytes(text) { return bytes }
        guard let bytes = Base64.decode(text), bytes.count == 64 else { throw SigningError.malformedSignature }
        return bytes
    }
}

/// Where the bytes to sign or verify come from: `--file`, `--hex`, `--base64`, an argument, or standard input.
struct PayloadOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read the payload from a file.", valueName: "path"))
    var file: String?

    @Option(name: .customLong("hex"), help: ArgumentHelp("The payload as hex.", valueName: "hex"))
    var payloadHex: String?

    @Option(name: .customLong("base64"), help: ArgumentHelp("The payload as base64.", valueName: "b64"))
    var payloadBase64: String?

    /// Far beyond any Stellar payload or message; what is larger is refused rather than held in memory.
    static let largestPayload = 16 << 20

    var sourceCount: Int { [file != nil, payloadHex != nil, payloadBase64 != nil].filter { $0 }.count }

    /// The payload; `text` is the command's argument, if it takes one. Standard input is read whole and as is,
    /// byte for byte: `echo` adds a newline that becomes part of what is signed.
    func bytes(text: String? = nil, for use: Use) throws -> [UInt8] {
        guard sourceCount + (text == nil ? 0 : 1) <= 1 else {
            throw CLIError.conflictingOptions("a payload argument, --file, --hex or --base64")
        }
        if let text { return Array(text.utf8) }
        return try Self.bytes(file: file, hex: payloadHex, base64: payloadBase64, for: use)
    }

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
            guard let bytes = Base64.decode(payloadBase64) else { throw SigningError.malformedBase64 }
            return bytes
        }
        if let file {
            let fd = try Console.openInput(file)
            defer { close(fd) }
            let bytes = try Console.readAll(fd, source: file, limit: largestPayload)
            guard !bytes.isEmpty else { throw CLIError.emptyPayload(source: file, verb: use.verb) }
            return bytes
        }
        // Typed at a terminal, the wait for input must not look like a hang.
        if isatty(STDIN_FILENO) != 0 { SecretInput.tell("\(use.noun) (end with Ctrl-D):") }
        let bytes = try Console.readAll(STDIN_FILENO, source: "standard input", limit: largestPayload)
        guard !bytes.isEmpty else { throw CLIError.emptyPayload(source: "standard input", verb: use.verb) }
        return use.isMessage ? SignedMessage.fromStandardInput(bytes) : bytes
    }
}

enum SigningError: CommandLineError {
    case malformedSignature
    case malformedBase64
    case invalidSignature
    case batchFailures(failed: Int, total: Int)

    var message: String {
        switch self {
        case .malformedSignature: "The signature is not 64 bytes of base64 or 128 hex digits."
        case .malformedBase64: "The payload is not valid base64."
        case .invalidSignature: "The signature does not match this message and address."
        case .batchFailures(let failed, let total): "\(failed) of \(total) requests failed; see their error lines."
        }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .invalidSignature: .invalidSignature
        default: .invalidInput
        }
    }
}
