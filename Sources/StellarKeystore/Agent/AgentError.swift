import Glibc
import StellarKeys
import StellarText

/// What went wrong between a client and a signing agent, on either side.
public enum AgentError: KeystoreError, Equatable {
    case socketPathTooLong(String)
    case notASocket(String)
    /// Another agent answers on this socket already.
    case socketInUse(String)
    case system(String, Int32)
    /// Nothing listens at the socket (no agent, or one that is gone).
    case notRunning(String)
    /// The agent holds no key for this address (never added, expired, dropped, or locked).
    case keyNotHeld(String)
    case noKeys
    case severalKeys(Int)
    /// The request was not approved (SEP-43 code −4): the person at the agent said no, or the question was
    /// withdrawn before anyone said yes.
    case rejected(Rejection)
    /// The agent answered with an error.
    case refused(code: Int, message: String)
    /// The agent's answer is not one this protocol allows.
    case badAnswer(String)
    /// The agent closed the connection, or did not answer in time.
    case connectionLost(String)
    /// A signature from the agent that does not verify under the key asked for: never used.
    case wrongSignature(String)
    /// A key handed to the agent did not arrive as sent.
    case seedRefused(String)
    /// A socket this client will not talk to, and why; nothing was sent to it.
    case untrustedSocket(String, SocketDistrust)
    /// The directory an agent is to listen in is not this user's alone (its clients would refuse it), and why;
    /// the agent did not start.
    case socketDirectoryRefused(String, SocketDistrust)
    /// The agent holds no key for this identity (never added, expired, dropped, locked, or the vault's key
    /// replaced since): its name, and the address its vault holds.
    case identityNotHeld(name: String, address: String)
    /// A relative socket path, which names a different socket in every directory.
    case socketPathNotAbsolute(String)
    /// The agent was asked to stop and still answers.
    case didNotStop(String)
    /// The listening socket the service manager passed (`InheritedSocket`) is not one the agent serves, and why;
    /// no connection was accepted on it.
    case inheritedSocketRefused(String)
    /// The agent's policy does not allow the request: the reason names the rule and the limit.
    case refusedByPolicy(String)

    /// Why a request that needed a person's yes did not get one.
    public enum Rejection: Sendable, Equatable {
        /// The answer was not yes.
        case declined
        /// Nobody answered within the agent's time for a question.
        case timedOut
        /// The key was dropped while the question was pending (lock, removal, its TTL or idle limit).
        case keyDropped
        /// The client closed its connection while the question was pending; the agent's own record only, since
        /// no answer can reach it.
        case clientLeft

        /// `data.reason` on the wire (docs/AGENT.md).
        var wireReason: String {
            switch self {
            case .declined: "declined"
            case .timedOut: "timeout"
            case .keyDropped, .clientLeft: "cancelled"
            }
        }

        init(wireReason: String?) {
            switch wireReason {
            case "timeout": self = .timedOut
            case "cancelled": self = .keyDropped
            default: self = .declined
            }
        }
    }

    /// Why a client refuses a socket: anything but a server of its own user, in a directory only that user can
    /// change, could be another user's server waiting for a key.
    public enum SocketDistrust: Sendable, Equatable {
        case directoryNotPrivate(owner: UInt32, mode: UInt32)
        case directoryIsSymlink
        case directoryNotADirectory
        case socketNotOwned(owner: UInt32)
        case serverNotOwned(uid: UInt32)
        case serverUnknown

        /// Why a directory is refused, said of the directory itself.
        var directoryReason: String? {
            switch self {
            case .directoryNotPrivate(let owner, let mode):
                "is not private to you (owner uid \(owner), mode \(String(mode, radix: 8).leftPadded(to: 4)))"
            case .directoryIsSymlink: "is a symbolic link"
            case .directoryNotADirectory: "is not a directory"
            case .socketNotOwned, .serverNotOwned, .serverUnknown: nil
            }
        }

