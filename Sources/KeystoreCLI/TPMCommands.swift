import ArgumentParser
import Glibc
import StellarKeystore
import StellarKeystoreTPM
import StellarKeys
import StellarTransactions
import StellarText

/// What `signup --tpm` and `recover --tpm` say before anything is asked: whether there is a TPM at all, and
/// that the vault will never open anywhere else.
enum TPMNotice {
    static func checkAndWarn(_ keystore: Keystore, keyFromPhrase: Bool) throws {
        let state = try keystore.checkTPMReadyToBind()
        warnIfOpen(state)
        Console.warn(bindingNotice(keyFromPhrase: keyFromPhrase))
    }

    /// The library's notice, with the options that act on it: a key made from a phrase (`signup --mnemonic`,
    /// `recover`) is told to keep it, not to make one.
    static func bindingNotice(keyFromPhrase: Bool = false) -> String {
        Keystore.tpmBindingNotice + (keyFromPhrase
            ? " Keep its recovery phrase offline; --kdf interactive is enough."
            : " Make the key from a phrase (signup --mnemonic) to keep one; --kdf interactive is enough.")
    }

    /// Said whenever a binding is made on a TPM whose lockout authorization is empty (`--allow-open-lockout`).
    static func warnIfOpen(_ state: TPMDictionaryAttackState) {
        guard !state.lockoutAuthSet else { return }
        Console.warn("the TPM's lockout authorization is not set: anyone who can open the TPM can reset its wrong-PIN counter, so it does not limit PIN guesses; run 'keystore tpm-protect' to set it")
    }
}

struct Bind: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bind",
        _superCommandName: KeystoreCommand.name,
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

    @OptionGroup var openLockout: OpenLockoutOption

    func validate() throws {
        if !tpm { throw ValidationError("Say what to bind to: keystore bind --tpm.") }
    }

    func run() throws {
        let keystore = try identity.keystore(allowingOpenTPMLockout: openLockout.allowOpenLockout)
        let name = try identity.identity()
        let vault = try keystore.bindToTPM(name: name) { try pin.read() }
        if openLockout.allowOpenLockout { TPMNotice.warnIfOpen(try keystore.tpmStatus()) }
        Console.warn(TPMNotice.bindingNotice())
        try Report.print(name, vault, json: identity.json, done: "is now bound to this machine's TPM")
    }
}

struct Unbind: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unbind",
        _superCommandName: KeystoreCommand.name,
        abstract: "Convert a TPM-bound vault back to one that the PIN alone opens, to move it to another machine.",
        discussion: """
            After the PIN (which the TPM checks and counts), the seed is encrypted again under the PIN alone, \
            atomically. A copy of the file can then be attacked offline, one Argon2id guess at a time, as \
            SECURITY.md explains. Sessions of the identity end.
            """)

    @OptionGroup var identity: IdentityOptions
    @OptionGroup var pin: PINOptions

    func run() throws {
        let keystore = try identity.keystore()
        let name = try identity.identity()
        let vault = try keystore.unbindFromTPM(name: name) { try pin.read() }
        Console.warn("a copy of \(name.rawValue)'s vault can now be attacked offline, PIN by PIN; bind it again with 'keystore bind --tpm' on the new machine")
        try Report.print(name, vault, json: identity.json, done: "no longer needs a TPM")
    }
}

private enum Report {
    static func print(_ name: IdentityName, _ vault: Vault, json: Bool, done: String) throws {
        try Console.printAnswer(json: json, IdentityReport(name: name.rawValue, address: vault.publicKey.accountID, tpm: vault.isTPMBound),
                                else: "\(name.rawValue) (\(vault.publicKey.accountID)) \(done)")
    }
}

struct TPMStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm-status",
        _superCommandName: KeystoreCommand.name,
        abstract: "Show the TPM's dictionary-attack state: wrong PINs counted, allowed, and when they are forgiven.")

    @OptionGroup var keystore: HomeOptions

    static let openLockoutMeaning = "anyone who can open the TPM can reset the wrong-PIN counter, so it does not limit PIN guesses (run 'keystore tpm-protect')"

    func run() throws {
        let keystore = try keystore.keystore()
        let state = try keystore.tpmStatus()
        struct Output: Encodable {
            let tcti: String
            let failures, maximumFailures, triesLeft, intervalSeconds, recoverySeconds: Int
            let inLockout, lockoutAuthSet: Bool
        }
        try Console.printAnswer(json: self.keystore.json, Output(
            tcti: keystore.vaults.tpm?.name ?? "", failures: state.failures, maximumFailures: state.maximumFailures,
            triesLeft: state.triesLeft, intervalSeconds: state.intervalSeconds, recoverySeconds: state.recoverySeconds,
            inLockout: state.inLockout, lockoutAuthSet: state.lockoutAuthSet), else: """
            TPM:               \(TerminalText.escaped(keystore.vaults.tpm?.name ?? "", limit: nil))
            wrong PINs:        \(state.failures) counted, lockout after \(state.maximumFailures) (\(state.triesLeft) left)
            one forgiven per:  \(state.intervalSeconds == 0 ? "never (only the lockout authorization can reset the count)" : "\(state.intervalSeconds) s")
            lockout recovery:  \(state.recoverySeconds) s
            in lockout:        \(state.inLockout ? "yes" : "no")
            lockout auth set:  \(state.lockoutAuthSet ? "yes" : "no: " + Self.openLockoutMeaning)
            """)
    }
}

