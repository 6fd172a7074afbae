import StellarKeys
import StellarTransactions
import StellarText
/// One key file of stellar-cli (what stellar-cli calls an identity: `identity/NAME.toml` in its config
/// directory), read strictly.
///
/// stellar-cli writes each identity as a few `key = value` lines (serde's `toml`): `secret_key = "S…"`;
/// `seed_phrase = "…"` with an optional `hd_path = N`; a Ledger (`hardware = "ledger"`, `public_key`, `hd_path`);
/// a secure-store entry (`entry_name`, `public_key`, `hd_path`); or a public key only (`public_key` or
/// `muxed_account`). That is all this reader accepts: one key per line, a basic or literal string or an integer,
/// comments and blank lines; no tables, no key twice, no key it does not know. A full TOML library would hand the
/// secret over as a `String` that cannot be zeroed; here the file is read into guarded memory and the secret is
/// copied from there into guarded memory of its own.
package enum StellarCLIKeyFile: Sendable {
    case secretKey(SecureBytes)
    case seedPhrase(SecureBytes, account: UInt32)
    /// A hardware wallet or an OS secure-store entry: the secret is not in the file, so there is nothing to import.
    case elsewhere(String)
    /// A public key only: nothing secret to protect.
    case publicOnly

    /// The largest identity file read: stellar-cli writes a few short lines (a 24-word phrase and its account
    /// are under 300 bytes), and the whole file is held in guarded memory while it is parsed.
    package static let maximumSize = 4096

    /// The identity file at `path`, read straight into guarded memory and parsed there, with the identity (device
    /// and inode) of the file that was read; nil when there is none. A file over `maximumSize` is refused unread.
    package static func read(_ path: String) throws -> (identity: StellarCLIKeyFile, file: AtomicFile.FileIdentity)? {
        guard let read = try AtomicFile.readSecret(path, limit: maximumSize) else { return nil }
        return (try parse(read.bytes), AtomicFile.FileIdentity(read.status))
    }

    /// Parses the bytes of an identity file, which hold a secret and so come in guarded memory.
    public static func parse(_ file: SecureBytes) throws -> StellarCLIKeyFile {
        try file.withUnsafeBytes { try parse($0) }
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer) throws -> StellarCLIKeyFile {
        var values: [String: Value] = [:]
        var lineNumber = 0
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            var index = line.startIndex
            func skipSpace() { while index < line.endIndex, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D { index += 1 } }
            func bad(_ reason: String) -> StellarCLIImportError { .unreadable(reason: "line \(lineNumber): \(reason)") }
            skipSpace()
            if index == line.endIndex || line[index] == UInt8(ascii: "#") { continue }
            let keyStart = index
            while index < line.endIndex, TOMLSyntax.isBareKeyByte(line[index]) { index += 1 }
            guard index > keyStart else { throw bad("expected a key") }
            let key = String(decoding: line[keyStart..<index], as: UTF8.self)
            skipSpace()
            guard index < line.endIndex, line[index] == UInt8(ascii: "=") else { throw bad("expected '=' after \(key)") }
            index += 1
            skipSpace()
            guard index < line.endIndex else { throw bad("\(key) has no value") }
            let value: Value
            switch line[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                let quote = line[index]
                index += 1
                let start = index
                while index < line.endIndex, line[index] != quote {
                    // Escapes never occur in what stellar-cli writes (StrKeys, phrase words, names); refusing them
                    // keeps the secret a plain byte range.
                    guard line[index] != UInt8(ascii: "\\") || quote == UInt8(ascii: "'") else { throw bad("escapes are not supported") }
                    index += 1
                }
                guard index < line.endIndex else { throw bad("\(key)'s string is not closed") }
                value = .text(start..<index)
                index += 1
            default:
                let start = index
                while index < line.endIndex, line[index] >= UInt8(ascii: "0"), line[index] <= UInt8(ascii: "9") { index += 1 }
                guard let number = UInt32(String(decoding: line[start..<index], as: UTF8.self)) else { throw bad("\(key) is not a string or a number") }
                value = .number(number)
            }
            skipSpace()
            guard index == line.endIndex || line[index] == UInt8(ascii: "#") else { throw bad("unexpected text after \(key)") }
            guard values.updateValue(value, forKey: key) == nil else { throw bad("\(key) appears twice") }
        }
        func only(_ allowed: Set<String>) throws {
            if let unknown = values.keys.first(where: { !allowed.contains($0) }) {
                throw StellarCLIImportError.unreadable(reason: "unexpected key '\(TerminalText.escaped(unknown))'")
            }
        }
        func account() throws -> UInt32 {
            switch values["hd_path"] {
            case nil: return 0
            case .number(let number)? where number < 1 << 31: return number
            default: throw StellarCLIImportError.unreadable(reason: "hd_path is not an account number")
            }
        }
        if let secret = values["secret_key"] {
            try only(["secret_key"])
            guard case .text(let range) = secret else { throw StellarCLIImportError.unreadable(reason: "secret_key is not a string") }
            return .secretKey(guarded(bytes, range))
        }
        if let phrase = values["seed_phrase"] {
            try only(["seed_phrase", "hd_path"])
            guard case .text(let range) = phrase else { throw StellarCLIImportError.unreadable(reason: "seed_phrase is not a string") }
            return .seedPhrase(guarded(bytes, range), account: try account())
        }
        if values["hardware"] != nil {
            try only(["hardware", "public_key", "hd_path"])
            return .elsewhere("a hardware wallet (Ledger) identity: its key never leaves the device")
        }
        if values["entry_name"] != nil {
            try only(["entry_name", "public_key", "hd_path"])
            return .elsewhere("a secure-store identity: its key is in the operating system's credential store, not in the file")
        }
        if values["public_key"] != nil || values["muxed_account"] != nil {
            try only(["public_key", "muxed_account"])
            return .publicOnly
        }
        throw StellarCLIImportError.unreadable(reason: "no secret_key, seed_phrase, hardware, entry_name or public_key")
    }

    private enum Value {
        /// Where the string's bytes are in the file.
        case text(Range<Int>)
        case number(UInt32)
    }
}

/// `range` of the file's guarded bytes, copied into guarded memory of its own.
private func guarded(_ file: UnsafeRawBufferPointer, _ range: Range<Int>) -> SecureBytes {
    SecureBytes(copying: UnsafeRawBufferPointer(rebasing: file[range]))
}

public enum StellarCLIImportError: KeystoreError, Equatable {
    case unreadable(reason: String)
    case noConfigDirectory(String)
    /// The plaintext file is no longer the one that was read (replaced, or a link now): it was left alone.
    case changedSinceRead(String)

    public var message: String {
        switch self {
        case .changedSinceRead(let path):
            "\(TerminalText.escaped(path, limit: nil)) is no longer the file that was read (replaced since, or a link); it was neither overwritten nor removed"
        case .unreadable(let reason): "not a stellar-cli identity file that can be read here (\(reason))"
        case .noConfigDirectory(let directory):
            "No stellar-cli identities in \(TerminalText.escaped(directory, limit: nil))/identity."
        }
    }

}
