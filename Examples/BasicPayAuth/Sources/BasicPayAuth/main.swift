// The AuthService of a wallet app on StellarKeystore: sign up with a PIN, sign in, sign a SEP-53 message,
// change the PIN, and keep a session. Prints the address, the message and its signature (base64), one per line.
import Foundation
import StellarKeystore

let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory() + "basicpay-\(getpid())"
let keystore = try Keystore(directory: directory + "/keys", sessionDirectory: directory + "/run")
try FileManager.default.createDirectory(atPath: directory + "/run", withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])

// Argon2id runs off the main actor: `await` picks the async use cases, in top-level code too.
let created = try await keystore.signUp(name: "alice", pin: PIN("493817"), kdf: .interactive)
let signer = try await keystore.signIn(name: "alice", pin: PIN("493817"))
precondition(signer.address == created.address)
let message = "I control this account"
let signature = signer.signMessage(Array(message.utf8))
try await keystore.changePIN(name: "alice", from: PIN("493817"), to: PIN("860271"))
let token = try keystore.startSession(try await keystore.signIn(name: "alice", pin: PIN("860271")), ttl: .seconds(900))
let resumed = try keystore.signer(session: token)
precondition(resumed.address == signer.address)
try keystore.endSession(token)
print(signer.address)
print(message)
print(Data(signature).base64EncodedString())
