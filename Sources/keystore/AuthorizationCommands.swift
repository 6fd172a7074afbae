import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import StellarKeystore
import StellarKeys
import StellarTransactions

struct SignAuth: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-auth",
        _superCommandName: KeystoreCommand.name,
        abstract: "Sign a Soroban authorization preimage (base64 HashIDPreimage), after showing what it authorizes.",
        discussion: """
            With --preimage: the input is a HashIDPreimage of type ENVELOPE_TYPE_SOROBAN_AUTHORIZATION (or \
            ..._WITH_ADDRESS, CAP-71), as Freighter's and SEP-43's signAuthEntry receive it. Prints the Ed25519 \
            signature of its SHA-256 in base64 (--json: {"signedAuthEntry", "signerAddress"}, as SEP-43 names them). \
            The network is required, as for sign-tx, and a preimage for another network is refused. Before the key \
            is used, the invocation tree goes to standard error; --quiet drops it. With --pin-stdin and the preimage \
            on standard input, the PIN is the first line. Signing the entries inside a simulated transaction \
            envelope is not built yet, so --preimage is required.
            """)

    @OptionGroup var key: SigningKeyOptions

    @Flag(help: "The input is a bare HashIDPreimage.")
    var preimage = false

    @Argument(help: ArgumentHelp("The preimage, base64 XDR (default: standard input).", valueName: "xdr"))
    var xdr: String?

    @Option(help: ArgumentHelp("Read the preimage from a file.", valueName: "path"))
    var file: String?

    @OptionGroup var networkOptions: NetworkOptions

    @Flag(help: "Do not print the summary.")
    var quiet = false

    func validate() throws {
        if !preimage {
            throw ValidationError("Signing the authorization entries of a transaction envelope is not built yet; give --preimage and a HashIDPreimage.")
        }
        if xdr != nil && file != nil { throw ValidationError("Give the preimage as an argument or --file, not both.") }
    }

    func run() throws {
        let network = try networkOptions.resolve()
        let pinFirst = key.pin.pinStdin && xdr == nil && file == nil ? try key.pin.read() : nil
        let preimage = try AuthorizationPreimage(base64: Console.readInput(
            xdr, file: file, prompt: "Authorization preimage, base64", limit: AuthorizationPreimage.maximumTextSize))
        // Checked before any PIN is asked or key opened: a preimage for another network is never summarised as
        // if it were for this one.
        try preimage.check(on: network)
        var shown = false
        func show(_ name: IdentityName, _ key: PublicKey?) {
            shown = true
            if !quiet { self.key.showBeforeSigning(preimage.lines(on: network, signingAs: key.map { (name.rawValue, $0) })) }
        }
        let signer = try key.signer(alreadyRead: pinFirst) { name in
            show(name, try? PublicKey(accountID: key.identity.keystore.keystore().address(of: name)))
        }
        if !shown { show(signer.name, signer.publicKey) }
        let signature = Base64.string(try signer.signAuthorization(preimage: preimage, on: network))
        if key.identity.json {
            struct Output: Encodable { let signedAuthEntry, signerAddress: String }
            try Console.printJSON(Output(signedAuthEntry: signature, signerAddress: signer.address))
        } else {
            Console.print(signature)
        }
    }
}
