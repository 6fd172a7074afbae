#if os(Linux)
internal import CPlatform
#else
import Foundation  // NFKD (decomposedStringWithCompatibilityMapping) is not in FoundationEssentials
#endif

/// A BIP39 recovery phrase (English wordlist): 12, 15, 18, 21 or 24 words encoding 128–256 bits of entropy and
/// a checksum. The canonical phrase (lower case, single spaces) is kept in guarded memory.
public struct Mnemonic: Sendable {
    public static let wordCounts = [12, 15, 18, 21, 24]

    /// "word word …" in ASCII.
    public let phrase: SecureBytes
    public let wordCount: Int

    /// A new phrase of `wordCount` words from the system's random source.
    public static func generate(wordCount: Int = 24) throws -> Mnemonic {
        guard wordCounts.contains(wordCount) else { throw MnemonicError.wrongWordCount(wordCount) }
        let entropy = SecureBytes.random(count: wordCount / 3 * 4)
        return try Mnemonic(entropy: entropy)
    }

    /// The phrase that encodes `entropy` (16, 20, 24, 28 or 32 bytes).
    public init(entropy: SecureBytes) throws {
        guard [16, 20, 24, 28, 32].contains(entropy.count) else { throw MnemonicError.wrongWordCount(entropy.count * 3 / 4) }
        var indices = entropy.withUnsafeBytes { bytes in
            let checksum = Sodium.sha256(bytes)[0]
            let bitCount = bytes.count * 8 + bytes.count / 4
            func bit(_ position: Int) -> Int {
                let byte = position < bytes.count * 8 ? bytes[position / 8] : checksum
                return Int(byte >> (7 - position % 8)) & 1
            }
            return stride(from: 0, to: bitCount, by: 11).map { start in (start..<start + 11).reduce(0) { $0 << 1 | bit($1) } }
        }
        defer { indices.withUnsafeMutableBytes { Sodium.zero($0) } }
        self.init(indices: indices)
    }

    private init(indices: [Int]) {
        var text = Array(indices.map { BIP39Wordlist.english[$0] }.joined(separator: " ").utf8)
        phrase = SecureBytes(consuming: &text)
        wordCount = indices.count
    }

