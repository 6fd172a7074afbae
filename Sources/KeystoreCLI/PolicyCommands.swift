import ArgumentParser
import StellarKeystore
import StellarKeystoreAgent
import StellarKeys
import StellarText
import StellarTransactions

/// `keystore policy …`: what an agent's policy (docs/AGENT.md, Policies) would do, without a key or an agent.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        _superCommandName: KeystoreCommand.name,
        abstract: "Check what an agent policy would sign, refuse or ask about.",
        subcommands: [PolicyCheck.self])
}

struct PolicyCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        _superCommandName: "\(KeystoreCommand.name) policy",
        abstract: "Say what an agent with this policy would decide for each request, and why, without a key.",
        discussion: """
            Each request is decided on its own, against what the rules have spent so far in the keystore's windows \
            (as the agent keeps them), and nothing is recorded. Exit 0 when every request would be signed; \
            16 (policy-refused) when one would be refused or asked about.
            """)

    @Option(help: ArgumentHelp("The policy file.", valueName: "path"))
    var policy: String

    @Option(help: ArgumentHelp("The signing key's address G….", valueName: "address"))
    var identity: String

    @Option(help: ArgumentHelp("The identity's name, for rules that name identities.", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("The caller's executable, as /proc/PID/exe names it.", valueName: "path"))
    var caller: String?

    @Option(help: ArgumentHelp("A parent of the caller, the nearest first (repeat for each).", valueName: "path"))
    var parent: [String] = []

    @Option(help: ArgumentHelp("The caller's uid.", valueName: "uid"))
    var uid: UInt32?

    @Option(help: ArgumentHelp("public, testnet, futurenet, or a network passphrase.", valueName: "network"))
    var network: String

    @Flag(help: "The requests are authorization preimages (signAuthEntry), not transaction envelopes.")
    var authEntry = false

    @Option(help: HomeOptions.homeHelp)
    var home: String?

    @Argument(help: ArgumentHelp("Transaction envelopes (or preimages) in base64.", valueName: "envelope"))
    var requests: [String]

    func run() throws {
        let check = try StellarKeystoreAgent.PolicyCheck(
            policy: policy, keystoreDirectory: try home ?? VaultStore.defaultDirectory(environment: Environment.values), identity: identity,
            name: name, caller: .init(executable: caller ?? "", parents: parent, uid: uid), network: network, authEntries: authEntry)
        var allSigned = true
        for text in requests {
            switch try check.decision(for: text) {
            case .allow(let spending): Console.print("signed (rule \(TerminalText.escaped(spending.rule)))")
            case .ask(let reason, _):
                allSigned = false
                Console.print("asked: \(TerminalText.escaped(reason, limit: nil))")
            case .refuse(let reason):
                allSigned = false
                Console.print("refused: \(TerminalText.escaped(reason, limit: nil))")
            }
        }
        if !allSigned { throw CLIError.policyWouldNotSignEvery }
    }
}
