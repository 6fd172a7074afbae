import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

@Suite struct SessionStoreTests {
    let directory = TemporaryDirectory()
    let clock = ManualClock()
    var sessions: SessionStore { SessionStore(directory: directory.path + "/run", now: { [clock] in clock.now }) }
    let keyPair = KeyPair.random()
    var identity: SessionStore.Owner { .init(keystore: directory.path, name: .default) }

    /// The vaults the sessions are opened from: a session is only good while its vault holds its key.
    init() throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let store = try VaultStore(directory: directory.path)
        for name in [IdentityName.default, IdentityName("other")] {
            try store.create(Vault.seal(keyPair, name: name, pin: PIN("270419"), kdf: cheapKDF))
        }
    }

    func sessionFile(_ token: SessionToken) -> String { sessions.path(of: token) }

    @Test func aSessionEndsWhenItsVaultHoldsAnotherKey() throws {
        let token = try SessionStore(directory: directory.path + "/run").open(keyPair, for: identity, ttl: 60)  // the real clock
        let keystore = try Keystore(directory: directory.path, sessionDirectory: directory.path + "/run")
        #expect(try keystore.signer(session: token).address == keyPair.publicKey.accountID)
        let store = try VaultStore(directory: directory.path)
        try store.create(Vault.seal(.random(), name: .default, pin: PIN("270419"), kdf: cheapKDF), replacing: true)
        #expect(throws: SessionError.vaultChanged(name: "default")) { try keystore.signer(session: token) }
    }

    @Test func changingThePINEndsTheSessionsOfTheIdentityOnly() throws {
        let other = SessionStore.Owner(keystore: directory.path, name: IdentityName("other"))
        let ended = try sessions.open(keyPair, for: identity, ttl: 60)
        let kept = try sessions.open(keyPair, for: other, ttl: 60)
        let store = try VaultStore(directory: directory.path, sessions: sessions)
        _ = try store.changePIN(.default, from: PIN("270419"), to: PIN("918273"), kdf: cheapKDF)
        #expect(throws: SessionError.ended) { try sessions.keyPair(for: ended, identity: identity) }
        #expect(try sessions.keyPair(for: kept, identity: other) == keyPair)
    }

    @Test func aSessionGivesBackTheKeyUntilItExpires() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        #expect(try sessions.keyPair(for: token, identity: identity) == keyPair)
        #expect(try sessions.keyPair(for: token, identity: nil) == keyPair)
        #expect(try SessionToken(token.stringValue).id == token.id)
        clock.advance(59)
        #expect(try sessions.keyPair(for: token, identity: identity) == keyPair)
        clock.advance(1)
        #expect(throws: SessionError.expired) { try sessions.keyPair(for: token, identity: identity) }
        #expect(!FileManager.default.fileExists(atPath: sessionFile(token)), "an expired session is deleted")
    }

    /// Once an expired session's file is gone (removed by its first use after expiry, or by the clean-up when
    /// another session opens), it is still reported as expired, not as ended; a logged-out one is ended
    /// (issue 28, 9.10).
    @Test func anExpiredSessionStaysExpiredAfterItsFileIsRemoved() throws {
        let used = try sessions.open(keyPair, for: identity, ttl: 60)
        let unused = try sessions.open(keyPair, for: identity, ttl: 60)
        let loggedOut = try sessions.open(keyPair, for: identity, ttl: 600)
        clock.advance(61)
        #expect(throws: SessionError.expired) { try sessions.keyPair(for: used, identity: identity) }
        #expect(throws: SessionError.expired) { try sessions.keyPair(for: used, identity: nil) }
        _ = try sessions.open(keyPair, for: identity, ttl: 60)  // cleans up the expired `unused`
        #expect(!FileManager.default.fileExists(atPath: sessionFile(unused)), "an expired session is deleted")
        #expect(throws: SessionError.expired) { try sessions.keyPair(for: unused, identity: identity) }
        #expect(try sessions.close(loggedOut))
        #expect(throws: SessionError.ended) { try sessions.keyPair(for: loggedOut, identity: identity) }
        // What is left to tell expiry by (ID.expired) holds no secret, only the expiry, and is removed a day later.
        let marks = [used, unused].map { sessions.directory + "/" + Hex.string($0.id) + ".expired" }
        for mark in marks {
            let text = try String(contentsOfFile: mark, encoding: .utf8)
            #expect(Int64(text) == Int64(clock.now.timeIntervalSince1970) - 1, "\(mark): \(text)")
        }
        clock.advance(Double(SessionStore.longestTTL) + 1)
        _ = try sessions.open(keyPair, for: identity, ttl: 60)
        #expect(marks.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
    }

    @Test func theFileHoldsNoSeedInTheClear() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: sessionFile(token))))
        let seed = keyPair.seed.withUnsafeBytes { Array($0) }
        let text = String(decoding: bytes, as: UTF8.self)
        let seedStrKey = String(decoding: keyPair.secretSeedStrKey().withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(!bytes.indices.contains { bytes[$0...].starts(with: seed) })
        #expect(!text.contains(Hex.string(seed)) && !text.contains(Data(seed).base64EncodedString()) && !text.contains(seedStrKey))
        #expect(!text.contains(Hex.string(token.key.withUnsafeBytes { Array($0) })), "nor the token's key")
        let mode = try FileManager.default.attributesOfItem(atPath: sessionFile(token))[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }

    @Test func theTokenAloneIsUselessOnceTheFileIsGone() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        #expect(try sessions.close(token))
        #expect(throws: SessionError.ended) { try sessions.keyPair(for: token, identity: identity) }
        #expect(try !sessions.close(token))
    }

    @Test func theFileAloneIsUselessWithoutTheTokensKey() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let guess = try SessionToken("kss1-" + Hex.string(token.id) + "-" + String(repeating: "ab", count: 32))
        #expect(throws: SessionError.forged) { try sessions.keyPair(for: guess, identity: identity) }
    }

    @Test(arguments: ["ciphertext", "nonce"])
    func aTamperedFileIsForged(_ field: String) throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let path = sessionFile(token)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var raw = Data(base64Encoded: object[field] as! String)!
        raw[3] ^= 0x10
        object[field] = raw.base64EncodedString()
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        #expect(throws: SessionError.forged) { try sessions.keyPair(for: token, identity: identity) }
    }

    @Test func editingTheClearExpiryOrIdentityAchievesNothing() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let path = sessionFile(token)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        object["expiresAt"] = (object["expiresAt"] as! Int) + 3600
        object["name"] = "other"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        #expect(throws: SessionError.forged) { try sessions.keyPair(for: token, identity: nil) }
        object["name"] = "default"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        clock.advance(61)
        #expect(throws: SessionError.expired) { try sessions.keyPair(for: token, identity: identity) }
    }

    /// A review reads a session without deriving its key pair (`publicKey(of:identity:)`): the clear public key is
    /// trusted only because it hashes, with the owner, to the binding sealed in the box, and the session is checked
    /// as the full read checks it (expired, other identity).
    @Test func theReviewsReadTrustsTheClearPublicKeyOnlyThroughTheBinding() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let read = try sessions.publicKey(of: token, identity: identity)
        #expect(read.publicKey == keyPair.publicKey && read.identity == identity)
        #expect(throws: SessionError.otherIdentity(name: "default")) {
            try sessions.publicKey(of: token, identity: .init(keystore: directory.path, name: IdentityName("other")))
        }
        let path = sessionFile(token)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        var object = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        object["publicKey"] = KeyPair.random().publicKey.accountID
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        #expect(throws: SessionError.forged) { try sessions.publicKey(of: token, identity: identity) }
        try original.write(to: URL(fileURLWithPath: path))
        clock.advance(60)
        #expect(throws: SessionError.expired) { try sessions.publicKey(of: token, identity: identity) }
    }

    @Test func aSessionServesOnlyItsOwnIdentity() throws {
        let token = try sessions.open(keyPair, for: identity, ttl: 60)
        let other = SessionStore.Owner(keystore: directory.path, name: IdentityName("other"))
        #expect(throws: SessionError.otherIdentity(name: "default")) { try sessions.keyPair(for: token, identity: other) }
        let elsewhere = SessionStore.Owner(keystore: "/somewhere/else", name: .default)
        #expect(throws: SessionError.otherIdentity(name: "default")) { try sessions.keyPair(for: token, identity: elsewhere) }
    }

    @Test(arguments: ["", "kss1-", "kss2-" + String(repeating: "0", count: 32) + "-" + String(repeating: "0", count: 64),
                      "kss1-" + String(repeating: "0", count: 31) + "-" + String(repeating: "0", count: 64),
                      "kss1-" + String(repeating: "0", count: 32) + "-" + String(repeating: "g", count: 64),
                      "kss1-" + String(repeating: "0", count: 32) + "-" + String(repeating: "0", count: 64) + "-"])
    func malformedTokensAreRefused(_ text: String) {
        #expect(throws: SessionError.malformed) { try SessionToken(text) }
    }

    @Test func lifetimesAreBetweenOneSecondAndADay() throws {
        #expect(throws: SessionError.invalidTTL) { try sessions.open(keyPair, for: identity, ttl: 0) }
        #expect(throws: SessionError.invalidTTL) { try sessions.open(keyPair, for: identity, ttl: 24 * 3600 + 1) }
        _ = try sessions.open(keyPair, for: identity, ttl: 24 * 3600)
    }

    @Test func aSharedSessionDirectoryIsRefused() throws {
        try FileManager.default.createDirectory(atPath: sessions.directory, withIntermediateDirectories: true)
        chmod(sessions.directory, 0o755)
        #expect(throws: SessionError.unsafeDirectory(sessions.directory)) { try sessions.open(keyPair, for: identity, ttl: 60) }
    }

    @Test func logoutAllEndsEverySessionOfTheIdentityOnly() throws {
        let other = SessionStore.Owner(keystore: directory.path, name: IdentityName("other"))
        let first = try sessions.open(keyPair, for: identity, ttl: 60)
        _ = try sessions.open(keyPair, for: identity, ttl: 60)
        let kept = try sessions.open(keyPair, for: other, ttl: 60)
        #expect(sessions.summaries().count == 3)
        #expect(try sessions.closeAll(for: identity) == 2)
        #expect(throws: SessionError.ended) { try sessions.keyPair(for: first, identity: identity) }
        #expect(try sessions.keyPair(for: kept, identity: other) == keyPair)
    }
}

