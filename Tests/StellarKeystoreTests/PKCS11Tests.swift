import Foundation
import SoftwareToken
import StellarKeys
@testable import StellarKeystore
import Testing
import TestFixtures

/// The PKCS#11 boundary against SoftHSM2, loaded in this process, with OpenSC's pkcs11-tool as an independent
/// client in a subprocess. Serialized: the token's login state is one per process (PKCS#11 section 5.6).
@Suite(.offThePool, .serialized, .enabled(if: SoftwareToken.isInstalled, "SoftHSM2 and pkcs11-tool are not installed"))
struct PKCS11Tests {
    let token: SoftwareToken
    let module: PKCS11Module

    init() throws {
        token = try SoftwareToken.forThisProcess()
        module = try PKCS11Module(path: token.modulePath)
    }

    func loggedIn() throws -> PKCS11Session {
        let session = try PKCS11Session(module: module, token: token.serial, label: token.label)
        try session.login(pin: pin(token.pin))
        return session
    }

    func pin(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    /// A fresh label and ID for a key of this test (`delete(id:)` removes it).
    func newKeyName() -> (label: String, id: [UInt8]) {
        ("test-" + UUID().uuidString.prefix(8), randomID())
    }

    func delete(id: [UInt8]) {
        for type in ["privkey", "pubkey"] {
            _ = try? token.pkcs11Tool(["--delete-object", "--type", type, "--id", Hex.string(id)])
        }
    }

    /// pkcs11-tool's view of the objects with this ID: each object's lines, by kind.
    func listed(id: [UInt8]) throws -> (privateKey: [String], publicKey: [String]) {
        let output = try token.pkcs11Tool(["--list-objects", "--id", Hex.string(id)])
        var blocks: [[String]] = []
        for line in output.split(separator: "\n").map(String.init) {
            if !line.hasPrefix(" ") { blocks.append([line]) } else if !blocks.isEmpty { blocks[blocks.count - 1].append(line) }
        }
        let privateKeys = blocks.filter { $0[0].hasPrefix("Private Key Object") }
        let publicKeys = blocks.filter { $0[0].hasPrefix("Public Key Object") }
        try #require(privateKeys.count == 1 && publicKeys.count == 1, "\(output)")
        return (privateKeys[0], publicKeys[0])
    }

    func field(_ name: String, in block: [String]) -> String? {
        block.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + ":") }
            .map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) }
    }

    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "keystore-pkcs11-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    // MARK: Tokens and modules

    @Test func theTokenIsListedWithWhatItSaysOfItself() throws {
        let found = try #require(try module.tokens().first { $0.serial == token.serial })
        #expect(found.label == token.label)
        #expect(found.manufacturer == "SoftHSM project" && found.model == "SoftHSM v2")
        #expect(found.supportsEdDSA && found.loginRequired && !found.pinLocked)
        // SoftHSM2 2.6 has only C_GetFunctionList, a version 2.40 list.
        #expect(module.interfaceVersion == "2.40")
        // Another instance for the same path is the same loaded module.
        #expect(try PKCS11Module(path: token.modulePath).library === module.library)
    }

    @Test func aTokenIsFoundBySerialAndLabelOrNotAtAll() throws {
        #expect(throws: TokenError.tokenNotFound(serial: token.serial, label: "other")) {
            try PKCS11Session(module: module, token: token.serial, label: "other")
        }
        #expect(throws: TokenError.tokenNotFound(serial: "0000000000000000", label: nil)) {
            try PKCS11Session(module: module, token: "0000000000000000", label: nil)
        }
        #expect(try PKCS11Session(module: module, token: token.serial, label: nil).token.label == token.label)
    }

    @Test func aLibraryThatIsNotPKCS11IsRefused() throws {
        let candidates = ["/usr/lib/x86_64-linux-gnu/libsodium.so.23", "/usr/lib/aarch64-linux-gnu/libsodium.so.23",
                          "/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"]
        let path = try #require(candidates.first { FileManager.default.fileExists(atPath: $0) })
        #expect(throws: TokenError.notPKCS11(path: path)) { try PKCS11Module(path: path) }
    }

    @Test func aMissingRelativeOrNonLibraryPathIsNotLoadable() throws {
        #expect(throws: TokenError.moduleNotLoadable(path: "/nonexistent/libpkcs11.so", reason: "/nonexistent does not exist")) {
            try PKCS11Module(path: "/nonexistent/libpkcs11.so")
        }
        #expect(throws: TokenError.moduleNotLoadable(path: "libsofthsm2.so", reason: "the path is not absolute")) {
            try PKCS11Module(path: "libsofthsm2.so")
        }
        // A file that is not a shared object: dlopen's own reason.
        do {
            _ = try PKCS11Module(path: token.confPath)
            Issue.record("a text file loaded as a module")
        } catch TokenError.moduleNotLoadable(let path, let reason) {
            #expect(path == token.confPath && reason.contains("invalid ELF header"), "\(reason)")
        }
    }

    @Test func anEdwardsPointIsReadInEitherForm() throws {
        let raw = Array(repeating: UInt8(7), count: 32)
        #expect(PKCS11Session.ed25519PublicKey(fromPoint: [0x04, 0x20] + raw)?.rawRepresentation == raw)
        #expect(PKCS11Session.ed25519PublicKey(fromPoint: raw)?.rawRepresentation == raw)
        #expect(PKCS11Session.ed25519PublicKey(fromPoint: [0x04, 0x21] + raw + [0]) == nil)
        #expect(PKCS11Session.ed25519PublicKey(fromPoint: Array(raw.prefix(31))) == nil)
        // Ed448's 57 bytes are no Ed25519 key.
        #expect(PKCS11Session.ed25519PublicKey(fromPoint: [0x04, 0x39] + Array(repeating: 1, count: 57)) == nil)
    }

    // MARK: Keys

    @Test func aGeneratedKeyNeverLeavesTheTokenAndSignsAsPkcs11ToolDoes() throws {
        let (label, id) = newKeyName()
        defer { delete(id: id) }
        let session = try loggedIn()
        let key = try session.generateEd25519Key(label: label, id: id)
        #expect(key.id == id && key.label == label && !key.extractable && key.sensitive)

        // An independent client sees a private key that is sensitive and was never extractable, and the public
        // key we read.
        let (privateKey, publicKey) = try listed(id: id)
        let access = Set((field("Access", in: privateKey) ?? "").components(separatedBy: ", "))
        #expect(access.isSuperset(of: ["sensitive", "always sensitive", "never extractable"]) && !access.contains("extractable"), "\(access)")
        #expect(field("label", in: privateKey) == label)
        #expect(field("EC_POINT", in: publicKey) == "0420" + Hex.string(key.publicKey.rawRepresentation))
        // The curve named by its RFC 8410 OID, which SoftHSM2 takes (the name "edwards25519" is the fallback).
        #expect(field("EC_PARAMS", in: publicKey)?.hasPrefix("06032b6570") == true)

        // Ed25519 is deterministic: pkcs11-tool's signature is ours, byte for byte.
        let message = Array("a Stellar transaction's hash, or any message".utf8)
        let signature = try session.sign(message, key: id)
        #expect(signature.count == 64 && key.publicKey.isValidSignature(signature, for: message))
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(message).write(to: URL(fileURLWithPath: directory + "/in"))
        try token.pkcs11Tool(["--sign", "--mechanism", "EDDSA", "--id", Hex.string(id), "-i", directory + "/in", "-o", directory + "/out"])
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/out"))) == signature)

        #expect(try session.keys(label: label, id: nil) == [key])
        #expect(try session.keys(label: nil, id: id) == [key])
    }

    @Test func aKeyMadeByPkcs11ToolIsFoundByLabelAndByID() throws {
        let (label, id) = newKeyName()
        defer { delete(id: id) }
        try token.pkcs11Tool(["--keypairgen", "--key-type", "EC:edwards25519", "--label", label, "--id", Hex.string(id)])
        let point = try #require(field("EC_POINT", in: try listed(id: id).publicKey))
        let session = try loggedIn()
        let byLabel = try session.keys(label: label, id: nil)
        #expect(byLabel.count == 1)
        #expect(byLabel.first.map { "0420" + Hex.string($0.publicKey.rawRepresentation) } == point)
        #expect(byLabel.first?.id == id && byLabel.first?.sensitive == true && byLabel.first?.extractable == false)
        #expect(try session.keys(label: nil, id: id) == byLabel)
        #expect(try session.keys(label: label, id: [0xFF] + id).isEmpty)
    }

    @Test func aLabelOrIDInUseIsRefused() throws {
        let (label, id) = newKeyName()
        let otherID = randomID()
        defer { delete(id: id); delete(id: otherID) }
        let session = try loggedIn()
        _ = try session.generateEd25519Key(label: label, id: id)
        #expect(throws: TokenError.keyExists(label: label, id: nil)) {
            try session.generateEd25519Key(label: label, id: otherID)
        }
        #expect(throws: TokenError.keyExists(label: nil, id: id)) {
            try session.generateEd25519Key(label: label + "-other", id: id)
        }
        // Neither refusal made anything.
        #expect(try session.keys(label: nil, id: otherID).isEmpty && session.keys(label: label + "-other", id: nil).isEmpty)
        #expect(throws: TokenError.invalidKeyName(reason: "an ID has 1 to 255 bytes")) {
            try session.generateEd25519Key(label: "x", id: [])
        }
    }

    @Test func aKeyDeletedBehindOurBackIsNotFound() throws {
        let (label, id) = newKeyName()
        defer { delete(id: id) }
        let session = try loggedIn()
        _ = try session.generateEd25519Key(label: label, id: id)
        #expect(try session.sign([1, 2, 3], key: id).count == 64)
        try token.pkcs11Tool(["--delete-object", "--type", "privkey", "--id", Hex.string(id)])
        #expect(throws: TokenError.keyNotFound(id: id)) { try session.sign([1, 2, 3], key: id) }
    }

    // MARK: PINs

    /// SoftHSM2 2.6 counts a wrong user PIN (CKF_USER_PIN_COUNT_LOW) but never locks: the right PIN still works
    /// after any number of wrong ones, and clears the flag.
    @Test func aWrongPINIsCountedAndSoftHSMDoesNotLock() throws {
        let session = try PKCS11Session(module: module, token: token.serial, label: token.label)
        for _ in 0..<12 {
            #expect(throws: TokenError.wrongPIN(token: session.token.name, triesLeft: .few)) {
                try session.login(pin: pin("000000"))
            }
        }
        let after = try #require(try module.tokens().first { $0.serial == token.serial })
        #expect(after.pinCountLow && !after.pinFinalTry && !after.pinLocked)
        try session.login(pin: pin(token.pin))
        let cleared = try #require(try module.tokens().first { $0.serial == token.serial })
        #expect(!cleared.pinCountLow)
        // Logged in, the private keys show.
        let (label, id) = newKeyName()
        defer { delete(id: id) }
        _ = try session.generateEd25519Key(label: label, id: id)
        #expect(try session.keys(label: label, id: nil).count == 1)
    }

    @Test func withoutLoginThePrivateKeyIsNotThere() throws {
        let (label, id) = newKeyName()
        defer { delete(id: id) }
        try token.pkcs11Tool(["--keypairgen", "--key-type", "EC:edwards25519", "--label", label, "--id", Hex.string(id)])
        let session = try PKCS11Session(module: module, token: token.serial, label: token.label)
        // Not "deleted": the session is not logged in, and says so.
        #expect(throws: TokenError.notLoggedIn(token: "\(token.label) (serial \(token.serial))")) { try session.sign([1], key: id) }
        #expect(try session.keys(label: label, id: nil).isEmpty)
    }
}

/// A key ID for a test: 8 random bytes, so that no two tests' keys meet.
private func randomID() -> [UInt8] {
    (0..<8).map { _ in UInt8.random(in: 0...255) }
}
