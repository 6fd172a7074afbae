import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions

struct StrKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strkey",
        _superCommandName: KeystoreCommand.name,
        abstract: "Encode and decode Stellar StrKeys (SEP-23).",
        subcommands: [Decode.self, Encode.self]
    )

    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decode",
            abstract: "Print the type and hex payload of a StrKey.",
            discussion: "A secret seed (S…) is read from standard input only: on the command line it would show in `ps`."
        )

        @Argument(help: "The StrKey. Omit it to read one from standard input.")
        var strKey: String?

        @Flag(help: "Print a JSON object.")
        var json = false

        func run() throws {
            let text = try strKey ?? Console.readStandardInputText()
            let decoded = try StrKey(text)
            if strKey != nil && decoded.kind == .secretSeed {
                throw CLIError.secretOnCommandLine("a secret seed; pipe it on standard input instead")
            }
            let output = DecodedStrKey(decoded)
            if json {
                try Console.printJSON(output)
            } else {
                Console.print("type: \(output.type)")
                Console.print("payload: \(output.payload)")
                if let account = output.account { Console.print("account: \(account)") }
                if let id = output.id { Console.print("id: \(id)") }
                if let inner = output.signedPayload { Console.print("signed-payload: \(inner)") }
            }
        }
    }

    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "encode",
            abstract: "Encode a hex payload as a StrKey.",
            discussion: """
                The payload is the binary key of SEP-23: 32 bytes for most types, the key and a 64-bit id for \
                muxed-account, the key, length, payload and padding for signed-payload, the type byte and hash \
                for claimable-balance. A secret-seed payload is read from standard input only.
                """
        )

        @Option(help: "The key type: \(StrKey.Kind.allCases.map(\.rawValue).joined(separator: ", ")).")
        var type: StrKey.Kind

        @Argument(help: "The payload in hex. Omit it to read it from standard input.")
        var hex: String?

        @Flag(help: "Print a JSON object.")
        var json = false

        func run() throws {
            if hex != nil && type == .secretSeed {
                throw CLIError.secretOnCommandLine("a secret seed; pipe its hex on standard input instead")
            }
            guard let payload = try Hex.bytes(hex ?? Console.readStandardInputText()) else {
                throw CLIError.invalidHex
            }
            let strKey = try StrKey(kind: type, payload: payload)
            try Console.printAnswer(json: json, ["type": type.rawValue, "strkey": strKey.stringValue], else: strKey.stringValue)
        }
    }
}

extension StrKey.Kind: ExpressibleByArgument {}

/// What `strkey decode` shows of a StrKey.
struct DecodedStrKey: Encodable {
    let type: String
    let payload: String
    var account: String?
    var id: String?
    var signedPayload: String?

    init(_ strKey: StrKey) {
        type = strKey.kind.rawValue
        payload = Hex.string(strKey.payload)
        if strKey.kind != .accountID { account = strKey.ed25519PublicKey?.accountID }
        id = strKey.muxedID.map { String($0) }  // a string: JSON numbers lose precision past 2^53
        signedPayload = strKey.signedPayloadData.map { Hex.string($0) }
    }
}
