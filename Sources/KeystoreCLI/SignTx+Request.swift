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

    /// What `--json` prints: the signed envelope and what was reviewed; for a SEP-7 request, the request and its
    /// callback's answer too. A field that is nil is left out.
    struct Output: Encodable {
        struct Answer: Encodable { let url: String; let status: Int; let body: String }
        let envelope, hash, network, signer: String
        let alreadySigned: Bool
        let summary: TransactionSummary?
        let removed: [SignatureCheck.Signature]?
        var request: TransactionRequest.Checked?
        var callback: Answer?

        init(_ signed: TransactionSigning.Signed, removed: [SignatureCheck.Signature]?) {
            let (approval, network) = (signed.approval, signed.network)
            envelope = approval.signed.base64
            hash = Hex.string(approval.signed.hash)
            self.network = network.name ?? network.passphrase
            signer = approval.signer.address
            alreadySigned = approval.signed.wasAlreadySigned
            summary = approval.summary.transaction
            self.removed = removed
        }
    }

    /// A signed SEP-7 request, printed; then, if asked, sent to its callback. The POST is a second request of the
    /// library's, after the signing: the envelope is printed before it, so that a callback that fails loses nothing.
    func printSigned(_ signed: TransactionSigning.Signed, request: TransactionRequest.Checked) throws {
        let approval = signed.approval
        if key.json {
            // One object: the callback's answer is in it, so the POST comes first.
            let answer = try submitCallback ? request.submit(approval.signed) : nil
            var output = Output(signed, removed: nil)
            output.request = request
            output.callback = answer.map { Output.Answer(url: $0.url, status: $0.status, body: String(decoding: $0.body, as: UTF8.self)) }
            try Console.printJSON(output)
        } else {
            // Printed first, so that a callback that fails loses nothing.
            Console.print(approval.signed.base64)
            guard submitCallback else { return }
            let answer = try request.submit(approval.signed)
            Console.note("\(answer.url) answered HTTP \(answer.status): \(answer.bodyLine)")
        }
    }
}

extension EnvelopeOptions {
    /// The input as given: an envelope's base64 or a SEP-7 request, told apart by the library.
    func readEnvelopeOrRequest() throws -> [UInt8] {
        try Console.readInput(envelope, file: file, prompt: "Transaction envelope (base64) or SEP-7 request",
                              limit: max(TransactionEnvelope.maximumTextSize, TransactionRequest.maximumSize))
    }
}
