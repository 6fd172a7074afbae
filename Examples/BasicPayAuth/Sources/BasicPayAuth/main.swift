// The AuthService of a wallet app on StellarKeystore: sign up with a PIN, sign in, sign a SEP-53 message,
// change the PIN, and keep a session. Prints the address, the message and its signature (base64), one per line.
import Foundation
import StellarKeystore

struct FlowError: Error { let message: String }

/// The flow, in `directory` (the keys in `keys/`, the sessions in `run/`).
func signUpSignInAndSign(in directory: String) async throws {
    let keystore = try Keystore(directory: directory + "/keys", sessionDirectory: directory + "/run")
    try FileManager.default.createDirectory(atPath: directory + "/run", withIntermediateDirectories: true,
                                            attributes: [.posixPermissions: 0o700])

    // Argon2id runs off the main actor: `await` picks the async use cases.
    let created = try await keystore.signUp(name: "alice", pin: PIN("493817"), kdf: .interactive)
    // Review (what is signed, by which key: no secret read, nothing asked), show the summary, then approve.
    let message = "I control this account"
    let review = try keystore.review(.message(Array(message.utf8)), as: "alice")
    guard review.signer.address == created.address else { throw FlowError(message: "reviewed for another key") }
    // What is printed after is read from the approval: the review is gone once approved.
    let approval = try await review.approve(pin: PIN("493817"))
    let (address, signature) = (approval.signer.address, approval.signed)
    try await keystore.changePIN(name: "alice", from: PIN("493817"), to: PIN("860271"))
    let token = try keystore.startSession(name: "alice", ttl: .seconds(900)) { try PIN("860271") }
    let resumed = try keystore.signingKey(keys: .automatic(agent: nil, session: token.stringValue, pinAvailable: false))
    guard resumed.address == address, resumed.source == .session else { throw FlowError(message: "the session holds another key") }
    try keystore.endSession(token)
    print(address)
    print(message)
    print(Data(signature).base64EncodedString())
}

// A directory given is the caller's, and is kept. Without one, the example makes its own under TMPDIR and
// removes it at the end, whether the flow succeeded or not: a demo leaves no keystore behind.
let given = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : nil
let directory = given ?? NSTemporaryDirectory() + "basicpay-\(UUID().uuidString)"
do {
    defer { if given == nil { try? FileManager.default.removeItem(atPath: directory) } }
    try await signUpSignInAndSign(in: directory)
} catch {
    let message = (error as? FlowError)?.message ?? (error as? KeystoreError)?.message ?? "\(error)"
    FileHandle.standardError.write(Data("BasicPayAuth: \(message)\n".utf8))
    exit(1)
}
