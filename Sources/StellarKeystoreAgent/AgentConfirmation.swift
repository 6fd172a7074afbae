import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions
import Synchronization

/// What a person is asked before the agent signs: who asks, on which network, and what would be signed; and the
/// handle that says when the question has been withdrawn.
public struct AgentConfirmation: Sendable {
    /// The calling process and its parents, up to its session leader.
    public let caller: CallerChain
    /// The summary of what would be signed: the review's `SigningSummary.text`, as every signing path shows it.
    public let lines: [String]
    /// The network the signature is for; nil for a raw payload or a message, which are valid on any network.
    public let network: StellarNetwork?
    /// Whether `lines` leave part of the request out: then only the word `yes` approves it.
    public let isElided: Bool
    /// Seconds the agent waits for the answer before it withdraws the question.
    public let timeout: Int
    /// Says when the question is withdrawn, and lets a blocking read end then.
    package let cancellation: Cancellation

    /// What a person reads, in this order: the network first (what the signature is good for), then who asks,
    /// then the summary. Each line is escaped for a terminal already.
    public var text: [String] {
        let network = network.map { "Network: \($0.shown)" }
            ?? "Network: none (a signature of raw bytes or of a message is valid on every network)"
        return [network, "Requested by: \(caller.text)"] + lines.map { "  " + $0 }
    }

    /// The question that ends the prompt, which names the answer that approves.
    public var question: String {
        isElided ? "Part of this request is not shown above. Type yes to sign it, anything else to refuse: " : "Sign? [y/N] "
    }

    /// Whether `answer` (a line, without its newline) approves: `y` or `yes`, and only `yes` when part of the
    /// request is not shown, so that a reflex `y` cannot approve what nobody saw.
    package func isApproval(_ answer: some StringProtocol) -> Bool {
        answer == "yes" || (!isElided && answer == "y")
    }

    /// A question's end before its answer: the agent withdraws it when its key is dropped, when its client
    /// leaves, and when nobody answers in time. A `confirm` callback that reads a terminal waits with
    /// `waitForInput(on:)` so that its read ends then; one that ignores it is not waited for (the client gets its
    /// answer at once), but the next question waits until it returns.
    public final class Cancellation: @unchecked Sendable {
        /// Readable once the question is withdrawn: a pipe with one byte written and never read.
        private let withdrawn: WakePipe
        /// Readable once the callback has answered.
        private let answered: WakePipe
        private let state = Mutex<(withdrawal: AgentError.Rejection?, answer: Bool?)>((nil, nil))
        /// The address of the key the question is about.
        let address: String

        fileprivate var withdrawnFD: Int32 { withdrawn.readEnd }
        fileprivate var answeredFD: Int32 { answered.readEnd }

        init(address: String) throws(AgentError) {
            withdrawn = try WakePipe(for: "ask")
            do {
                answered = try WakePipe(for: "ask")
            } catch {
                withdrawn.close()
                throw error
            }
            self.address = address
        }

        deinit {
            withdrawn.close()
            answered.close()
        }

        /// Whether the question has been withdrawn.
        package var isCancelled: Bool { state.withLock { $0.withdrawal != nil } }

        /// Why it was withdrawn, for the person who was asked: "nobody answered within 120 s", "its key was
        /// dropped", "the client left"; nil while it stands.
        public var reason: String? {
            state.withLock { $0.withdrawal }.map { why in
                switch why {
                case .timedOut: "nobody answered in time"
                case .keyDropped: "its key was dropped"
                case .clientLeft: "the client left"
                case .declined: "declined"
                }
            }
        }

        /// Waits until `fd` can be read (true) or the question is withdrawn (false).
        package func waitForInput(on fd: Int32) -> Bool {
            guard let ready = UnixSocket.waitForInput([fd, withdrawnFD], milliseconds: -1) else { return false }
            return ready[0] && !isCancelled
        }

        /// Withdraws the question, once; false if it was withdrawn or answered already.
        @discardableResult
        func withdraw(_ why: AgentError.Rejection) -> Bool {
            let withdrawn = state.withLock { state in
                guard state.withdrawal == nil, state.answer == nil else { return false }
                state.withdrawal = why
                return true
            }
            if withdrawn { self.withdrawn.signal() }
            return withdrawn
        }

        fileprivate func answer(_ yes: Bool) {
            let answered = state.withLock { state in
                guard state.withdrawal == nil, state.answer == nil else { return false }
                state.answer = yes
                return true
            }
            if answered { self.answered.signal() }
        }

        /// The answer, or why there is none; both nil while the question stands.
        fileprivate var outcome: (withdrawal: AgentError.Rejection?, answer: Bool?) { state.withLock { $0 } }
    }
}

