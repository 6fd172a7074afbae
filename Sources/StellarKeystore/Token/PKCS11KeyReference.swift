import StellarKeys
import StellarText

/// Where an identity's key lives when it is in a PKCS#11 token (a version 4 vault; docs/FORMAT.md): the module
/// that speaks to the token, the token, the key, and its public key. Nothing here is secret, and nothing here is
/// trusted to be the key: every signature the token returns is checked against `publicKey`.
public struct PKCS11KeyReference: Sendable, Equatable {
    /// The module's absolute path: a vault's path must not depend on the directory a command runs in.
    public let module: String
    /// The token's serial number and label (`CK_TOKEN_INFO`), which find it among the module's slots.
    package let tokenSerial: String
    package let tokenLabel: String
    /// The key's `CKA_ID` and `CKA_LABEL`; the id finds it.
    package let keyID: [UInt8]
    package let keyLabel: String
    public let publicKey: PublicKey

    /// What a PKCS#11 token's text fields hold at most (`CK_TOKEN_INFO`'s padded arrays), and what a module path,
    /// a key id and a key label may be here.
    static let longestSerial = 16
    static let longestTokenLabel = 32
    static let longestKeyID = 64
    static let longestKeyLabel = 128
    static let longestModulePath = 4096

    /// Why a reference read from a vault cannot be one.
    struct Invalid: Error { let reason: String }

    /// Nil-free: every field is checked, since a vault's fields come from a file anyone may have edited, and the
    /// module path is a library this process will load.
    package init(module: String, tokenSerial: String, tokenLabel: String, keyID: [UInt8], keyLabel: String, publicKey: PublicKey) throws {
        func printable(_ text: String, _ longest: Int, _ what: String, emptyAllowed: Bool = true) throws {
            if let reason = Self.whyNot(text, longest, what, emptyAllowed: emptyAllowed) { throw Invalid(reason: reason) }
        }
        if let reason = Self.whyNotRecordable(module: module) { throw Invalid(reason: reason) }
        try printable(tokenSerial, Self.longestSerial, "serial number")
        try printable(tokenLabel, Self.longestTokenLabel, "label")
        try printable(keyLabel, Self.longestKeyLabel, "key label")
        guard !keyID.isEmpty, keyID.count <= Self.longestKeyID else { throw Invalid(reason: "the token key's id is not 1 to \(Self.longestKeyID) bytes") }
        self.module = module
        self.tokenSerial = tokenSerial
        self.tokenLabel = tokenLabel
        self.keyID = keyID
        self.keyLabel = keyLabel
        self.publicKey = publicKey
    }

    /// Why a vault cannot record `module` as a module path, or nil: checked before a key is made for it.
    static func whyNotRecordable(module: String) -> String? {
        guard module.hasPrefix("/") else { return "the token's module path is not absolute" }
        return whyNot(module, longestModulePath, "module path", emptyAllowed: false)
    }

    private static func whyNot(_ text: String, _ longest: Int, _ what: String, emptyAllowed: Bool) -> String? {
        guard emptyAllowed || !text.isEmpty else { return "the token's \(what) is empty" }
        guard text.utf8.count <= longest else { return "the token's \(what) is longer than \(longest) bytes" }
        guard text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }) else {
            return "the token's \(what) holds a control character"
        }
        return nil
    }

    /// The token as a person knows it, escaped for a terminal.
    package var tokenDescription: String {
        "token \"\(TerminalText.escaped(tokenLabel))\" (serial \(TerminalText.escaped(tokenSerial)))"
    }
}
