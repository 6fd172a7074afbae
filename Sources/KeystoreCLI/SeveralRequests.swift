import StellarTransactions

// Helpers of the commands whose run still makes several library calls (combine-tx and share-tx decode, resolve
// and read here, then call the library): each goes when its command makes one request, as sign-tx, sign-auth,
// web-auth and show-tx do. ArchitectureTests.theToolLeavesEveryDecisionToTheRequest names these files.

extension EnvelopeOptions {
    /// The envelope, decoded.
    func read() throws -> TransactionEnvelope { try TransactionEnvelope(base64: try readText()) }
}

extension AccountFileOptions {
    /// Every file, read strictly.
    func read() throws -> [AccountSigners] { try AccountSigners.read(try contents()) }
}
