import StellarText

/// A BIP39 recovery phrase (English wordlist): 12, 15, 18, 21 or 24 words encoding 128–256 bits of entropy and
/// a checksum. The canonical phrase (lower case, single spaces) is kept in guarded memory.
///
/// The phrase never passes through a `String` or an `Array`, which could not be zeroed: it is built straight into
/// guarded memory from the word list, parsed from guarded memory as ranges of the input, and the word indices and
/// entropy in between are guarded too. Only a phrase or passphrase outside ASCII goes through a `String`, for
/// Unicode normalisation (SECURITY.md).
public struct Mnemonic: Sendable {
    public static let wordCounts = [12, 15, 18, 21, 24]

    /// Whether `word` is one of the BIP39 English words, as typed (any case): for spotting a phrase where no
    /// phrase belongs, such as a command line.
    public static func isWord(_ word: some StringProtocol) -> Bool {
        BIP39Wordlist.index[word.lowercased()] != nil
    }

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
        let wordCount = entropy.count * 3 / 4
        let indices = entropy.withUnsafeBytes { bytes in
            let checksum = Sodium.sha256(bytes)[0]
            return SecureBytes(count: wordCount * 2) { out in
                for word in 0..<wordCount {
                    var index: UInt16 = 0
                    for position in (word * 11)..<(word * 11 + 11) {
                        // Past the entropy come the checksum's first bits (entropy is whole bytes, so `% 8` holds).
                        let byte = position < bytes.count * 8 ? bytes[position / 8] : checksum
                        index = index << 1 | UInt16(byte >> (7 - position % 8) & 1)
                    }
                    out.storeBytes(of: index, toByteOffset: word * 2, as: UInt16.self)
                }
            }
        }
        self.init(indices: indices)
    }

    /// The canonical phrase for word-list indices (UInt16 each, native order), written straight into guarded
    /// memory.
    private init(indices: SecureBytes) {
        let count = indices.count / 2
        let words = BIP39Wordlist.english
        let length = indices.withUnsafeBytes { raw in
            (0..<count).reduce(count - 1) { $0 + words[Int(raw.load(fromByteOffset: $1 * 2, as: UInt16.self))].utf8.count }
        }
        phrase = indices.withUnsafeBytes { raw in
            SecureBytes(count: length) { out in
                var offset = 0
                for word in 0..<count {
                    if word > 0 {
                        out[offset] = 0x20
                        offset += 1
                    }
                    for byte in words[Int(raw.load(fromByteOffset: word * 2, as: UInt16.self))].utf8 {
                        out[offset] = byte
                        offset += 1
                    }
                }
            }
        }
        wordCount = count
    }

    /// Parses a phrase as a person types it: any case, any white space between words, NFKD-normalised.
    /// Errors name the position of a bad word, never the phrase itself. `offeringCorrections` adds the nearest
    /// list words to that error: only for a person at a terminal, since for a typo the nearest word is usually
    /// the secret word itself, and error lines end up in logs.
    public init(_ text: SecureBytes, offeringCorrections: Bool = false) throws {
        let isASCII = text.withUnsafeBytes { $0.allSatisfy { $0 < 0x80 } }
        if isASCII {
            try self.init(indices: Self.indices(of: text, offeringCorrections: offeringCorrections))
            return
        }
        // Outside ASCII the phrase passes through a String to be normalised, which cannot be zeroed.
        var normalized = text.withUnsafeBytes { Array(NFKD.normalize(String(decoding: $0, as: UTF8.self)).lowercased().utf8) }
        let guarded = SecureBytes(consuming: &normalized)
        try self.init(indices: Self.indices(of: guarded, offeringCorrections: offeringCorrections))
    }

    /// `text` with its word at `position` (from 1, as `MnemonicError.unknownWord` counts) replaced by `word`, the
    /// words joined by single spaces: a person corrects one mistyped word without typing the phrase again. Nil
    /// when there is no such word.
    public static func replacingWord(at position: Int, in text: SecureBytes, with word: SecureBytes) -> SecureBytes? {
        text.withUnsafeBytes { bytes -> SecureBytes? in
            var words: [Range<Int>] = []
            var index = 0
            while index < bytes.count {
                while index < bytes.count && isSpace(bytes[index]) { index += 1 }
                let start = index
                while index < bytes.count && !isSpace(bytes[index]) { index += 1 }
                if index > start { words.append(start..<index) }
            }
            guard position >= 1, position <= words.count else { return nil }
            let replaced = words[position - 1].count
            return word.withUnsafeBytes { new in
                SecureBytes(count: words.reduce(0) { $0 + $1.count } - replaced + new.count + words.count - 1) { out in
                    var offset = 0
                    for (number, range) in words.enumerated() {
                        if number > 0 { out[offset] = 0x20; offset += 1 }
                        let source = number == position - 1 ? new : UnsafeRawBufferPointer(rebasing: bytes[range])
                        UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + source.count)]).copyMemory(from: source)
                        offset += source.count
                    }
                }
            }
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The word-list index of each word of `text` (UInt16 each, in guarded memory), checksum checked.
    private static func indices(of text: SecureBytes, offeringCorrections: Bool) throws -> SecureBytes {
        try text.withUnsafeBytes { bytes in
            var count = 0
            for position in bytes.indices where !isSpace(bytes[position]) && (position == 0 || isSpace(bytes[position - 1])) {
                count += 1
            }
            guard wordCounts.contains(count) else { throw MnemonicError.wrongWordCount(count) }
            let indices = try SecureBytes(count: count * 2) { out in
                var word = 0
                var position = 0
                while word < count {
                    while isSpace(bytes[position]) { position += 1 }
                    let start = position
                    while position < bytes.count && !isSpace(bytes[position]) { position += 1 }
                    let typed = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                    guard let index = BIP39Wordlist.index(of: typed) else {
                        let suggestions = offeringCorrections ? nearest(to: typed.map(asciiLowercased)) : []
                        throw MnemonicError.unknownWord(position: word + 1, suggestions: suggestions)
                    }
                    out.storeBytes(of: UInt16(index), toByteOffset: word * 2, as: UInt16.self)
                    word += 1
                }
            }
            try checkChecksum(indices)
            return indices
        }
    }

    /// Recomputes the checksum from the entropy the words carry (BIP39: the first ENT/32 bits of its SHA-256).
    private static func checkChecksum(_ indices: SecureBytes) throws {
        let count = indices.count / 2
        let entropyBits = count * 11 * 32 / 33
        try indices.withUnsafeBytes { raw in
            func bit(_ position: Int) -> UInt8 {
                UInt8(truncatingIfNeeded: raw.load(fromByteOffset: position / 11 * 2, as: UInt16.self) >> (10 - position % 11) & 1)
            }
            let entropy = SecureBytes(count: entropyBits / 8) { out in
                for position in 0..<entropyBits { out[position / 8] |= bit(position) << (7 - position % 8) }
            }
            let checksum = entropy.withUnsafeBytes { Sodium.sha256($0)[0] }
            let checksumBits = entropyBits / 32
            let given = (entropyBits..<(count * 11)).reduce(UInt8(0)) { $0 << 1 | bit($1) }
            guard given == checksum >> (8 - checksumBits) else { throw MnemonicError.badChecksum }
        }
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    /// The 64-byte BIP39 seed: PBKDF2-HMAC-SHA512(phrase, "mnemonic" + passphrase, 2048 iterations), both NFKD.
    public func seed(passphrase: SecureBytes? = nil) throws -> SecureBytes {
        let prefix = Array("mnemonic".utf8)
        var passphrase = passphrase
        if let text = passphrase, text.withUnsafeBytes({ $0.contains { $0 >= 0x80 } }) {
            var normalized = text.withUnsafeBytes { Array(NFKD.normalize(String(decoding: $0, as: UTF8.self)).utf8) }
            passphrase = SecureBytes(consuming: &normalized)
        }
        let salt = SecureBytes(count: prefix.count + (passphrase?.count ?? 0)) { out in
            out.copyBytes(from: prefix)
            passphrase?.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[prefix.count...]).copyMemory(from: $0) }
        }
        return SecureBytes(count: 64) { output in
            phrase.withUnsafeBytes { password in
                salt.withUnsafeBytes { Sodium.pbkdf2SHA512(password: password, salt: $0, iterations: 2048, output: output) }
            }
        }
    }

    /// Up to three words of the list closest to `word` by edit distance, for a typo.
    static func nearest(to word: [UInt8]) -> [String] {
        // Words differing in length by more than 2 are more than 2 edits apart: skipping them keeps a pasted
        // block of text from costing seconds of comparisons.
        guard word.count <= BIP39Wordlist.longestWord + 2 else { return [] }
        var scored: [(word: String, distance: Int)] = []
        for candidate in BIP39Wordlist.english where abs(candidate.utf8.count - word.count) <= 2 {
            scored.append((candidate, EditDistance.between(word, candidate.utf8)))
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
        }
    }

}
