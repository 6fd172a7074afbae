import ArgumentParser
import FoundationEssentials
import StellarKeystore

extension SessionDuration {
    /// `--ttl`'s value (and the agent's durations), or what is wrong with it, which argument-parser adds to its own line.
    static func parse(_ argument: String) throws -> SessionDuration {
        do {
            return try SessionDuration(parsing: argument)
        } catch {
            throw ValidationError(error.reason)
        }
    }
}

struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        _superCommandName: KeystoreCommand.name,
        abstract: "End the signed-in session in KEYSTORE_SESSION (or, with --all, every session of the identity).",
        discussion: "The session file is deleted, so the token is useless from then on, wherever copies of it are.")

    @OptionGroup var identity: IdentityOptions

    @Flag(help: "End every session of the identity, not only the one in KEYSTORE_SESSION.")
    var all = false

    func run() throws {
        let keystore = try identity.keystore()
        var ended = 0
        if all {
            ended = try keystore.endSessions(of: identity.identity())
        } else {
            guard let text = SigningKeyOptions.sessionToken else {
                throw SessionError.none(name: try identity.identity().rawValue)
            }
            // Whatever happens to this token, the variable goes: `eval "$(keystore logout)"` must not leave a
            // dead or garbage token set for the next command to trip over.
            if !identity.json { Console.print("unset \(SigningKeyOptions.sessionVariable)") }
            ended = try keystore.endSession(SessionToken(text)) ? 1 : 0
        }
        if identity.json {
            struct Output: Encodable { let ended: Int }
            try Console.printJSON(Output(ended: ended))
        } else {
            if all { Console.print("unset \(SigningKeyOptions.sessionVariable)") }
            Console.note(ended == 1 ? "session ended" : "\(ended) sessions ended")
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        _superCommandName: KeystoreCommand.name,
        abstract: "Tell whether a signed-in session is open and when it expires; exit 9 when none is.",
        discussion: """
            With KEYSTORE_SESSION set, checks that token (fully: it must open its session). Otherwise lists the \
            identity's open sessions. Says too when an identity shown is in no backup made since its key last \
            changed (see keystore backup; --json: inBackup).
            """)

    @OptionGroup var identity: IdentityOptions

    func run() throws {
        let token = try SigningKeyOptions.sessionToken.map(SessionToken.init)
        let keystore = try identity.keystore()
        let open = try keystore.openSessions(token: token, name: token == nil ? identity.identity() : identity.identityIfGiven())
        let now = Date()
        // Whether a backup holds each key shown, for the identities of this keystore (a session's may be another's).
        let inBackup = open.map { session in
            session.keystore == keystore.directory ? (try? IdentityName(session.name)).flatMap(keystore.isInBackup) : nil
        }
        if identity.json {
            struct Output: Encodable { let name, address, expiresAt: String; let secondsLeft: Int; let inBackup: Bool? }
            struct Listing: Encodable { let sessions: [Output] }
            try Console.printJSON(Listing(sessions: zip(open, inBackup).map {
                Output(name: $0.name, address: $0.publicKey, expiresAt: $0.expiresAt.formatted(.iso8601),
                       secondsLeft: Int($0.expiresAt.timeIntervalSince(now)), inBackup: $1)
            }))
        } else {
            for session in open {
                let left = SessionDuration(seconds: max(1, Int(session.expiresAt.timeIntervalSince(now))))
                Console.print("\(session.name) \(session.publicKey) signed in until \(session.expiresAt.formatted(.iso8601)) (\(left) left)")
            }
            List.noteInNoBackup(Array(Set(zip(open, inBackup).filter { $1 == false }.map(\.0.name))).sorted())
        }
    }
}
