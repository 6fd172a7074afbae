internal import CSodium

/// The only place that calls libsodium's C API.
///
/// Every wrapper takes its sizes from libsodium's own constants and initialises the library first. Anything that
/// holds a secret passes it as a buffer pointer so that no copy is made here that nobody zeroes.
package enum Sodium {
    // A static let is initialised once, thread-safely (swift_once), which is exactly what sodium_init needs.
    private static let initialized: Bool = sodium_init() >= 0

    // libsodium's pointer arguments are declared non-null even when the length is zero, so an empty buffer
    // (whose base address Swift may leave nil) is passed as this one readable byte instead.
    nonisolated(unsafe) private static let emptyInput = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    private static func input(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
        UnsafePointer(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyInput))
    }

    package static func initialize() {
        precondition(initialized, "libsodium could not be initialised")
    }

    // MARK: Sizes

    package static let signSeedBytes = Int(crypto_sign_seedbytes())
    package static let signPublicKeyBytes = Int(crypto_sign_publickeybytes())
    package static let signSecretKeyBytes = Int(crypto_sign_secretkeybytes())
    package static let signatureBytes = Int(crypto_sign_bytes())
    package static let sha256Bytes = Int(crypto_hash_sha256_bytes())
    package static let secretBoxKeyBytes = Int(crypto_secretbox_keybytes())
    package static let secretBoxNonceBytes = Int(crypto_secretbox_noncebytes())
    package static let secretBoxMACBytes = Int(crypto_secretbox_macbytes())
    package static let pwhashSaltBytes = Int(crypto_pwhash_saltbytes())
    package static let pwhashAlgorithmArgon2id13 = Int(crypto_pwhash_alg_argon2id13())
    package static let pwhashOpsLimitMin = UInt64(crypto_pwhash_opslimit_min())
    package static let pwhashMemLimitMin = UInt64(crypto_pwhash_memlimit_min())
    package static let pwhashOpsLimitInteractive = UInt64(crypto_pwhash_opslimit_interactive())
    package static let pwhashMemLimitInteractive = UInt64(crypto_pwhash_memlimit_interactive())
    package static let pwhashOpsLimitModerate = UInt64(crypto_pwhash_opslimit_moderate())
    package static let pwhashMemLimitModerate = UInt64(crypto_pwhash_memlimit_moderate())
    package static let pwhashOpsLimitSensitive = UInt64(crypto_pwhash_opslimit_sensitive())
    package static let pwhashMemLimitSensitive = UInt64(crypto_pwhash_memlimit_sensitive())
    package static let hmacSHA512Bytes = Int(crypto_auth_hmacsha512_bytes())

    // MARK: Randomness

    package static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        initialize()
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    package static func randomBytes(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { fillRandom($0) }
        return bytes
    }

    // MARK: Ed25519

    /// Expands a 32-byte seed into libsodium's 64-byte secret key (seed ‖ public key) and the public key.
    package static func signKeyPair(
        seed: UnsafeRawBufferPointer,
        publicKey: UnsafeMutableRawBufferPointer,
        secretKey: UnsafeMutableRawBufferPointer
    ) {
        initialize()
        precondition(seed.count == signSeedBytes && publicKey.count == signPublicKeyBytes
            && secretKey.count == signSecretKeyBytes)
        _ = crypto_sign_seed_keypair(
            publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            secretKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
            seed.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    package static func signature(message: UnsafeRawBufferPointer, secretKey: UnsafeRawBufferPointer) -> [UInt8] {
        precondition(secretKey.count == signSecretKeyBytes)
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        signature.withUnsafeMutableBufferPointer { out in
            _ = crypto_sign_detached(
                out.baseAddress!, nil,
                input(message), UInt64(message.count),
                secretKey.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return signature
    }

    package static func isValidSignature(
        _ signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer
    ) -> Bool {
        initialize()
        guard signature.count == signatureBytes, publicKey.count == signPublicKeyBytes else { return false }
        return crypto_sign_verify_detached(
            signature.baseAddress!.assumingMemoryBound(to: UInt8.self),
            input(message), UInt64(message.count),
            publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    // MARK: Hashing

    package static func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        sha256(parts: [data])
    }

    /// SHA-256 of the concatenation of `parts`, without copying them together.
    package static func sha256(parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        initialize()
        var state = crypto_hash_sha256_state()
        _ = crypto_hash_sha256_init(&state)
        for part in parts { _ = crypto_hash_sha256_update(&state, input(part), UInt64(part.count)) }
        var digest = [UInt8](repeating: 0, count: sha256Bytes)
        digest.withUnsafeMutableBufferPointer { _ = crypto_hash_sha256_final(&state, $0.baseAddress!) }
        return digest
    }

    /// PBKDF2-HMAC-SHA-512 (RFC 8018) into `output` (at most 64 bytes: one block, all BIP39 needs).
    package static func pbkdf2SHA512(
        password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int,
        output: UnsafeMutableRawBufferPointer
    ) {
        initialize()
        precondition(output.count <= hmacSHA512Bytes && iterations >= 1)
        // The keyed state is computed once and copied for every iteration.
        var keyed = crypto_auth_hmacsha512_state()
        _ = crypto_auth_hmacsha512_init(&keyed, input(password), password.count)
        var block = [UInt8](repeating: 0, count: hmacSHA512Bytes)
        var sum = [UInt8](repeating: 0, count: hmacSHA512Bytes)
        var state = keyed
        _ = crypto_auth_hmacsha512_update(&state, input(salt), UInt64(salt.count))
        let one: [UInt8] = [0, 0, 0, 1]
        _ = crypto_auth_hmacsha512_update(&state, one, 4)
        _ = crypto_auth_hmacsha512_final(&state, &block)
        sum = block
        for _ in 1..<iterations {
            state = keyed
            _ = crypto_auth_hmacsha512_update(&state, block, UInt64(block.count))
            _ = crypto_auth_hmacsha512_final(&state, &block)
            for index in sum.indices { sum[index] ^= block[index] }
        }
        output.copyBytes(from: sum.prefix(output.count))
        block.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
        sum.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
        withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
        withUnsafeMutableBytes(of: &keyed) { sodium_memzero($0.baseAddress, $0.count) }
    }

    /// HMAC-SHA-512 into `output` (64 bytes), for BIP39's PBKDF2 and SLIP-10.
    package static func hmacSHA512(
        key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer
    ) {
        initialize()
        precondition(output.count == hmacSHA512Bytes)
        var state = crypto_auth_hmacsha512_state()
        _ = crypto_auth_hmacsha512_init(&state, input(key), key.count)
        _ = crypto_auth_hmacsha512_update(
            &state, input(message), UInt64(message.count))
        _ = crypto_auth_hmacsha512_final(&state, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
    }

    // MARK: BLAKE2b

    /// BLAKE2b (`crypto_generichash`) of `parts` in order, keyed with `key` (16 to 64 bytes), into `output`
    /// (16 to 64 bytes).
    package static func keyedHash(output: UnsafeMutableRawBufferPointer, key: [UInt8], parts: [UnsafeRawBufferPointer]) {
        initialize()
        precondition((Int(crypto_generichash_keybytes_min())...Int(crypto_generichash_keybytes_max())).contains(key.count))
        precondition((Int(crypto_generichash_bytes_min())...Int(crypto_generichash_bytes_max())).contains(output.count))
        // One call over the parts joined in guarded memory: the streaming state is an over-aligned C struct
        // that Swift does not import, and the parts here are a few dozen bytes.
        let count = parts.reduce(0) { $0 + $1.count }
        let joined = guardedAllocate(count: count)
        defer { guardedFree(joined) }
        var offset = 0
        for part in parts where part.count > 0 {
            (joined + offset).copyMemory(from: part.baseAddress!, byteCount: part.count)
            offset += part.count
        }
        _ = crypto_generichash(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count,
            joined.assumingMemoryBound(to: UInt8.self), UInt64(count), key, key.count)
    }

    // MARK: Argon2id

    /// Derives `output.count` bytes from a password with Argon2id v1.3. Returns false when libsodium refuses,
    /// which in practice means it could not allocate `memLimit` bytes.
    package static func argon2id(
        output: UnsafeMutableRawBufferPointer, password: UnsafeRawBufferPointer, salt: [UInt8],
        opsLimit: UInt64, memLimit: UInt64
    ) -> Bool {
        initialize()
        precondition(salt.count == pwhashSaltBytes)
        return salt.withUnsafeBufferPointer { salt in
            crypto_pwhash(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(output.count),
                UnsafeRawPointer(input(password)).assumingMemoryBound(to: CChar.self), UInt64(password.count),
                salt.baseAddress!, opsLimit, Int(memLimit), Int32(pwhashAlgorithmArgon2id13)) == 0
        }
    }

    // MARK: XSalsa20-Poly1305

    package static func secretBoxSeal(
        plaintext: UnsafeRawBufferPointer, nonce: [UInt8], key: UnsafeRawBufferPointer
    ) -> [UInt8] {
        initialize()
        precondition(nonce.count == secretBoxNonceBytes && key.count == secretBoxKeyBytes)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + secretBoxMACBytes)
        ciphertext.withUnsafeMutableBufferPointer { out in
            _ = crypto_secretbox_easy(
                out.baseAddress!, input(plaintext), UInt64(plaintext.count),
                nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return ciphertext
    }

    /// Opens into `plaintext` (ciphertext.count − MAC bytes). Returns false when the MAC does not verify.
    package static func secretBoxOpen(
        ciphertext: [UInt8], nonce: [UInt8], key: UnsafeRawBufferPointer, plaintext: UnsafeMutableRawBufferPointer
    ) -> Bool {
        initialize()
        guard nonce.count == secretBoxNonceBytes, key.count == secretBoxKeyBytes,
              ciphertext.count >= secretBoxMACBytes, plaintext.count == ciphertext.count - secretBoxMACBytes
        else { return false }
        let out = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyInput
        return crypto_secretbox_open_easy(
            out, ciphertext, UInt64(ciphertext.count), nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    // MARK: age (age-encryption.org/v1): HMAC-SHA-256, X25519, ChaCha20-Poly1305 (IETF), scrypt

    package static let hmacSHA256Bytes = Int(crypto_auth_hmacsha256_bytes())
    package static let x25519Bytes = Int(crypto_scalarmult_bytes())
    package static let x25519ScalarBytes = Int(crypto_scalarmult_scalarbytes())
    package static let chaCha20Poly1305KeyBytes = Int(crypto_aead_chacha20poly1305_ietf_keybytes())
    package static let chaCha20Poly1305NonceBytes = Int(crypto_aead_chacha20poly1305_ietf_npubbytes())
    package static let chaCha20Poly1305TagBytes = Int(crypto_aead_chacha20poly1305_ietf_abytes())

    /// HMAC-SHA-256 (RFC 2104) of `parts` in order under `key` (any length), into `output` (32 bytes): the
    /// building block of HKDF-SHA-256, which libsodium 1.0.18 lacks.
    package static func hmacSHA256(
        key: UnsafeRawBufferPointer, parts: [UnsafeRawBufferPointer], output: UnsafeMutableRawBufferPointer
    ) {
        initialize()
        precondition(output.count == hmacSHA256Bytes)
        var state = crypto_auth_hmacsha256_state()
        _ = crypto_auth_hmacsha256_init(&state, input(key), key.count)
        for part in parts { _ = crypto_auth_hmacsha256_update(&state, input(part), UInt64(part.count)) }
        _ = crypto_auth_hmacsha256_final(&state, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
    }

    /// X25519 (RFC 7748 §5) of `scalar` and the base point into `output`.
    package static func x25519Base(scalar: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer) {
        initialize()
        precondition(scalar.count == x25519ScalarBytes && output.count == x25519Bytes)
        _ = crypto_scalarmult_base(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), scalar.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// X25519 of `scalar` and `point` into `output`. Returns false when the result is all zeros (a point of small
    /// order), which libsodium refuses and age requires refusing.
    package static func x25519(
        scalar: UnsafeRawBufferPointer, point: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        initialize()
        precondition(scalar.count == x25519ScalarBytes && output.count == x25519Bytes)
        guard point.count == x25519Bytes else { return false }
        return crypto_scalarmult(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), scalar.baseAddress!.assumingMemoryBound(to: UInt8.self),
            point.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// ChaCha20-Poly1305 (RFC 8439, 96-bit nonce) with no associated data: the ciphertext, then the 16-byte tag.
    package static func chaCha20Poly1305Seal(
        plaintext: UnsafeRawBufferPointer, nonce: [UInt8], key: UnsafeRawBufferPointer
    ) -> [UInt8] {
        initialize()
        precondition(nonce.count == chaCha20Poly1305NonceBytes && key.count == chaCha20Poly1305KeyBytes)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + chaCha20Poly1305TagBytes)
        ciphertext.withUnsafeMutableBufferPointer { out in
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                out.baseAddress!, nil, input(plaintext), UInt64(plaintext.count), nil, 0, nil,
                nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return ciphertext
    }

    /// Opens `ciphertext` (text ‖ tag) into `plaintext` (ciphertext.count − 16 bytes). Returns false when the tag
    /// does not verify; `plaintext` is then zeroed.
    package static func chaCha20Poly1305Open(
        ciphertext: UnsafeRawBufferPointer, nonce: [UInt8], key: UnsafeRawBufferPointer,
        plaintext: UnsafeMutableRawBufferPointer
    ) -> Bool {
        initialize()
        guard nonce.count == chaCha20Poly1305NonceBytes, key.count == chaCha20Poly1305KeyBytes,
              ciphertext.count >= chaCha20Poly1305TagBytes, plaintext.count == ciphertext.count - chaCha20Poly1305TagBytes
        else { return false }
        let out = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyInput
        let opened = crypto_aead_chacha20poly1305_ietf_decrypt(
            out, nil, nil, input(ciphertext), UInt64(ciphertext.count), nil, 0,
            nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        if !opened { zero(plaintext) }
        return opened
    }

    /// scrypt (RFC 7914) with N = 2^`logN`, r and p into `output`. Returns false when libsodium refuses, which in
    /// practice means it could not allocate the 128·r·N bytes.
    package static func scrypt(
        password: UnsafeRawBufferPointer, salt: [UInt8], logN: Int, r: UInt32, p: UInt32,
        output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        initialize()
        precondition((1...62).contains(logN) && output.count > 0)
        return crypto_pwhash_scryptsalsa208sha256_ll(
            input(password), password.count, salt, salt.count, UInt64(1) << UInt64(logN), r, p,
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count) == 0
    }

    // MARK: Memory

    package static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        initialize()
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    package static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// Guarded allocation: guard pages on both sides, a canary, mlock where the system allows, zeroed on free.
    package static func guardedAllocate(count: Int) -> UnsafeMutableRawPointer {
        initialize()
        guard let pointer = sodium_malloc(max(count, 1)) else {
            fatalError("sodium_malloc could not allocate \(count) bytes")
        }
        return pointer
    }

    package static func guardedFree(_ pointer: UnsafeMutableRawPointer) {
        sodium_free(pointer)
    }

    package static func makeReadOnly(_ pointer: UnsafeMutableRawPointer) {
        _ = sodium_mprotect_readonly(pointer)
    }
}
