import StellarKeys
import StellarTransactions
/// The name of an identity, which is also the stem of its vault's file name: 1 to 64 of `[a-z0-9._-]`, starting
/// with a letter or digit so that it can never be `.`, `..` or a hidden file, and never containing `.vault`,
/// `.backup-` or `.tmp-`, so that no name can be mistaken for another file's role.
public struct IdentityName: Hashable, Sendable, Comparable {
    public let rawValue: String
    public static let `default` = IdentityName(unchecked: "default")

    public init(_ text: String) throws {
        let bytes = Array(text.utf8)
        let allowed = { (byte: UInt8) in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...64).contains(bytes.count), bytes.allSatisfy(allowed),
              bytes[0] != UInt8(ascii: "."), bytes[0] != UInt8(ascii: "_"), bytes[0] != UInt8(ascii: "-"),
              !Self.fileRoles.contains(where: { role in Self.contains(bytes, Array(role.utf8)) })
        else { throw VaultError.invalidName(text) }
        rawValue = text
    }

    private init(unchecked: String) { rawValue = unchecked }

    /// Whether `part` occurs in `bytes`, byte by byte: every name is read on every command (a session's, a
    /// vault's), and `String.contains(_:)` is _StringProcessing's generic search, whose first call instantiates
    /// its types at run time (about 1% of a session `sign`, by `perf record`).
    private static func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
        guard part.count <= bytes.count else { return false }
        return (0...(bytes.count - part.count)).contains { start in bytes[start..<start + part.count].elementsEqual(part) }
    }

    /// The parts of a file name that give the file its role in the directory. A name holding one could be taken
    /// for another kind of file: `wallet.tmp-1.vault` was once swept away as an abandoned temporary file.
    static let fileRoles = [".vault", Backups.marker, AtomicFile.temporaryMarker]

    public static func < (lhs: IdentityName, rhs: IdentityName) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension IdentityName: CustomStringConvertible {
    public var description: String { rawValue }
}

/// A name written in the code (`keystore.signIn(name: "alice", …)`, or `IdentityName("alice")`, which Swift
/// also reads as a literal), so that an app needs no `String` twin of every method. A literal that is not a
/// valid name is a programming error, caught the first time it runs; a name from a person or a file, a `String`
/// value, goes through `init(_:)`, which throws `VaultError.invalidName`.
///
/// Disfavoured, so that `IdentityName.init` passed as a function (`names.map(IdentityName.init)`) is always the
/// throwing initializer: text from outside must never reach the trap.
extension IdentityName: ExpressibleByStringLiteral {
    @_disfavoredOverload
    public init(stringLiteral text: String) {
        do {
            try self.init(text)
        } catch {
            preconditionFailure("\"\(text)\" is not a valid identity name: use 1 to 64 of a-z 0-9 . _ -")
        }
    }
}
