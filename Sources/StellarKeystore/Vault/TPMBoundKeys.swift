import StellarKeys
import StellarTransactions
/// The keys of a TPM-bound vault (format version 3), all from the one Argon2id output of the PIN:
///
/// - `authValue` = BLAKE2b-256(key: "stellar-keystore/v3/tpm-auth", Argon2id output): the TPM object's
///   authorisation value, which the TPM checks and counts;
/// - `pinKey` = BLAKE2b-256(key: "stellar-keystore/v3/pin-key", Argon2id output);
/// - the vault key = BLAKE2b-256(key: "stellar-keystore/v3/vault-key", pinKey ‖ tpmSecret).
///
/// The labels keep the two uses of the PIN apart: the TPM sees `authValue` (inside an encrypted session) but never
/// `pinKey`, and the file alone never yields the vault key, which needs the 32 random bytes only the TPM returns.
struct TPMBoundKeys {
    /// The random secret sealed in the TPM.
    static let secretBytes = 32

    let authValue: SecureBytes
    private let pinKey: SecureBytes

    private static let authLabel = Array("stellar-keystore/v3/tpm-auth".utf8)
    private static let pinLabel = Array("stellar-keystore/v3/pin-key".utf8)
    private static let vaultLabel = Array("stellar-keystore/v3/vault-key".utf8)

    init(pinDerived: SecureBytes) {
        authValue = Self.hash(Self.authLabel, pinDerived)
        pinKey = Self.hash(Self.pinLabel, pinDerived)
    }

    func vaultKey(tpmSecret: SecureBytes) -> SecureBytes {
        Self.hash(Self.vaultLabel, pinKey, tpmSecret)
    }

    private static func hash(_ label: [UInt8], _ parts: SecureBytes...) -> SecureBytes {
        SecureBytes(count: 32) { out in
            func feed(_ index: Int, _ buffers: [UnsafeRawBufferPointer]) {
                guard index < parts.count else {
                    Sodium.keyedHash(output: out, key: label, parts: buffers)
                    return
                }
                parts[index].withUnsafeBytes { feed(index + 1, buffers + [$0]) }
            }
            feed(0, [])
        }
    }
}
