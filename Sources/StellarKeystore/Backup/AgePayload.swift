import StellarKeys

/// The payload of an age file (age.md, "Payload"): a 16-byte nonce, then the plaintext in 64 KiB chunks, each
/// sealed with ChaCha20-Poly1305 under HKDF-SHA-256(file key, nonce, "payload") and the 12-byte nonce
/// counter (11 bytes, big-endian) ‖ last-chunk flag. This is the STREAM construction: the flag makes a truncation at
/// a chunk boundary detectable, the counter a reordering.
enum AgePayload {
    static let nonceBytes = 16
    static let chunkBytes = 64 * 1024
    static let tagBytes = 16
    static let sealedChunkBytes = chunkBytes + tagBytes

    static func key(fileKey: SecureBytes, nonce: ArraySlice<UInt8>) -> SecureBytes {
        HKDF.sha256(key: fileKey, salt: Array(nonce), info: "payload")
    }

    /// The nonce of chunk `index`: the counter in the first 11 bytes, big-endian, and 1 in the last for the final one.
    static func chunkNonce(_ index: Int, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        var counter = UInt64(index)
        for position in stride(from: 10, through: 3, by: -1) {
            nonce[position] = UInt8(counter & 0xFF)
            counter >>= 8
        }
        nonce[11] = last ? 1 : 0
        return nonce
    }

    /// The nonce and the sealed chunks of `plaintext`. An empty plaintext is one empty final chunk. `nonce` is
    /// fresh unless a test gives one, to compare with a published vector.
    static func sealed(_ plaintext: SecureBytes, fileKey: SecureBytes, nonce: [UInt8] = Sodium.randomBytes(count: nonceBytes)) -> [UInt8] {
        precondition(nonce.count == nonceBytes)
        let key = key(fileKey: fileKey, nonce: nonce[...])
        let chunkCount = max(1, (plaintext.count + chunkBytes - 1) / chunkBytes)
        var out = nonce
        out.reserveCapacity(nonceBytes + plaintext.count + chunkCount * tagBytes)
        plaintext.withUnsafeBytes { text in
            key.withUnsafeBytes { key in
                for index in 0..<chunkCount {
                    let range = index * chunkBytes..<min(text.count, (index + 1) * chunkBytes)
                    out += Sodium.chaCha20Poly1305Seal(
                        plaintext: UnsafeRawBufferPointer(rebasing: text[range]),
                        nonce: chunkNonce(index, last: index == chunkCount - 1), key: key)
                }
            }
        }
        return out
    }

    /// The plaintext of `payload` (its nonce first), all of it or nothing: a damaged chunk anywhere releases none.
    static func opened(_ payload: ArraySlice<UInt8>, fileKey: SecureBytes) throws(AgeError) -> SecureBytes {
        // The reference implementation and the testkit count a missing nonce as the header's fault.
        guard payload.count >= nonceBytes else { throw .malformedHeader("the file ends before the payload's 16-byte nonce") }
        let key = key(fileKey: fileKey, nonce: payload.prefix(nonceBytes))
        let chunks = payload.dropFirst(nonceBytes)
        // A payload with no chunk at all has lost its final one.
        guard !chunks.isEmpty else { throw .truncated }
        let chunkCount = (chunks.count + sealedChunkBytes - 1) / sealedChunkBytes
        let lastChunkBytes = chunks.count - (chunkCount - 1) * sealedChunkBytes
        guard lastChunkBytes >= tagBytes else { throw .finalChunkAltered }
        // Only the first chunk may be empty: an empty final chunk after a full one is a second way to write the same
        // plaintext, which age.md forbids.
        guard lastChunkBytes > tagBytes || chunkCount == 1 else { throw .emptyFinalChunk }

        var failure: AgeError?
        let plaintext = SecureBytes(count: chunks.count - chunkCount * tagBytes) { out in
            failure = key.withUnsafeBytes { key in
                chunks.withUnsafeBytes { sealed in
                    openChunks(sealed, count: chunkCount, key: key, into: out)
                }
            }
            if failure != nil { Sodium.zero(out) }
        }
        if let failure { throw failure }
        return plaintext
    }

    private static func openChunks(
        _ sealed: UnsafeRawBufferPointer, count: Int, key: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) -> AgeError? {
        for index in 0..<count {
            let range = index * sealedChunkBytes..<min(sealed.count, (index + 1) * sealedChunkBytes)
            let chunk = UnsafeRawBufferPointer(rebasing: sealed[range])
            let text = UnsafeMutableRawBufferPointer(
                rebasing: out[index * chunkBytes..<(index * chunkBytes + chunk.count - tagBytes)])
            let isLast = index == count - 1
            if Sodium.chaCha20Poly1305Open(ciphertext: chunk, nonce: chunkNonce(index, last: isLast), key: key, plaintext: text) {
                continue
            }
            // Which fault it was: a final chunk with more after it, a full chunk that should have been followed by
            // more (the file was cut at a chunk boundary), or neither (altered bytes, or the wrong length).
            if chunk.count == sealedChunkBytes,
               Sodium.chaCha20Poly1305Open(ciphertext: chunk, nonce: chunkNonce(index, last: !isLast), key: key, plaintext: text) {
                return isLast ? .truncated : .trailingData
            }
            // A cut inside a chunk and an altered last chunk look alike: neither authenticates.
            return isLast ? .finalChunkAltered : .payloadAltered(chunk: index)
        }
        return nil
    }
}
