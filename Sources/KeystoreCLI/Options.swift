import ArgumentParser
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeystoreTPM
import StellarKeys
import StellarTransactions

/// Which keystore, and how to print: `--home`, `--json` and `--tpm-tcti`, whichever options group or command
/// declares them. The help texts are `HomeOptions`', and the checks are here, so that each option reads and
/// behaves the same wherever it is declared.
///
/// Commands and groups declare these options themselves rather than nest a group: argument-parser reflects on
/// every group type of a command on every run (its metadata, its coding keys, its conformances, each looked up by
/// a scan of every conformance in the binary), and a nested group costs a session `sign`, the command a script
/// runs once per signature, as much as the signing.
protocol NamesKeystore {
    var home: String? { get }
    var json: Bool { get }
    var tpmTcti: String? { get }
}

extension NamesKeystore {
    func validateKeystore() throws {
        // An empty directory would put every path at the filesystem root.
        if home?.isEmpty == true { throw ValidationError("--home is empty; give a directory, or leave --home out for the default.") }
        if tpmTcti?.isEmpty == true { throw ValidationError("--tpm-tcti is empty; give a TCTI, or leave it out for the default.") }
    }

    /// The keystore these options name, its warnings going to stderr. `allowingOpenTPMLockout` is the person's
    /// `--allow-open-lockout`: a new TPM binding may then be made on a TPM whose guess limit does not hold.
    func keystore(allowingOpenTPMLockout: Bool = false) throws -> Keystore {
        let environment = Environment.values
        let warnings: @Sendable (String) -> Void = { Console.warn($0) }
        let tpm = tpmTcti.map { TPM(tcti: $0, allowingOpenLockout: allowingOpenTPMLockout) }
            ?? TPM(environment: environment, allowingOpenLockout: allowingOpenTPMLockout)
        guard let home else { return try Keystore(environment: environment, tpm: tpm, warnings: warnings) }
        return try Keystore(directory: home, environment: environment, tpm: tpm, warnings: warnings)
    }
}

/// One identity in a keystore: `NamesKeystore`'s options and `--name`.
protocol NamesIdentity: NamesKeystore {
    var name: String? { get }
}

extension NamesIdentity {
    func identity() throws -> IdentityName { try name.map { try IdentityName($0) } ?? .default }

    /// The identity a session must belong to, or nil when neither --name nor --home was given and the
    /// session itself says which identity it is.
    func identityIfGiven() throws -> IdentityName? {
        name == nil && home == nil ? nil : try identity()
    }
}

/// The keystore options, for a command that needs no identity.
struct HomeOptions: ParsableArguments, NamesKeystore {
    @Option(help: HomeOptions.homeHelp) var home: String?
    @Flag(help: HomeOptions.jsonHelp) var json = false
    @Option(help: HomeOptions.tpmTctiHelp) var tpmTcti: String?

    static let homeHelp = ArgumentHelp(
        "The keystore directory.",
        discussion: "Default: $KEYSTORE_HOME, else $XDG_DATA_HOME/keystore, else ~/.local/share/keystore.",
        valueName: "dir")
    static let jsonHelp: ArgumentHelp = "Print one JSON object."
    static let tpmTctiHelp = ArgumentHelp(
        "The TPM for TPM-bound vaults, as a tpm2-tss TCTI: e.g. device:/dev/tpmrm0, swtpm:host=127.0.0.1,port=2321.",
        discussion: "Default: $KEYSTORE_TPM_TCTI, else device:/dev/tpmrm0.",
        valueName: "tcti")

    func validate() throws { try validateKeystore() }
}

/// The identity options, for a command that names one.
struct IdentityOptions: ParsableArguments, NamesIdentity {
    @Option(help: HomeOptions.homeHelp) var home: String?
    @Flag(help: HomeOptions.jsonHelp) var json = false
    @Option(help: HomeOptions.tpmTctiHelp) var tpmTcti: String?
    @Option(help: IdentityOptions.nameHelp, completion: .custom(Completions.identities)) var name: String?

    static let nameHelp = ArgumentHelp(
        "The identity: 1-64 of a-z 0-9 . _ - (default: 'default', or a signing session's identity).",
        valueName: "name")

    func validate() throws { try validateKeystore() }
}

/// A PIN's line, read before it can be parsed (`GivesPIN.readFirst`).
struct PINLine {
    let line: SecureBytes

    func pin(for source: KeySource) throws -> PIN { source == .token ? try PIN(token: line) : try PIN(line) }
}

/// How a command gets the PIN of an existing vault: the terminal by default, or exactly one of three
/// script-friendly sources (`--pin-stdin`, `--pin-file`, `--pin-fd`), whichever options group or command declares
/// them (`PINOptions` has their help). There is deliberately no option that takes the PIN itself.
protocol GivesPIN: Sendable {
    var pinStdin: Bool { get }
    var pinFile: String? { get }
    var pinFd: Int32? { get }
}

extension GivesPIN {
    func validatePIN() throws {
        guard [pinStdin, pinFile != nil, pinFd != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("Use only one of \(PINOptions.alternatives).")
        }
    }

    /// Whether the PIN will be typed by a person at the terminal.
    var isInteractive: Bool { !pinStdin && pinFile == nil && pinFd == nil }

    /// Whether a PIN can be had without waiting on nobody: an option gives it, or there is a terminal to ask on.
    var isAvailable: Bool { !isInteractive || SecretInput.hasTerminal }

    /// The PIN `whose` names, from wherever the options say: the identity's, or a PKCS#11 token's own user PIN
    /// (its rules the token's: `PIN(token:)`). Not checked for strength (that is for new PINs only).
    func read(_ whose: KeyPIN = .vault, prompt: String? = nil) throws -> PIN {
        let line = try readLine(prompt: prompt ?? (whose == .token ? "Token PIN: " : "PIN: "))
        return whose == .token ? try PIN(token: line) : try PIN(line)
    }

