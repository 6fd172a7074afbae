import StellarTransactions

// Helpers of the command whose run still makes several library calls (share-tx decodes and resolves here, then
// calls the library): each goes when its command makes one request, as sign-tx, sign-auth, web-auth, show-tx and
// combine-tx do. ArchitectureTests.theToolLeavesEveryDecisionToTheRequest names these files.

extension EnvelopeOptions {
    /// The envelope, decoded.
    func read() throws -> TransactionEnvelope { try TransactionEnvelope(base64: try readText()) }
}
