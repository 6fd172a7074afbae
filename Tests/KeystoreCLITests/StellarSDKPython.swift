import PythonCryptography

/// The Python with stellar-sdk that the SEP-10 and SEP-45 interop tests run their servers on
/// (Tests/Interop/sep10-server.py, sep45-server.py): `$KEYSTORE_STELLAR_SDK_PYTHON`, else the `stellar-sdk`
/// virtualenv (`PinnedVirtualenv`) with stellar-sdk 16.1.1.
enum StellarSDKPython {
    static let version = "16.1.1"
    static let variable = "KEYSTORE_STELLAR_SDK_PYTHON"

    /// The Python's path, or why there is none.
    static func path() throws -> String { try found.get() }

    private static let found = PinnedVirtualenv(name: "stellar-sdk", variable: variable,
                                                packages: [("stellar-sdk", "stellar_sdk", version)]).find()
}
