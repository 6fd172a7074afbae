import StellarKeys

/// What a signing caller asks for in one call, made from what it was given (text, a network's name, files, a
/// service's address) and nothing decided yet: `SigningRunner.run(_:as:in:keys:)` decodes it, resolves it, finds
/// the key, and runs the one conversation (review → show → consent and PIN → approve). A `SigningRequest` is
/// the simplest kind; `TransactionSigning`, `SignIn` and `ContractSignIn` carry the rules of a transaction as a
/// person gives one and of a sign-in.
public protocol SigningTask {
    /// What the caller gets back: the approval, and what a kind adds (the network resolved, a service's token).
    associatedtype Outcome
    /// Decoded, resolved, signed by the key `identity` has among `keys`, through `runner`.
    func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                          keys: KeySources) throws -> Outcome
}

extension SigningRequest: SigningTask {
    public func run<Presenter: SigningPresenter>(through runner: SigningRunner<Presenter>, as identity: IdentityName?, in keystore: Keystore,
                                                 keys: KeySources) throws -> Approval<Signed> {
        try runner.run(self, with: try keystore.signingKey(as: identity, keys: keys))
    }
}

extension SigningRunner {
    /// `task` decoded, resolved and signed by the key that signs for `identity`, in one call.
    public func run<Task: SigningTask>(_ task: Task, as identity: IdentityName?, in keystore: Keystore, keys: KeySources) throws -> Task.Outcome {
        try task.run(through: self, as: identity, in: keystore, keys: keys)
    }
}
