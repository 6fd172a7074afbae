import StellarKeys

/// Who checks that a SEP-7 request comes from its `origin_domain`: the domain's `URI_REQUEST_SIGNING_KEY`
/// found (StellarWebAuth's `FetchedOrigins` reads it from the domain's stellar.toml), and the request's
/// signature checked against it (`TransactionRequest.checked(originKey:)`). Nothing of a request is to be
/// trusted before this. The same source says whether the signed envelope can go to the request's callback.
public protocol TransactionRequestOrigins: Sendable {
    /// `request`, its origin checked; `forCallback`: its callback checked too, as an address the signed envelope
    /// can be sent to (`TransactionRequestError.noCallback` when it has none), before anything is signed.
    func checked(_ request: TransactionRequest, forCallback: Bool) throws -> TransactionRequest.Checked
}

/// Origins that are never looked up: a request that names none is `.unnamed`, one that names one is refused
/// (`TransactionRequestError.noSigningKey`), for a caller that fetches nothing; a callback needs only to be there.
public struct UnlookedUpOrigins: TransactionRequestOrigins {
    public init() {}

    public func checked(_ request: TransactionRequest, forCallback: Bool) throws -> TransactionRequest.Checked {
        let checked = try request.checked(originKey: nil)
        if forCallback, request.callback == nil { throw TransactionRequestError.noCallback }
        return checked
    }
}
