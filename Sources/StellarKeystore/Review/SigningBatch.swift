import StellarKeys
import StellarTransactions

/// An approved key signing a stream of requests, one JSON line each (`BatchRequest`), each answered with one
/// line: `{"id": …, "signature": "…"}` for payloads and messages, `{"id": …, "envelope": "…", "hash": "…"}` (with
/// `"alreadySigned": true` when the envelope was returned unchanged) for transactions, or `{"error": "…",
/// "id": …}`. None is shown to a person one by one: the review of the batch says so. `answer` may be called
/// from many threads at once.
public struct SigningBatch: Sendable {
    /// How signatures of payloads and messages are written.
    public enum Encoding: Sendable { case base64, hex }

    enum Kind: Sendable {
        case payloads(Encoding), messages(Encoding), transactions(StellarNetwork)

        /// What the batch signs, for its summary.
        var description: String {
            switch self {
            case .payloads: "raw payloads"
            case .messages: "SEP-53 messages"
            case .transactions: "transaction envelopes"
            }
        }
    }

    let kind: Kind
    let key: any Signing
    /// How an error becomes the answer's text; by default its message.
    public var describe: @Sendable (Error) -> String = { ($0 as? KeystoreError)?.message ?? "\($0)" }

    init(kind: Kind, key: any Signing) {
        self.kind = kind
        self.key = key
    }

    /// Appends the answer to one request line (without its newline) to `output`; returns whether it was signed.
    public func answer(_ line: UnsafeRawBufferPointer, into output: inout [UInt8]) -> Bool {
        guard let request = BatchRequest(line: line) else {
            let expected = if case .transactions = kind { "an envelope" } else { "message, base64 or hex" }
            output += Array(#"{"error":"not a JSON object with \#(expected)","id":null}"#.utf8) + [0x0A]
            return false
        }
        func failure(_ reason: String) -> Bool {
            output += Self.errorOpening + Array(BatchRequest.jsonString(reason).utf8) + Self.idAfterError + request.id + Self.objectEnd
            return false
        }
        if let key = request.repeatedKey { return failure(Self.repeated(key)) }
        do {
            switch kind {
            case .transactions(let network):
                guard case .envelope(let text) = request.payload else { return failure("give exactly one envelope") }
                let signed = try key.signTransaction(try TransactionEnvelope(base64: text), on: network)
                output += Self.idOpening + request.id + Array(#","envelope":""#.utf8)
                Base64.encode(signed.envelope, into: &output)
                output += Array(#"","hash":""#.utf8) + Array(Hex.string(signed.hash).utf8)
                output += Array((signed.wasAlreadySigned ? #"","alreadySigned":true}"# : #""}"#).utf8) + [0x0A]
                return true
            case .payloads(let encoding), .messages(let encoding):
                let payload: [UInt8]
                switch request.payload {
                case nil: return failure("give exactly one of message, base64 or hex")
                case .envelope: return failure("a transaction envelope is signed in a batch of transactions")
                case .message(let bytes): payload = bytes
                case .base64(let text):
                    guard let bytes = Base64.decode(text) else { return failure("base64 is not valid base64") }
                    payload = bytes
                case .hex(let text):
                    guard let bytes = Hex.bytes(String(decoding: text, as: UTF8.self)) else { return failure("hex is not valid hex") }
                    payload = bytes
                }
                let signature = try payload.withUnsafeBytes { bytes in
                    if case .messages = kind { try key.signMessage(bytes) } else { try key.sign(bytes) }
                }
                output += Self.idOpening + request.id + Self.signatureOpening
                switch encoding {
                case .base64: Base64.encode(signature, into: &output)
                case .hex: output += Array(Hex.string(signature).utf8)
                }
                output += Self.signatureEnd
                return true
            }
        } catch {
            return failure(describe(error))
        }
    }

    /// The answer to a request with a key twice: which value was meant depends on who reads it.
    static func repeated(_ key: String) -> String {
        "the key '\(key)' appears twice, so the request means different things to different JSON readers; nothing was signed"
    }

    private static let errorOpening = Array(#"{"error":"#.utf8)
    private static let idAfterError = Array(#","id":"#.utf8)
    private static let objectEnd = Array("}\n".utf8)
    private static let idOpening = Array(#"{"id":"#.utf8)
    private static let signatureOpening = Array(#","signature":""#.utf8)
    private static let signatureEnd = Array("\"}\n".utf8)
}
