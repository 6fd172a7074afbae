import ArgumentParser
import StellarKeystore

/// What `signup --tpm` and `recover --tpm` say before anything is asked: whether there is a TPM at all, and
/// that the vault will never open anywhere else.
enum TPMNotice {
    static func checkAndWarn(_ keystore: Keystore) throws {
        try keystore.checkTPMReadyToBind()
        Console.warn(Keystore.tpmBindingNotice)
    }
}

struct Bind: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bind an identity's vault to this machine's TPM 2.0, under the same PIN.",
        discussion: """
            After the PIN, the seed is encrypted again under a key that needs both the PIN and a secret sealed in \
            the TPM, atomically. From then on a copied vault file is useless, and every wrong PIN is counted by the \
            TPM's dictionary-attack lockout. The vault opens on this machine only: keep the recovery phrase or an \
            offline export. 'keystore unbind' converts it back. Sessions of the identity end.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    @Flag(help: "Bind to the TPM (the only kind of binding there is; required, so that the command says what it does).")
    var tpm = false

    func validate() throws {
        if !tpm { throw ValidationError("Say what to bind to: keystore bind --tpm.") }
    }

    func run() throws {
        let keystore = try identity.keystore.keystore()
        let name = try identity.identity()
        let vault = try keystore.bindToTPM(name: name) { try pin.read() }
        Console.warn(Keystore.tpmBindingNotice)
        try Report.print(name, vault, json: identity.json, done: "is now bound to this machine's TPM")
    }
}

struct Unbind: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a TPM-bound vault back to one that the PIN alone opens, to move it to another machine.",
        discussion: """
            After the PIN (which the TPM checks and counts), the seed is encrypted again under the PIN alone, \
            atomically. A copy of the file can then be attacked offline, one Argon2id guess at a time, as \
            SECURITY.md explains. Sessions of the identity end.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    func run() throws {
        let keystore = try identity.keystore.keystore()
        let name = try identity.identity()
        let vault = try keystore.unbindFromTPM(name: name) { try pin.read() }
        Console.warn("a copy of \(name.rawValue)'s vault can now be attacked offline, PIN by PIN; bind it again with 'keystore bind --tpm' on the new machine")
        try Report.print(name, vault, json: identity.json, done: "no longer needs a TPM")
    }
}

private enum Report {
    static func print(_ name: IdentityName, _ vault: Vault, json: Bool, done: String) throws {
        if json {
            try Console.printJSON(IdentityReport(name: name.rawValue, address: vault.publicKey.accountID, tpm: vault.isTPMBound))
        } else {
            Console.print("\(name.rawValue) (\(vault.publicKey.accountID)) \(done)")
        }
    }
}

struct TPMStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm-status",
        abstract: "Show the TPM's dictionary-attack state: wrong PINs counted, allowed, and when they are forgiven.")

    @OptionGroup var keystore: HomeOptions

    func run() throws {
        let keystore = try keystore.keystore()
        let state = try keystore.tpmStatus()
        if self.keystore.json {
            struct Output: Encodable {
                let tcti: String
                let failures, maximumFailures, triesLeft, intervalSeconds, recoverySeconds: Int
                let inLockout: Bool
            }
            try Console.printJSON(Output(
                tcti: keystore.vaults.tpm.tcti, failures: state.failures, maximumFailures: state.maximumFailures,
                triesLeft: state.triesLeft, intervalSeconds: state.intervalSeconds, recoverySeconds: state.recoverySeconds,
                inLockout: state.inLockout))
            return
        }
        Console.print("""
            TPM:               \(TerminalText.escaped(keystore.vaults.tpm.tcti, limit: nil))
            wrong PINs:        \(state.failures) counted, lockout after \(state.maximumFailures) (\(state.triesLeft) left)
            one forgiven per:  \(state.intervalSeconds == 0 ? "never (only the owner can reset the count)" : "\(state.intervalSeconds) s")
            lockout recovery:  \(state.recoverySeconds) s
            in lockout:        \(state.inLockout ? "yes" : "no")
            """)
    }
}
