import FoundationEssentials
import StellarKeys
import StellarTransactions

/// Who shows a summary to a person and asks them for a PIN or a yes: a terminal, an app's sheet. It decides
/// nothing: when a summary is shown and whether a consent may be asked are the request's and the key's
/// (`SigningRunner` has the rule); a presenter only says whether a person is there, and does as it is told.
public protocol SigningPresenter {
    /// Whether a person is at hand now to read a summary and answer (type a PIN, say yes). Asked only when the
    /// key's PIN is to be asked, and so lazily: finding out can mean opening a terminal.
    var personIsPresent: Bool { get }
    /// Whether summaries are wanted when nothing needs a person's yes (false: a script asked for quiet). A
    /// summary that comes before a question is shown whatever this says.
    var showsSummaries: Bool { get }
    /// Shows `summary` to the person; `source` says where the key comes from (whether a PIN follows).
    func show(_ summary: SigningSummary, for source: KeySource)
    /// The person's answer to `consent.question`, asked after the whole summary: true gives the consent.
    func agrees(to consent: SigningConsent) throws -> Bool
    /// The PIN of `identity` (the signer's, or a second identity's: a sign-in's client domain), for a key from
    /// `source` (a token's PIN is read as a token's).
    func pin(for identity: IdentityName, source: KeySource) throws -> PIN
}

/// The one conversation every signing command has: review → show → consent and PIN → approve.
///
/// ```swift
/// let approval = try SigningRunner(presenter: sheet).run(.transaction(envelope, network: .testnet), with: key)
/// print(approval.signed.base64)
/// ```
///
/// The rules, the same for every caller: the summary is shown when the request's `summaryShown` says, and
/// always before a question; a consent the review needs is asked only of a person who is about to type the key's
/// PIN (an agent, a session or a piped PIN has nobody to ask, and gets the refusal), and never for a request a host
/// made (`SigningRequest.consentMayBeAsked`).
public struct SigningRunner<Presenter: SigningPresenter> {
    public let presenter: Presenter

    public init(presenter: Presenter) {
        self.presenter = presenter
    }

    /// `request` reviewed for `key`, shown, agreed to and approved; what was signed, with the summary and signer
    /// that were reviewed for it.
    public func run<Signed>(_ request: SigningRequest<Signed>, with key: SigningKey, now: Date = Date()) throws -> Approval<Signed> {
        let review = try key.review(request, now: now)
        let source = review.keySource
        // A person is there to read and answer only when the key's PIN is about to be typed.
        let personTypesPIN = { source.asksPIN && presenter.personIsPresent }
        var consent: SigningConsent?
        if let needed = review.consentNeeded {
            guard request.consentMayBeAsked else { throw needed.risks.contains(.notAddressBound) ? SigningRefusal.notAddressBound : .notStrict }
            guard personTypesPIN() else { throw needed.refusal }
            presenter.show(review.summary, for: source)
            guard try presenter.agrees(to: needed) else { throw needed.refusal }
            consent = needed
        } else if presenter.showsSummaries {
            switch request.summaryShown {
            case .always: presenter.show(review.summary, for: source)
            case .whenPersonTypesPIN: if personTypesPIN() { presenter.show(review.summary, for: source) }
            }
        }
        return try review.approve(consent: consent) { name in try presenter.pin(for: name, source: source) }
    }
}

/// When a request's summary is shown.
public enum SummaryMoment: Sendable, Equatable {
    /// Before every signature.
    case always
    /// Only when a person is about to type the PIN, and so is there to read it: for what scripts sign many times a
    /// second (raw bytes, SEP-53 messages, batches), where a summary nobody reads would only fill a log.
    case whenPersonTypesPIN
}

extension SigningRequest {
    /// When this request's summary is shown (`SigningRunner`).
    public var summaryShown: SummaryMoment {
        switch content {
        case .payload, .message, .batch: .whenPersonTypesPIN
        default: .always
        }
    }

    /// Whether a person may be asked to agree to a risk the review finds. Not for a request a host made and told
    /// the signer what it signs (`expectedHash`: a stellar-cli signer plugin's): the host has no conversation to
    /// put a question in, so its risks are accepted up front (`allowing`) or refused.
    public var consentMayBeAsked: Bool { expectedHash == nil }
}

/// A signature refused by the rules of the conversation, not by the review.
public enum SigningRefusal: KeystoreError, Equatable {
    /// A host's request is for a V1 authorization, which binds no address, and V1 was not allowed up front.
    case notAddressBound
    /// A host's request is for an authorization that is not strict, which was not allowed up front.
    case notStrict

    public var message: String {
        switch self {
        case .notAddressBound:
            "The host asks for a V1 authorization signature, which binds no address (CAP-71-02): another address that accepts this key could replay it as its own credential; nothing was signed."
        case .notStrict:
            "The host asks for an authorization signature whose root is not its transaction's call, so that another transaction could use it; nothing was signed."
        }
    }
}
