import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

extension SignTx {
    static let requestHelp = """
        A SEP-7 request (web+stellar:tx?xdr=…) is read strictly: one of each parameter SEP-7 defines for tx, \
        replace (fields to fill in) refused. When it names an origin_domain, its signature is checked against \
        the URI_REQUEST_SIGNING_KEY of https://DOMAIN/.well-known/stellar.toml before anything else; a \
        signature without an origin_domain, an origin_domain without a signature, no such key or a bad \
        signature is exit 15, before any PIN; so is an origin_domain that is a port on this machine \
        (localhost:PORT, whose stellar.toml would come over plain http), unless --allow-local-origin. The summary shows the origin (verified, by which key, or none), \
        msg, callback, pubkey (a warning when it is not this key), chain and whether the request named its \
        network. The network given must be the request's (one naming none is for the public network), else \
        exit 2; with none given, the request's is used only after a yes typed at the terminal (no terminal: \
        exit 64). With --submit-callback, the signed envelope is printed, then POSTed to the request's url: \
        callback (https; http only to this machine) as the form field xdr; the server's status and answer \
        follow on standard error, and one that is not 2xx is exit 13. --json adds the request's fields, and \
        the callback's answer (POSTed before the object is printed).
        """

    /// A SEP-7 request: read, its origin checked (the only fetch, before the review), its network decided by the
    /// review (`SigningRequest.transaction(_:network:)`), shown (with the consent its network may need), signed,
    /// printed; then, if asked, sent to its callback.
    func signRequest(_ text: [UInt8], accounts: [AccountSigners], alreadyRead pinFirst: PINLine?) throws {
        let request = try TransactionRequest(uri: text).verifiedOrigin(allowingThisMachine: allowLocalOrigin)
        // Where it would go is known before anything is signed.
        if submitCallback { _ = try request.callbackAddress() }
        let approval = try key.run(try .transaction(request, network: try networkOptions.resolveIfGiven(), accounts: accounts, trimming: trim),
                                   alreadyRead: pinFirst, quiet: quiet)
        let (signed, summary, signer) = (approval.signed, approval.summary, approval.signer.address)
        let network = summary.network ?? request.request.network
        for note in approval.notes { Console.note(note) }
        if key.identity.json {
            struct Answer: Encodable { let url: String; let status: Int; let body: String }
            struct Output: Encodable {
                let envelope, hash, network, signer: String
                let alreadySigned: Bool
                let summary: TransactionSummary?
                let request: TransactionRequest.Checked
                let callback: Answer?
            }
            // One object: the callback's answer is in it, so the POST comes first.
            let answer = try submitCallback ? request.submit(signed) : nil
            try Console.printJSON(Output(envelope: signed.base64, hash: Hex.string(signed.hash), network: network.name ?? network.passphrase,
                                         signer: signer, alreadySigned: signed.wasAlreadySigned, summary: summary.transaction,
                                         request: request,
                                         callback: answer.map { Answer(url: $0.url, status: $0.status, body: String(decoding: $0.body, as: UTF8.self)) }))
        } else {
            // Printed first, so that a callback that fails loses nothing.
            Console.print(signed.base64)
            guard submitCallback else { return }
            let answer = try request.submit(signed)
            Console.note("\(answer.url) answered HTTP \(answer.status): \(answer.bodyLine)")
        }
    }
}

extension NetworkOptions {
    /// The network given on the command line or in the environment, or nil when none is.
    func resolveIfGiven() throws -> StellarNetwork? {
        if network == nil, networkPassphrase == nil, try StellarNetwork(environment: Environment.values) == nil { return nil }
        return try resolve()
    }
}

extension EnvelopeOptions {
    /// The input as given: an envelope's base64 or a SEP-7 request, told apart by the request's scheme.
    func readEnvelopeOrRequest() throws -> [UInt8] {
        try Console.readInput(envelope, file: file, prompt: "Transaction envelope (base64) or SEP-7 request",
                              limit: max(TransactionEnvelope.maximumTextSize, TransactionRequest.maximumSize))
    }
}
