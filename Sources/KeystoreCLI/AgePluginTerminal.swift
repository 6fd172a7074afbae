import Glibc
import StellarKeystore
import StellarKeys

/// An age plugin's requests (a YubiKey's PIN, "touch your YubiKey") on the controlling terminal, as keystore's own
/// prompts are: a value asked with echo off, never on standard input or output, which may be a script's. With no
/// terminal each is answered `fail`, and the plugin decides (age does the same); its error then says what it asked.
struct AgePluginTerminal: AgePluginPresenter {
    /// The plugins of this run: looked for with the run's environment, their requests on its terminal.
    static var host: AgePluginHost {
        AgePluginHost(presenter: AgePluginTerminal(), environment: Console.current.environment)
    }

    func show(_ message: String, plugin: String) -> Bool {
        let tty = SecretInput.openTerminal(O_WRONLY)
        guard tty >= 0 else { return false }
        defer { close(tty) }
        Console.write(Array("keystore: age-plugin-\(plugin): \(message)\n".utf8), to: tty)
        return true
    }

    func confirm(_ message: String, yes: String, no: String?, plugin: String) -> Bool? {
        let choices = no.map { "1 for \(yes), 2 for \($0)" } ?? "Enter for \(yes)"
        guard let answer = try? SecretInput.prompt("age-plugin-\(plugin): \(message) (\(choices)): ", asking: "a confirmation", instead: "")
        else { return nil }
        guard no != nil else { return true }
        return answer.withUnsafeBytes { typed in
            typed.elementsEqual(Array("1".utf8)) ? true : typed.elementsEqual(Array("2".utf8)) ? false : nil
        }
    }

    func ask(_ message: String, secret: Bool, plugin: String) -> SecureBytes? {
        try? SecretInput.prompt("age-plugin-\(plugin): \(message) ", asking: secret ? "a secret" : "a value", instead: "")
    }

    func waiting(plugin: String) {
        guard SecretInput.hasTerminal else { return }
        SecretInput.tell("waiting for age-plugin-\(plugin) (a hardware key may want a touch)")
    }
}
