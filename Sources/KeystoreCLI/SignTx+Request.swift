import ArgumentParser
import StellarKeystore
import StellarKeys
import StellarTransactions
import StellarWebAuth

extension SignTx {
    static let requestHelp = """
        The input may be a SEP-7 request (web+stellar:tx?…), its origin checked before any PIN (exit 15): see \
        docs/guides/sep7.md.
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