/// Which requests `confirm` is asked about.
public enum ConfirmationScope: String, Sendable {
    /// Every signing request.
    case everyRequest = "all"
    /// Those whose signature could be valid on Stellar's public network: a transaction or an authorization
    /// entry for it, and every raw payload and message, which name no network (the agent cannot tell what a raw
    /// payload approves). Transactions and entries for the test networks, or for any other passphrase, are signed
    /// on request: a signature over a hash that includes another network's ID is worthless on the public one.
    case publicNetwork = "public"

    func covers(_ network: StellarNetwork?) -> Bool {
        switch self {
        case .everyRequest: true
        case .publicNetwork: network.map { $0.passphrase == StellarNetwork.public.passphrase } ?? true
        }
    }
}

extension KeystoreAgent {
    /// The range of `Options.confirmationTimeout`, in seconds.
    package static let shortestConfirmationTimeout = AgentProtocol.shortestConfirmationTimeout
    package static let longestConfirmationTimeout = AgentProtocol.longestConfirmationTimeout

    /// `Options.confirmationTimeout`, within its range.
    var questionTimeout: Int {
        min(max(options.confirmationTimeout, Self.shortestConfirmationTimeout), Self.longestConfirmationTimeout)
    }

    /// Whether a request for `network` is put to the `confirm` callback before it is signed.
    func asks(about network: StellarNetwork?) -> Bool {
        options.confirm != nil && options.confirmationScope.covers(network)
    }

    /// Returns once the `confirm` callback said yes to `lines` (a review's summary) for `key`. Questions are put one
    /// at a time, each on a thread of its own, while the request's thread waits for the answer, the question's
    /// withdrawal (its key dropped), the client's hang-up or the timeout, whichever comes first: the client's
    /// answer never waits for a callback that ignores its cancellation. A no, or a question withdrawn, is SEP-43's
    /// −4. The caller looks the key up again after the yes: one dropped meanwhile signs nothing.
    func ask(about key: HeldKey, network: StellarNetwork?, lines: [String], isElided: Bool, by caller: AgentCaller) throws {
        guard let confirm = options.confirm else { return }
        let question = try AgentConfirmation.Cancellation(address: key.address)
        let confirmation = AgentConfirmation(caller: caller.chain, lines: lines, network: network, isElided: isElided,
                                             timeout: questionTimeout, cancellation: question)
        // Registered where every drop of a key looks, and only while the key is still held: a key dropped between
        // the look-up and here withdraws nothing, so it is checked here.
        let id = ObjectIdentifier(question)
        let registered = state.withLock { state in
            guard state.keys.contains(where: { $0.address == key.address }) else { return false }
            state.questions[id] = question
            return true
        }
        guard registered else { throw AgentError.keyNotHeld(key.address) }
        defer { state.withLock { _ = $0.questions.removeValue(forKey: id) } }
        let asked = Threads.detach { [self] in
            confirming.withLock { _ in
                // Withdrawn while it waited for the terminal: never put.
                guard !question.isCancelled else { return }
                // Nothing is written between the summary and its answer: another client's log line would land
                // on the prompt, and many could scroll the summary away.
                question.answer(holdingLog { confirm(confirmation) })
            }
        }
        guard asked else { throw AgentError.system("ask", EAGAIN) }
        try wait(for: question, from: caller)
    }

    /// Returns on a yes; throws on a no or a withdrawal, withdrawing the question itself on a hang-up or the
    /// timeout.
    private func wait(for question: AgentConfirmation.Cancellation, from caller: AgentCaller) throws(AgentError) {
        let deadline = Self.monotonicSeconds() + Double(questionTimeout)
        while true {
            let outcome = question.outcome
            if let withdrawal = outcome.withdrawal { throw AgentError.rejected(withdrawal) }
            if let yes = outcome.answer {
                guard yes else { throw AgentError.rejected(.declined) }
                return
            }
            let left = Int32(min(((deadline - Self.monotonicSeconds()) * 1000).rounded(.up), 3_600_000))
            if left <= 0 {
                // An answer that came at the same moment wins; withdraw says which was first.
                if question.withdraw(.timedOut) { throw AgentError.rejected(.timedOut) }
                continue
            }
            let hungUp: Bool
            if let socket = caller.socket {
                hungUp = UnixSocket.waitForInput([question.answeredFD, question.withdrawnFD], orHangUpOf: socket.fd, milliseconds: left)?.hungUp ?? false
            } else {
                _ = UnixSocket.waitForInput([question.answeredFD, question.withdrawnFD], milliseconds: left)
                hungUp = false
            }
            if hungUp && question.withdraw(.clientLeft) { throw AgentError.rejected(.clientLeft) }
        }
    }
}
