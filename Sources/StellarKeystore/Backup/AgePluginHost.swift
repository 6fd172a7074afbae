import StellarKeys

/// How an age plugin's requests reach a person while it wraps or unwraps a file key (age-plugin.md, phase 2:
/// `msg`, `confirm`, `request-public`, `request-secret`). It shows and asks, and decides nothing: an answer of nil
/// (or false) means the request could not be put to anyone, which the plugin is told (`fail`) and decides on.
/// Every text from a plugin arrives escaped for a terminal and cut to a few hundred characters; `plugin` is the
/// plugin's name (`yubikey` for `age-plugin-yubikey`), which is letters, digits and `-_.+` only.
package protocol AgePluginPresenter: Sendable {
    /// Shows `message` (say, "touch your YubiKey"); false when there is nowhere to show it.
    func show(_ message: String, plugin: String) -> Bool
    /// Asks to choose `yes` or `no` (nil: `yes` is the only choice offered); nil when nobody can be asked.
    func confirm(_ message: String, yes: String, no: String?, plugin: String) -> Bool?
    /// Asks for a value: a secret (a PIN), not to be shown as it is typed, when `secret`; nil when nobody can be asked.
    func ask(_ message: String, secret: Bool, plugin: String) -> SecureBytes?
    /// The plugin has said nothing for a few seconds: it may be waiting for a touch, or for a token to be plugged in.
    func waiting(plugin: String)
}

/// No person to ask: every request of a plugin is answered `fail`, as age answers when it has no terminal.
package struct NobodyToAsk: AgePluginPresenter {
    package init() {}
    package func show(_ message: String, plugin: String) -> Bool { false }
    package func confirm(_ message: String, yes: String, no: String?, plugin: String) -> Bool? { nil }
    package func ask(_ message: String, secret: Bool, plugin: String) -> SecureBytes? { nil }
    package func waiting(plugin: String) {}
}

/// How this process runs age plugins (age-plugin.md): `age-plugin-NAME`, looked for in the absolute directories of
/// `PATH` (never the working directory) as age does, run in the temporary directory with its standard input and
/// output for the protocol, its environment without any `KEYSTORE_` variable (a session token is a secret), and no
/// secret in its arguments. It is stopped (SIGKILL) when it says nothing for `timeout`: time spent waiting for
/// the person to answer one of its requests does not count.
package struct AgePluginHost: Sendable {
    /// Long enough for a person to find and touch a hardware key; a plugin that is still silent then is stuck.
    package static let defaultTimeout: Duration = .seconds(120)

    package var presenter: any AgePluginPresenter
    /// The environment the plugin is looked for with (`PATH`) and given; nil: this process's own.
    package var environment: [String: String]?
    package var timeout: Duration

    package init(presenter: any AgePluginPresenter = NobodyToAsk(), environment: [String: String]? = nil,
                timeout: Duration = AgePluginHost.defaultTimeout) {
        self.presenter = presenter
        self.environment = environment
        self.timeout = timeout
    }
}
