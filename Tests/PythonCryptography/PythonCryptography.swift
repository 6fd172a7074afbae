import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An independent check of NIST P-256 ECDSA signatures: pyca/cryptography (OpenSSL underneath), which shares no
/// code with a TPM or with keystore. Its Python is `$KEYSTORE_CRYPTOGRAPHY_PYTHON`, else the `cryptography`
/// virtualenv (`PinnedVirtualenv`), with cryptography 50.0.2 and stellar-sdk 16.1.1.
public enum PythonCryptography {
    public static let version = "50.0.2"
    public static let stellarSDKVersion = "16.1.1"

    /// Runs a script of `fixtures/` (e.g. make-webauthn.py's `verify`) with that Python: its status and output.
    public static func runScript(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try run(try path(), [script] + arguments, timeout: 120)
    }
    public static let variable = "KEYSTORE_CRYPTOGRAPHY_PYTHON"

    /// Whether `r` and `s` (big-endian) are an ECDSA signature over the SHA-256 `digest`, as signed (not hashed
    /// again: `Prehashed`), by the P-256 `publicKey` (SEC 1 uncompressed or compressed). Throws when the check
    /// could not be made at all, a point not on the curve among them.
    public static func isValidP256Signature(r: [UInt8], s: [UInt8], digest: [UInt8], publicKey: [UInt8]) throws -> Bool {
        let script = """
            import sys
            from cryptography.exceptions import InvalidSignature
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.asymmetric import ec, utils
            point, digest, r, s = (bytes.fromhex(a) for a in sys.argv[1:5])
            key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
            signature = utils.encode_dss_signature(int.from_bytes(r, "big"), int.from_bytes(s, "big"))
            try:
                key.verify(signature, digest, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
                print("valid")
            except InvalidSignature:
                print("invalid")
            """
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let result = try run(try path(), ["-c", script, hex(publicKey), hex(digest), hex(r), hex(s)], timeout: 120)
        switch (result.status, result.output.trimmingCharacters(in: .whitespacesAndNewlines)) {
        case (0, "valid"): return true
        case (0, "invalid"): return false
        default: throw PinnedVirtualenv.Unavailable(description: "cryptography could not check the signature (exit \(result.status)): \(result.output)")
        }
    }

    /// The Python's path, or why there is none.
    public static func path() throws -> String { try found.get() }

    private static let found = PinnedVirtualenv(
        name: "cryptography", variable: variable,
        // stellar-sdk too: fixtures/make-webauthn.py, the reference of OpenZeppelin's WebAuthn verifier, builds its
        // ScVals with it.
        packages: [("cryptography", "cryptography", version), ("stellar-sdk", "stellar_sdk", stellarSDKVersion)]).find()

    private static func run(_ program: String, _ arguments: [String], timeout: Int) throws -> (status: Int32, output: String) {
        try PinnedVirtualenv.run(program, arguments, timeout: timeout)
    }
}
