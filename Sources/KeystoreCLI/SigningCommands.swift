import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

struct SignMessage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-message",
        _superCommandName: KeystoreCommand.name,
        abstract: "Sign a message the SEP-53 way: Ed25519 over SHA-256(\"Stellar Signed Message:\\n\" + message).",
        discussion: """
            The message is the argument (UTF-8), --file or --base64 byte for byte, or standard input without \
            one final newline (as `echo` adds; the same bytes `stellar message sign` signs). An empty file or \
            standard input is refused. \
            With --pin-stdin, the PIN is the first line of standard input and the message the rest. \
            With --batch, standard input is newline-delimited JSON requests (docs/guides/scripting.md).
            """)

    @OptionGroup var key: SigningKeyOptions

    @Argument(help: "The message, as UTF-8 text.")
    var message: String?

    @Option(help: ArgumentHelp("Read the message from a file.", valueName: "path"))
    var file: String?

    @Option(name: .customLong("base64"), help: ArgumentHelp("The message as base64 (for binary messages).", valueName: "b64"))
    var messageBase64: String?

    @Option(help: "How to print the signature.")
    var format: SignatureFormat = .base64

    @Flag(help: "Print the signature in hex (same as --format hex).")
    var hex = false

    @Flag(help: "Sign newline-delimited JSON requests from standard input, one result per line.")
    var batch = false

    func validate() throws {
        let sources = [message != nil, file != nil, messageBase64 != nil].filter { $0 }.count
        if batch && sources > 0 {
            throw ValidationError("--batch reads its requests from standard input; drop the message, --file and --base64.")
        }
        if sources > 1 { throw ValidationError("Give the message as an argument, --file or --base64, only one.") }
    }

    func run() throws {
        let format = hex ? .hex : format
        if batch {
            return try BatchSigner.run(try key.run(.messages(encoding: format.encoding)).signed)
        }
        // With --pin-stdin, the PIN is the first line of standard input and the message the rest.
        let pinFirst = try key.readFirst(ifInputIsStandardInput: message == nil && file == nil && messageBase64 == nil)
        let bytes = try message.map { Array($0.utf8) }
            ?? PayloadOptions.bytes(file: file, base64: messageBase64, for: .signingMessage)
        try format.print(try key.run(.message(bytes), alreadyRead: pinFirst), json: key.json, messageHash: SignedMessage.hash(of: bytes))
    }
}

struct Sign: ParsableCommand, NamesIdentity, GivesPIN, GivesPayload {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        _superCommandName: KeystoreCommand.name,
        abstract: "Sign raw bytes with Ed25519 (e.g. a transaction hash or a SEP-10 challenge hash).",
        discussion: """
            The payload comes from --file, --hex, --base64, or standard input byte for byte (an empty file or \
            standard input is refused; --hex '' signs the empty payload). \
            With --batch, standard input is newline-delimited JSON requests (docs/guides/scripting.md).
            """)

    // `SigningKeyOptions`' and `PayloadOptions`' options, declared here rather than as those groups: `sign` is the
    // command a script runs once per signature, and argument-parser reflects on each group's type on every run
    // (see `NamesKeystore`; bench/startup.sh measures it).
    @Option(help: HomeOptions.homeHelp) var home: String?
    @Flag(help: HomeOptions.jsonHelp) var json = false
    @Option(help: HomeOptions.tpmTctiHelp) var tpmTcti: String?
    @Option(help: IdentityOptions.nameHelp, completion: .custom(Completions.identities)) var name: String?
    @Flag(help: PINOptions.stdinHelp) var pinStdin = false
    @Option(help: PINOptions.fileHelp) var pinFile: String?
    @Option(help: PINOptions.fdHelp) var pinFd: Int32?
    @Option(help: PayloadOptions.fileHelp) var file: String?
    @Option(name: .customLong("hex"), help: PayloadOptions.hexHelp) var payloadHex: String?
    @Option(name: .customLong("base64"), help: PayloadOptions.base64Help) var payloadBase64: String?

    @Option(help: "How to print the signature.")
    var format: SignatureFormat = .base64

    @Flag(help: "Sign newline-delimited JSON requests from standard input, one result per line.")
    var batch = false

    func validate() throws {
        try validateKeystore()
        try validatePIN()
        if batch && payloadSourceCount > 0 {
            throw ValidationError("--batch reads its requests from standard input; drop --file, --hex and --base64.")
        }
    }

    func run() throws {
        if batch {
            return try BatchSigner.run(try run(.payloads(encoding: format.encoding)).signed)
        }
        let pinFirst = try readFirst(ifInputIsStandardInput: payloadSourceCount == 0)
        try format.print(try run(.payload(try payload(for: .signing)), alreadyRead: pinFirst), json: json)
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        _superCommandName: KeystoreCommand.name,
        abstract: "Check a signature against an address; exit 0 when valid, 1 when not. Needs no vault.",
        discussion: """
            Checks a SEP-53 message signature, or with --raw a signature over the payload bytes themselves. \
            The signature may be base64 or hex.
            """)

    @Option(help: ArgumentHelp("The signer's account (G…), or a muxed account (M…) of it.", valueName: "G…"))
    var address: String

    @Option(help: ArgumentHelp("The signature, base64 or hex.", valueName: "sig"))
    var signature: String

    @OptionGroup var payload: PayloadOptions

    @Argument(help: "The message, as UTF-8 text.")
    var message: String?

    @Flag(help: "Verify a raw Ed25519 signature over the payload, not a SEP-53 message signature.")
    var raw = false

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let publicKey = try PublicKey(signerOf: address)
        let signatureBytes = try SignatureFormat.decode(signature)
        let bytes = try payload.payload(text: message, for: raw ? .verifyingRaw : .verifyingMessage)
        let valid = raw
            ? publicKey.isValidSignature(signatureBytes, for: bytes)
            : publicKey.isValidMessageSignature(signatureBytes, for: bytes)
        if json {
            struct Output: Encodable { let address: String; let valid: Bool }
            try Console.printJSON(Output(address: publicKey.accountID, valid: valid))
            // The object above is the answer; an error object after it would make two.
            guard valid else { throw ExitCode(ExitStatus.invalidSignature.rawValue) }
        } else if valid {
            Console.print("valid")
        }
        guard valid else { throw CLIError.invalidSignature }
    }
}