    /// The PIN a key from `source` needs: a token's, or a vault's.
    func read(for source: KeySource) throws -> PIN { try read(source == .token ? .token : .vault) }

    /// With `--pin-stdin`, when standard input also holds what is signed (`inputIsStandardInput`), the PIN's line,
    /// read first, before the command can tell whose key signs: parsed once the key, and so the PIN's rules, are
    /// known. Nil otherwise.
    func readFirst(ifInputIsStandardInput inputIsStandardInput: Bool) throws -> PINLine? {
        pinStdin && inputIsStandardInput ? PINLine(line: try readLine(prompt: "PIN: ")) : nil
    }

    private func readLine(prompt: String) throws -> SecureBytes {
        if pinStdin { return try SecretInput.line(from: STDIN_FILENO, describing: "standard input") }
        if let pinFile { return try SecretInput.line(fromFile: pinFile) }
        if let pinFd { return try SecretInput.line(from: pinFd, describing: "descriptor \(pinFd)") }
        return try SecretInput.prompt(prompt, asking: "the PIN", instead: PINOptions.alternatives)
    }

    /// A PIN being chosen: from a script once, or typed twice at the terminal; then checked for strength.
    func readNew(prompt: String = "New PIN (6 digits): ") throws -> PIN {
        if !isInteractive {
            let pin = try read()
            try pin.checkStrength()
            return pin
        }
        return try PINOptions.promptNew(prompt, instead: PINOptions.alternatives)
    }

    /// The PIN a new key is made under, as `whose` names it: a token's own user PIN (read once, its rules the
    /// token's), or a new PIN for the identity.
    func readNew(_ whose: KeyPIN) throws -> PIN { whose == .token ? try read(.token) : try readNew() }
}

/// The PIN options, for a command that takes an existing PIN or a new one.
struct PINOptions: ParsableArguments, GivesPIN {
    @Flag(help: PINOptions.stdinHelp) var pinStdin = false
    @Option(help: PINOptions.fileHelp) var pinFile: String?
    @Option(help: PINOptions.fdHelp) var pinFd: Int32?

    static let stdinHelp: ArgumentHelp = "Read the PIN from the first line of standard input."
    static let fileHelp = ArgumentHelp("Read the PIN from the first line of a file.", valueName: "path")
    static let fdHelp = ArgumentHelp("Read the PIN from the first line of an open file descriptor.", valueName: "n")

    static let alternatives = "--pin-stdin, --pin-file or --pin-fd"

    func validate() throws { try validatePIN() }

    /// A person gets this many tries at choosing an acceptable new PIN; a script gets one.
    static let newPINTries = 3

    /// Asks twice, because a typo in an unechoed PIN would otherwise lock the key away for good. A weak,
    /// malformed or mismatched PIN is explained on the terminal and asked again, so that nothing typed before
    /// (a seed, a phrase) has to be typed again.
    static func promptNew(_ prompt: String, instead alternatives: String) throws -> PIN {
        var attempt = 1
        while true {
            do {
                let pin = try PIN(SecretInput.prompt(prompt, asking: "the new PIN", instead: alternatives))
                try pin.checkStrength()
                let confirmation = try SecretInput.prompt("Repeat the PIN: ", asking: "the new PIN", instead: alternatives)
                guard let confirmed = try? PIN(confirmation), pin.isEqual(to: confirmed) else { throw PINError.mismatch }
                return pin
            } catch let error as PINError where attempt < newPINTries {
                SecretInput.tell(error == .mismatch ? "The two PINs did not match; try again." : error.message)
                attempt += 1
            }
        }
    }
}

extension KDFParameters.Level: ExpressibleByArgument {}
extension KDFChoice: ExpressibleByArgument {}

/// `--allow-open-lockout`, for the commands that make a new TPM binding.
struct OpenLockoutOption: ParsableArguments {
    @Flag(help: ArgumentHelp(
        "With --tpm, bind even though the TPM's lockout authorization is not set.",
        discussion: "Anyone who can open the TPM can then reset its wrong-PIN counter: the guess limit does not hold. Prefer 'keystore tpm-protect'."))
    var allowOpenLockout = false

    func validate(binding: Bool) throws {
        if allowOpenLockout && !binding { throw ValidationError("--allow-open-lockout goes with --tpm.") }
    }
}

enum KDFOptions {
    /// After a vault was written with `--kdf auto`: which level that was, and why.
    static func sayWhatAutoChose(_ choice: KDFChoice, _ keystore: Keystore) {
        guard choice == .auto, let calibration = keystore.calibration() else { return }
        let seconds = calibration.secondsPerUnlock[calibration.level.rawValue].map { " (\(($0 * 100).rounded() / 100) s per unlock)" } ?? ""
        let when = calibration.measuredAt.map { " as measured on \($0.formatted(.iso8601.year().month().day()))" } ?? ""
        Console.note("--kdf auto chose \(calibration.level.rawValue)\(seconds), the strongest this machine unlocks within 1 s\(when) (kept in \(keystore.directory)/.kdf-calibration)")
    }
}

/// `--context-rules 0,2` of `sign-auth` and `web-auth`: a smart account's rule ids, in order.
enum ContextRuleIDs {
    static func parse(_ text: String) throws -> [UInt32] {
        let ids = text.split(separator: ",", omittingEmptySubsequences: false).map { UInt32(String($0.filter { $0 != " " })) }
        guard !ids.isEmpty, ids.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--context-rules takes rule ids (0 to 4294967295) separated by commas, such as 0 or 0,2.")
        }
        return ids.compactMap { $0 }
    }
}