    /// Parses a phrase as a person types it: any case, any white space between words, NFKD-normalised.
    /// Errors name the position of a bad word and the nearest real words, never the phrase itself.
    public init(_ text: SecureBytes) throws {
        let words: [[UInt8]] = try text.withUnsafeBytes { bytes in
            if bytes.allSatisfy({ $0 < 0x80 }) {
                return bytes.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
                    .map { $0.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 } }
            }
            // Outside ASCII the phrase passes through a String to be normalised, which cannot be zeroed.
            let normalized = try Self.nfkd(String(decoding: bytes, as: UTF8.self)).lowercased()
            return normalized.split(whereSeparator: \.isWhitespace).map { Array($0.utf8) }
        }
        guard Self.wordCounts.contains(words.count) else { throw MnemonicError.wrongWordCount(words.count) }
        var indices: [Int] = []
        for (position, word) in words.enumerated() {
            guard let index = BIP39Wordlist.index[String(decoding: word, as: UTF8.self)] else {
                throw MnemonicError.unknownWord(position: position + 1, suggestions: Self.nearest(to: word))
            }
            indices.append(index)
        }
        defer { indices.withUnsafeMutableBytes { Sodium.zero($0) } }
        // Recompute the checksum from the entropy the words carry.
        let entropyBits = indices.count * 11 * 32 / 33
        var bits: [UInt8] = indices.flatMap { index in (0..<11).map { UInt8(index >> (10 - $0) & 1) } }
        defer { bits.withUnsafeMutableBytes { Sodium.zero($0) } }
        var entropy = (0..<entropyBits / 8).map { byte in (0..<8).reduce(UInt8(0)) { $0 << 1 | bits[byte * 8 + $1] } }
        let checksum = entropy.withUnsafeBytes { Sodium.sha256($0)[0] }
        entropy.withUnsafeMutableBytes { Sodium.zero($0) }
        let checksumBits = entropyBits / 32
        let given = bits[entropyBits...].reduce(UInt8(0)) { $0 << 1 | $1 }
        guard given == checksum >> (8 - checksumBits) else { throw MnemonicError.badChecksum }
        self.init(indices: indices)
    }

    /// The 64-byte BIP39 seed: PBKDF2-HMAC-SHA512(phrase, "mnemonic" + passphrase, 2048 iterations), both NFKD.
    public func seed(passphrase: SecureBytes? = nil) throws -> SecureBytes {
        var salt = Array("mnemonic".utf8)
        if let passphrase {
            salt += try passphrase.withUnsafeBytes { bytes in
                bytes.allSatisfy { $0 < 0x80 }
                    ? Array(bytes)
                    : Array(try Self.nfkd(String(decoding: bytes, as: UTF8.self)).utf8)
            }
        }
        defer { salt.withUnsafeMutableBytes { Sodium.zero($0) } }
        return SecureBytes(count: 64) { output in
            phrase.withUnsafeBytes { password in
                salt.withUnsafeBytes { Sodium.pbkdf2SHA512(password: password, salt: $0, iterations: 2048, output: output) }
            }
        }
    }

    /// Unicode compatibility decomposition (NFKD), as BIP39 requires of phrase and passphrase.
    static func nfkd(_ text: String) throws -> String {
        #if os(Linux)
        let source = Array(text.utf16)
        // No code unit decomposes into more than 18 (U+FDFA), so this always has room.
        var output = [UInt16](repeating: 0, count: source.count * 18 + 16)
        let written = keystore_nfkd(source, Int32(source.count), &output, Int32(output.count))
        guard written >= 0 else { throw MnemonicError.unnormalizable }
        return String(decoding: output[0..<Int(written)], as: UTF16.self)
        #else
        return text.decomposedStringWithCompatibilityMapping
        #endif
    }

    /// Up to three words of the list closest to `word` by edit distance, for a typo.
    static func nearest(to word: [UInt8]) -> [String] {
        // Words differing in length by more than 2 are more than 2 edits apart: skipping them keeps a pasted
        // block of text from costing seconds of comparisons.
        guard word.count <= BIP39Wordlist.longestWord + 2 else { return [] }
        var previous = [Int](repeating: 0, count: BIP39Wordlist.longestWord + 1)
        var current = previous
        func distance(to candidate: String.UTF8View) -> Int {
            for j in 0...candidate.count { previous[j] = j }
            for (i, x) in word.enumerated() {
                current[0] = i + 1
                for (j, y) in candidate.enumerated() {
                    current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
                }
                swap(&previous, &current)
            }
            return previous[candidate.count]
        }
        var scored: [(word: String, distance: Int)] = []
        for candidate in BIP39Wordlist.english where abs(candidate.utf8.count - word.count) <= 2 {
            scored.append((candidate, distance(to: candidate.utf8)))
        }
        let best = scored.map(\.distance).min() ?? 0
        return Array(scored.filter { $0.distance <= max(best, 1) && $0.distance <= 2 }.map(\.word).prefix(3))
    }
}

extension Mnemonic: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "Mnemonic(\(wordCount) words, redacted)" }
    public var debugDescription: String { description }
}

public enum MnemonicError: KeystoreError, Equatable {
    case wrongWordCount(Int)
    case unknownWord(position: Int, suggestions: [String])
    case badChecksum
    case accountOutOfRange
    case unnormalizable

    public var message: String {
        switch self {
        case .wrongWordCount(let count):
            "A recovery phrase has 12, 15, 18, 21 or 24 words, not \(count); check for missing or merged words."
        case .unknownWord(let position, let suggestions) where !suggestions.isEmpty:
            "Word \(position) of the recovery phrase is not in the BIP39 English list; did you mean \(suggestions.joined(separator: ", "))?"
        case .unknownWord(let position, _):
            "Word \(position) of the recovery phrase is not in the BIP39 English list; check its spelling."
        case .badChecksum:
            "The recovery phrase's checksum does not match: a word is wrong or words are in the wrong order."
        case .accountOutOfRange:
            "An account number is from 0 to 2147483647."
        case .unnormalizable:
            "The text could not be Unicode-normalised (NFKD); check it for invalid characters."
        }
    }

    public var exitStatus: ExitStatus { .invalidInput }
}