        package var reason: String {
            switch self {
            case .directoryNotPrivate(let owner, let mode):
                "its directory is not private to you (owner uid \(owner), mode \(String(mode, radix: 8).leftPadded(to: 4)))"
            case .directoryIsSymlink: "its directory is a symbolic link"
            case .directoryNotADirectory: "its directory is not a directory"
            case .socketNotOwned(let owner): "it belongs to uid \(owner)"
            case .serverNotOwned(let uid): "the server runs as uid \(uid)"
            case .serverUnknown: "the system cannot say who the server is"
            }
        }
    }

    public var message: String {
        switch self {
        case .socketPathTooLong(let path):
            "The agent socket path \(TerminalText.escaped(path, limit: nil)) is empty or longer than \(UnixSocket.longestPath) bytes."
        case .notASocket(let path):
            "\(TerminalText.escaped(path, limit: nil)) exists and is not a socket; nothing was changed."
        case .socketInUse(let path):
            "An agent is already running at \(TerminalText.escaped(path, limit: nil))."
        case .system(let operation, let code):
            "The agent could not \(TerminalText.escaped(operation)): \(String(cString: strerror(code)))."
        case .notRunning(let path):
            "No agent is running at \(TerminalText.escaped(path, limit: nil))."
        case .keyNotHeld(let address):
            "The agent holds no key for \(TerminalText.escaped(address, limit: 60))."
        case .noKeys:
            "The agent holds no keys."
        case .severalKeys(let count):
            "The agent holds \(count) keys; say which address signs."
        case .rejected(.declined):
            "The request was declined at the agent."
        case .rejected(.timedOut):
            "Nobody answered the agent's question in time; nothing was signed."
        case .rejected(.keyDropped):
            "The agent withdrew its question: the key was dropped before anyone answered; nothing was signed."
        case .rejected(.clientLeft):
            "The client left before the agent's question was answered; nothing was signed."
        case .refused(_, let message):
            "The agent refused: \(TerminalText.escaped(message, limit: 300))"
        case .badAnswer(let reason):
            "The agent's answer is not valid: \(reason)."
        case .connectionLost(let reason):
            "The agent \(reason)."
        case .wrongSignature(let address):
            "The agent's signature does not verify for \(address); it was not used."
        case .seedRefused(let reason):
            "The key was not added: \(reason)."
        case .untrustedSocket(let path, let distrust):
            "Refusing the agent socket \(TerminalText.escaped(path, limit: nil)): \(distrust.reason). Nothing was sent."
        case .socketDirectoryRefused(let directory, let distrust):
            "The agent's socket directory \(TerminalText.escaped(directory, limit: nil)) \(distrust.directoryReason ?? distrust.reason)."
        case .identityNotHeld(let name, let address):
            "The agent holds no key for \(TerminalText.escaped(name)) (\(TerminalText.escaped(address, limit: 60)))."
        case .socketPathNotAbsolute(let path):
            "The agent socket path \(TerminalText.escaped(path, limit: nil)) is not absolute."
        case .didNotStop(let path):
            "The agent at \(TerminalText.escaped(path, limit: nil)) did not stop."
        case .inheritedSocketRefused(let reason):
            "Refusing the socket passed by the service manager: \(reason)."
        case .refusedByPolicy(let reason):
            Self.policyRefusalPrefix + TerminalText.escaped(reason, limit: 300) + "."
        }
    }

    /// How a policy's refusal begins, which a client takes off the message it gets to keep the reason alone.
    package static let policyRefusalPrefix = "The agent's policy refused it: "

    /// The SEP-43 code an agent answers with.
    package var code: AgentProtocol.ErrorCode {
        switch self {
        case .keyNotHeld, .identityNotHeld, .noKeys, .severalKeys, .refused, .badAnswer, .seedRefused: .invalidRequest
        case .rejected, .refusedByPolicy: .rejected
        default: .internal
        }
    }

    /// The `data.reason` a client branches on.
    package var reason: String? {
        switch self {
        case .keyNotHeld, .identityNotHeld, .noKeys: "no-key"
        case .rejected(let why): why.wireReason
        case .refusedByPolicy: "policy"
        default: nil
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