struct TPMProtect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm-protect",
        _superCommandName: KeystoreCommand.name,
        abstract: "Give the TPM a random lockout authorization, so that its wrong-PIN counter cannot be reset without it.",
        discussion: """
            On most Linux machines the TPM's lockout authorization is empty, so any program that can open the TPM can \
            reset its wrong-PIN counter and guess PINs without limit. This sets it to 32 random bytes and prints them \
            once as a lockout code to keep offline; 'keystore tpm-reset-lockout' takes it back. It changes the TPM for \
            the whole machine: other tools that use the lockout hierarchy then need it too. Refuses a pipe or file \
            unless --print-code; changes nothing when set already.
            """)

    @OptionGroup var keystore: HomeOptions

    @Flag(help: "Print the lockout code even when standard output is not a terminal.")
    var printCode = false

    func run() throws {
        let keystore = try keystore.keystore()
        if try keystore.tpmStatus().lockoutAuthSet { return alreadySet() }
        try CLIError.refuseNonTerminal(for: "the TPM's lockout code", unless: printCode, instead: "run in a terminal, or add --print-code. Nothing was changed.")
        let changed = try keystore.protectTPMLockout { code in
            let written = Console.printSecret(code.formatted(), opening: self.keystore.json ? #"{"changed":true,"lockoutCode":""# : "",
                                              closing: self.keystore.json ? "\"}\n" : "\n") && Console.flushStandardOutput()
            if !written { throw CLIError.codeNotDelivered(reason: Console.outputError?.reason ?? "unknown error") }
            // Said once the code is out, so that a failure is one line, like every other.
            if !self.keystore.json {
                Console.warn("that is the TPM's lockout code, shown this once and stored nowhere: write it down and keep it offline; it resets the wrong-PIN counter ('keystore tpm-reset-lockout'), and without it only clearing the TPM does, which destroys every key bound to it")
            }
        }
        if !changed { alreadySet() }
    }

    private func alreadySet() {
        if keystore.json {
            Console.write(Array(#"{"changed":false,"lockoutAuthSet":true}"#.utf8) + [0x0A], to: STDOUT_FILENO)
        } else {
            Console.note("the TPM's lockout authorization is set already; nothing was changed")
        }
    }
}

struct TPMResetLockout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tpm-reset-lockout",
        _superCommandName: KeystoreCommand.name,
        abstract: "End the TPM's dictionary-attack lockout and reset its wrong-PIN counter, with the lockout code.",
        discussion: """
            The code is the one 'keystore tpm-protect' printed. It is asked on the terminal (echo off), or read \
            from the first line of standard input with --code-stdin; never from the command line. A typo is caught \
            before the TPM sees the code. A wrong code is counted by the TPM against the lockout hierarchy itself, \
            which then refuses every code for its lockout-recovery time ('keystore tpm-status'; a time of 0 means \
            until the next reboot). Where the lockout authorization is not set, no code is needed.
            """)

    @OptionGroup var keystore: HomeOptions

    @Flag(help: "Read the lockout code from the first line of standard input.")
    var codeStdin = false

    func run() throws {
        let keystore = try keystore.keystore()
        let reset = try keystore.resetTPMLockout {
            let line = codeStdin
                ? try SecretInput.line(from: STDIN_FILENO, describing: "standard input")
                : try SecretInput.prompt("Lockout code: ", asking: "the lockout code", instead: "--code-stdin")
            return try LockoutCode(typed: line)
        }
        if self.keystore.json {
            Console.write(Array(#"{"reset":true,"codeNeeded":\#(reset == .withCode)}"#.utf8) + [0x0A], to: STDOUT_FILENO)
        } else {
            Console.note(reset == .withCode
                ? "the TPM's wrong-PIN counter is reset and its lockout ended"
                : "the TPM's wrong-PIN counter is reset and its lockout ended; no code was needed, as for anyone: \(TPMStatus.openLockoutMeaning)")
        }
    }
}
