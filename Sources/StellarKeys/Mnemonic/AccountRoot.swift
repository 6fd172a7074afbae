/// SEP-5 key derivation: SLIP-10 for Ed25519 along `m/44'/148'/x'`. The root is the node at `m/44'/148'`; account
/// `x` is its hardened child `x'`. Holding the root (64 bytes: key and chain code) is enough to derive every
/// account, which is what a mnemonic vault stores.
package struct AccountRoot: Sendable {
    /// SLIP-10 node: 32-byte key followed by 32-byte chain code.
    package let node: SecureBytes

    static let hardened: UInt32 = 0x8000_0000

    /// The root of the SEP-5 accounts of a 64-byte BIP39 seed.
    package init(bip39Seed seed: SecureBytes) {
        let master = SecureBytes(count: 64) { output in
            let key = Array("ed25519 seed".utf8)
            seed.withUnsafeBytes { data in key.withUnsafeBytes { Sodium.hmacSHA512(key: $0, message: data, output: output) } }
        }
        node = Self.child(Self.child(master, 44), 148)
    }

    package init(node: SecureBytes) {
        precondition(node.count == 64)
        self.node = node
    }

    /// The 32-byte key at `m/44'/148'` (SEP-5's test vectors print it).
    package var key: SecureBytes { node.slice(0..<32) }

    /// The key pair of account `index` (`m/44'/148'/index'`).
    package func keyPair(account index: UInt32) throws -> KeyPair {
        guard index < Self.hardened else { throw MnemonicError.accountOutOfRange }
        return try KeyPair(seed: Self.child(node, index).slice(0..<32))
    }

    /// SLIP-10 hardened child: HMAC-SHA512(chain code, 0x00 ‖ key ‖ ser32(index + 2^31)).
    private static func child(_ parent: SecureBytes, _ index: UInt32) -> SecureBytes {
        SecureBytes(count: 64) { output in
            parent.withUnsafeBytes { parent in
                var data = [UInt8](repeating: 0, count: 37)
                data.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: 1).copyMemory(from: parent.baseAddress!, byteCount: 32) }
                let number = index | hardened
                data[33] = UInt8(number >> 24); data[34] = UInt8(number >> 16 & 0xFF)
                data[35] = UInt8(number >> 8 & 0xFF); data[36] = UInt8(number & 0xFF)
                data.withUnsafeBytes { message in
                    Sodium.hmacSHA512(key: UnsafeRawBufferPointer(rebasing: parent[32..<64]), message: message, output: output)
                }
                data.withUnsafeMutableBytes { Sodium.zero($0) }
            }
        }
    }
}

extension AccountRoot: CustomStringConvertible, CustomDebugStringConvertible {
    package var description: String { "AccountRoot(redacted)" }
    package var debugDescription: String { description }
}
