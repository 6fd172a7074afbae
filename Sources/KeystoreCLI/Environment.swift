import Glibc

/// The environment variables keystore reads, looked up one by one: Foundation's `ProcessInfo.environment` builds
/// a dictionary of every variable first, a measurable share of a session `sign` (`perf record`). A run given an
/// environment of its own (`Console.Run.environment`, a test's) reads that instead of the process's.
enum Environment {
    /// Every variable the libraries are given: where the keystore, sessions, TPM, networks and stellar-cli live.
    static let names = [
        "HOME", "KEYSTORE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "STELLAR_CONFIG_HOME",
        "KEYSTORE_TPM_TCTI", "STELLAR_NETWORK", "STELLAR_NETWORK_PASSPHRASE",
    ]

    static subscript(name: String) -> String? {
        if let given = Console.current.environment { return given[name] }
        return getenv(name).map { String(cString: $0) }
    }

    /// Those variables that are set, as the libraries take them.
    static var values: [String: String] {
        var values: [String: String] = [:]
        for name in names { values[name] = self[name] }
        return values
    }
}