/// The batch request parser, and the cases fuzzing found in it (fuzz/crashers/batch).
@Suite struct BatchRequestTests {
    func parse(_ line: String, fast: Bool = false) -> BatchRequest? {
        Array(line.utf8).withUnsafeBytes { fast ? BatchRequest(flat: $0) : BatchRequest(line: $0) }
    }

    @Test func flatRequestsTakeTheFastPathAndReadAsJSONDoes() {
        let lines = [#"{"id":1,"message":"hello"}"#, #"{ "base64" : "aGk=", "id" : "x" }"#, #"{"hex":"00ff","id":null}"#]
        for line in lines {
            let fast = parse(line, fast: true)
            #expect(fast != nil && fast == Array(line.utf8).withUnsafeBytes { BatchRequest(decoding: $0) }, "\(line)")
        }
        #expect(parse(lines[0])?.payload == .message(Array("hello".utf8)) && parse(lines[0])?.id == Array("1".utf8))
    }

    @Test func exactlyOnePayload() {
        #expect(parse(#"{"id":2}"#)?.payload == nil)
        #expect(parse(#"{"message":"a","hex":"00"}"#)?.payload == nil)
        #expect(parse(#"{"message":"caf\u00e9"}"#)?.payload == .message(Array("café".utf8)))
    }

    /// The full path reads a request once, strictly: a key given twice anywhere is reported (nothing signed),
    /// and the id is echoed unless it is the key given twice.
    @Test func aRepeatedKeyIsReportedAndTheIdEchoed() {
        let nested = parse(#"{"id":7,"x":{"a":1,"a":2},"message":"hi"}"#)
        #expect(nested?.repeatedKey == "a" && nested?.payload == nil && nested?.id == Array("7".utf8))
        let payload = parse(#"{"id":"r","message":"a","message":"b"}"#)
        #expect(payload?.repeatedKey == "message" && payload?.payload == nil && payload?.id == Array(#""r""#.utf8))
        let id = parse(#"{"id":1,"id":2,"message":"a"}"#)
        #expect(id?.repeatedKey == "id" && id?.id == Array("null".utf8))
    }

    @Test func theFullPathReadsWhatTheFastPathLeavesToIt() {
        #expect(parse(#"{"id":1.5,"hex":"00"}"#)?.id == Array("1.5".utf8))
        #expect(parse(#"{"id":"\u0041","hex":"00"}"#)?.id == Array(#""A""#.utf8))
        #expect(parse(#"{"message":"a","extra":[1,{"b":true}]}"#)?.payload == .message(Array("a".utf8)))
        // An id that is no id, or a payload that is not text: not a request.
        #expect(parse(#"{"id":true,"message":"a"}"#) == nil)
        #expect(parse(#"{"id":{},"message":"a"}"#) == nil)
        #expect(parse(#"{"message":5}"#) == nil)
        #expect(parse(#"{"message":null,"hex":"00"}"#)?.payload == .hex(Array("00".utf8)))
        #expect(parse(#"[]"#) == nil)
    }

    /// Found by fuzzing: `{}` followed by anything was taken for an empty request.
    @Test func textAfterTheObjectIsRefused() {
        #expect(parse(#"{}: "*"#) == nil)
        #expect(parse(#"{} x"#) == nil)
        #expect(parse(#"{"message":"a"} x"#) == nil)
        #expect(parse(" {} ")?.payload == nil && parse(" {} ") != nil)
    }

    /// Found by fuzzing: the fast path echoed an id of -0 as `-0`, the JSON path as `0`.
    @Test func minusZeroIsEchoedAsZeroByBothPaths() {
        #expect(parse(#"{"id":-0,"message":"a"}"#, fast: true) == nil)
        #expect(parse(#"{"id":-0,"message":"a"}"#)?.id == Array("0".utf8))
        #expect(parse(#"{"id":-7,"message":"a"}"#, fast: true)?.id == Array("-7".utf8))
    }

    /// Found by fuzzing: base64 with non-zero bits under the padding decoded, so two spellings signed one payload.
    @Test func base64IsCanonical() {
        #expect(Base64.decode("aGVsbG8=") == Array("hello".utf8))
        #expect(Base64.decode("aGVsbG9=") == nil)
        #expect(Base64.decode("aGk=") == Array("hi".utf8))
        #expect(Base64.decode("aGl=") == nil)
        #expect(Base64.decode("aR==") == nil)
        #expect(Base64.decode("aQ==") == [0x69])
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.string(bytes)) == bytes)
            #expect(Base64.string(bytes) == Data(bytes).base64EncodedString())
        }
    }
}
