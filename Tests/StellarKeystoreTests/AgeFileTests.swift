import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures

/// The age file format as the library writes and reads it: round trips at the chunk boundaries, and one distinct
/// error for each way a file can be wrong (a wrong key, an altered header, an altered chunk, a cut, extra data).
@Suite struct AgeFileTests {
    /// `count` bytes that differ from chunk to chunk, so that a swapped chunk would show.
    static func plaintext(_ count: Int) -> SecureBytes {
        SecureBytes(count: count) { out in for index in 0..<count { out[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 16) } }
    }

    /// A low scrypt work factor keeps these tests fast; the interop tests use age's own.
    static func passphrase(_ text: String, workFactor: Int = 10, maximum: Int = 22) -> AgePassphrase {
        AgePassphrase(secure(text), workFactor: workFactor, maximumWorkFactor: maximum)
    }

    @Test(arguments: [0, 1, 65535, 65536, 65537, 3 * 65536, 3 * 65536 + 5])
    func roundTripsAtChunkBoundaries(_ count: Int) throws {
        let identity = AgeX25519Identity.generate()
        let plaintext = Self.plaintext(count)
        let file = try AgeFile.encrypt(plaintext, to: [identity.recipient])
        // Header, nonce, and one 16-byte tag per 64 KiB chunk (one empty chunk for an empty plaintext).
        let chunks = max(1, (count + 65535) / 65536)
        let header = try AgeHeader.parse(file)
        #expect(file.count == header.payloadOffset + 16 + count + 16 * chunks)
        #expect(try AgeFile.decrypt(file, with: [identity]).isEqual(to: plaintext))
    }

    @Test func anyOfSeveralRecipientsOpensTheFile() throws {
        let identities = (0..<3).map { _ in AgeX25519Identity.generate() }
        let file = try AgeFile.encrypt(Self.plaintext(100), to: identities.map(\.recipient))
        #expect(try AgeHeader.parse(file).stanzas.map(\.type) == ["X25519", "X25519", "X25519"])
        for identity in identities {
            #expect(try AgeFile.decrypt(file, with: [AgeX25519Identity.generate(), identity]).isEqual(to: Self.plaintext(100)))
        }
    }

    @Test func aPassphraseRoundTripsAndMustBeAlone() throws {
        let file = try AgeFile.encrypt(Self.plaintext(70_000), to: [Self.passphrase("correct horse")])
        let stanza = try #require(try AgeHeader.parse(file).stanzas.first)
        #expect(stanza.type == "scrypt" && stanza.arguments.last == "10")
        #expect(try AgeFile.decrypt(file, with: [Self.passphrase("correct horse")]).isEqual(to: Self.plaintext(70_000)))
        #expect(throws: AgeError.wrongPassphrase) { try AgeFile.decrypt(file, with: [Self.passphrase("correct horsE")]) }
        #expect(throws: AgeError.passphraseNotAlone) {
            try AgeFile.encrypt(Self.plaintext(1), to: [Self.passphrase("a"), AgeX25519Identity.generate().recipient])
        }
        #expect(throws: AgeError.noRecipients) { try AgeFile.encrypt(Self.plaintext(1), to: []) }
    }

    @Test func aWorkFactorOverTheCeilingIsRefusedBeforeScryptRuns() throws {
        let file = try AgeFile.encrypt(Self.plaintext(1), to: [Self.passphrase("p", workFactor: 12)])
        #expect(throws: AgeError.workFactorTooHigh(12, limit: 11)) {
            try AgeFile.decrypt(file, with: [Self.passphrase("p", maximum: 11)])
        }
        #expect(try AgeFile.decrypt(file, with: [Self.passphrase("p", maximum: 12)]).count == 1)
    }

    @Test func aWrongKeyIsNoMatchAndNamesTheStanzaTypes() throws {
        let file = try AgeFile.encrypt(Self.plaintext(10), to: [AgeX25519Identity.generate().recipient])
        #expect(throws: AgeError.noMatchingIdentity(stanzaTypes: ["X25519"])) {
            try AgeFile.decrypt(file, with: [AgeX25519Identity.generate()])
        }
        // A passphrase given for a file encrypted to a key is no match either, not a wrong passphrase.
        #expect(throws: AgeError.noMatchingIdentity(stanzaTypes: ["X25519"])) {
            try AgeFile.decrypt(file, with: [Self.passphrase("p")])
        }
    }

    /// The second recipient's stanza changed: the first identity still opens its own stanza, and only the MAC
    /// tells that the header is not the one written.
    @Test func anAlteredHeaderFailsItsMAC() throws {
        let first = AgeX25519Identity.generate(), second = AgeX25519Identity.generate()
        var file = try AgeFile.encrypt(Self.plaintext(10), to: [first.recipient, second.recipient])
        let header = try AgeHeader.parse(file)
        let secondBody = AgeBase64.encode(header.stanzas[1].body)
        let at = try #require(file.indices.first { file[$0...].starts(with: secondBody) })
        file[at] = file[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(try AgeHeader.parse(file).stanzas[1].body != header.stanzas[1].body)
        #expect(throws: AgeError.headerAltered) { try AgeFile.decrypt(file, with: [first]) }
    }

    @Test func anAlteredChunkIsNamedAndReleasesNothing() throws {
        let identity = AgeX25519Identity.generate()
        let original = try AgeFile.encrypt(Self.plaintext(3 * 65536 + 5), to: [identity.recipient])
        let payload = try AgeHeader.parse(original).payloadOffset + 16
        var file = original
        file[payload + 65552 + 100] ^= 1  // inside the second chunk
        #expect(throws: AgeError.payloadAltered(chunk: 1)) { try AgeFile.decrypt(file, with: [identity]) }
        file = original
        file[file.count - 1] ^= 0x80  // the last chunk's tag
        #expect(throws: AgeError.finalChunkAltered) { try AgeFile.decrypt(file, with: [identity]) }
        file = original
        file[payload - 1] ^= 1  // the nonce: every chunk's key changes
        #expect(throws: AgeError.payloadAltered(chunk: 0)) { try AgeFile.decrypt(file, with: [identity]) }
    }

    @Test func aCutFileIsTruncatedWhereverItIsCut() throws {
        let identity = AgeX25519Identity.generate()
        let file = try AgeFile.encrypt(Self.plaintext(2 * 65536 + 7), to: [identity.recipient])
        let payload = try AgeHeader.parse(file).payloadOffset + 16
        // At a chunk boundary: the full chunk before the cut is not marked final.
        #expect(throws: AgeError.truncated) { try AgeFile.decrypt(Array(file.prefix(payload + 2 * 65552)), with: [identity]) }
        #expect(throws: AgeError.truncated) { try AgeFile.decrypt(Array(file.prefix(payload)), with: [identity]) }
        // Inside a chunk: what is left of it does not authenticate.
        #expect(throws: AgeError.finalChunkAltered) { try AgeFile.decrypt(Array(file.prefix(payload + 65552 + 300)), with: [identity]) }
        // Inside the header.
        #expect(throws: AgeError.malformedHeader("it ends inside a stanza")) {
            try AgeFile.decrypt(Array(file.prefix(100)), with: [identity])
        }
    }

    @Test func dataAfterTheFinalChunkIsRefused() throws {
        let identity = AgeX25519Identity.generate()
        let file = try AgeFile.encrypt(Self.plaintext(65536), to: [identity.recipient])
        #expect(throws: AgeError.trailingData) { try AgeFile.decrypt(file + [UInt8](repeating: 7, count: 17), with: [identity]) }
        #expect(throws: AgeError.trailingData) { try AgeFile.decrypt(file + file.suffix(65552), with: [identity]) }
    }

    @Test func otherVersionsAndOtherFilesAreToldApart() throws {
        let identity = AgeX25519Identity.generate()
        var file = try AgeFile.encrypt(Self.plaintext(1), to: [identity.recipient])
        file[20] = UInt8(ascii: "2")
        #expect(throws: AgeError.unsupportedVersion("v2")) { try AgeFile.decrypt(file, with: [identity]) }
        #expect(throws: AgeError.notAgeFile) { try AgeFile.decrypt(Array("hello\n".utf8), with: [identity]) }
        #expect(throws: AgeError.notAgeFile) { try AgeFile.decrypt([], with: [identity]) }
    }

    @Test func aFileOverTheLimitIsRefusedUnread() throws {
        let identity = AgeX25519Identity.generate()
        let huge = [UInt8](repeating: 0x41, count: AgeFile.maximumFileSize / 3 * 4 + AgeFile.maximumFileSize / 48 + 4096)
        #expect(throws: AgeError.tooLarge(limit: AgeFile.maximumFileSize)) { try AgeFile.decrypt(huge, with: [identity]) }
        #expect(throws: AgeError.tooLarge(limit: AgeFile.maximumFileSize)) {
            try AgeFile.encrypt(SecureBytes(count: AgeFile.maximumPlaintextSize + 1) { _ in }, to: [identity.recipient])
        }
    }

    @Test func armorRoundTripsAndIsStrict() throws {
        let identity = AgeX25519Identity.generate()
        let armored = try AgeFile.encrypt(Self.plaintext(1000), to: [identity.recipient], armored: true)
        let text = String(decoding: armored, as: UTF8.self)
        #expect(text.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n") && text.hasSuffix("\n-----END AGE ENCRYPTED FILE-----\n"))
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 64 || $0.hasPrefix("-----") })
        #expect(try AgeFile.decrypt(armored, with: [identity]).isEqual(to: Self.plaintext(1000)))
        #expect(try AgeFile.decrypt(Array("\n  \r\n".utf8) + armored + Array(" \n".utf8), with: [identity]).count == 1000)
        #expect(throws: AgeError.malformedArmor("data follows its END line")) {
            try AgeFile.decrypt(armored + Array("x".utf8), with: [identity])
        }
    }

    @Test func malformedHeadersAreRefusedWithTheirReason() throws {
        func header(_ text: String) -> [UInt8] { Array(text.utf8) + [UInt8](repeating: 0, count: 40) }
        let identity = AgeX25519Identity.generate()
        let mac = "--- " + String(repeating: "A", count: 43) + "\n"
        #expect(throws: AgeError.malformedHeader("it has no recipient stanza")) {
            try AgeFile.decrypt(header("age-encryption.org/v1\n" + mac), with: [identity])
        }
        #expect(throws: AgeError.malformedHeader("a stanza's body line is not canonical base64 of at most 64 columns")) {
            try AgeFile.decrypt(header("age-encryption.org/v1\n-> X25519 abc\nAAA=\n" + mac), with: [identity])
        }
        #expect(throws: AgeError.malformedHeader("a stanza's body does not end with a line shorter than 64 columns")) {
            try AgeFile.decrypt(header("age-encryption.org/v1\n-> X25519 abc\n" + String(repeating: "A", count: 64) + "\n" + mac), with: [identity])
        }
        #expect(throws: AgeError.malformedHeader("the version line does not end")) {
            try AgeFile.decrypt(Array(("age-encryption.org/" + String(repeating: "v", count: 5000)).utf8), with: [identity])
        }
        #expect(throws: AgeError.malformedHeader("an scrypt stanza is not the header's only one")) {
            try AgeFile.decrypt(header("age-encryption.org/v1\n-> scrypt AAAAAAAAAAAAAAAAAAAAAA 10\n\n-> X25519 A\n\n" + mac), with: [identity])
        }
    }
}

/// age's Bech32 strings for X25519 keys, and age-keygen's identity files.
@Suite struct AgeKeyTextTests {
    /// BIP-173's own valid test strings: the checksum and the regrouping are BIP-173's.
    @Test func bip173ValidStringsDecode() throws {
        let valid = [("a", "A12UEL5L", 0), ("abcdef", "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw", 20),
                     ("split", "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", 30)]
        for (prefix, text, count) in valid {
            let casing = text.first!.isUppercase ? prefix.uppercased() : prefix
            let data = try Array(text.utf8).withUnsafeBytes { try Bech32.decode($0, prefix: Array(casing.utf8)) }
            #expect(data.count == count)
            let again = data.withUnsafeBytes { Bech32.encode(prefix: Array(prefix.utf8), data: $0) }
            #expect(String(decoding: again, as: UTF8.self) == text.lowercased())
        }
    }

    /// age.md's own example pair: the identity of 32 bytes of 0x42 and its recipient.
    @Test func theSpecificationsExampleIdentityGivesItsRecipient() throws {
        let identity = try AgeX25519Identity(encoded: secure("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"))
        #expect(identity.secretKey.withUnsafeBytes { Array($0) } == [UInt8](repeating: 0x42, count: 32))
        #expect(identity.recipient.description == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        #expect(text(identity.encoded) == "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
    }

    @Test func anIdentityRoundTripsThroughItsText() throws {
        let identity = AgeX25519Identity.generate()
        let text = text(identity.encoded)
        #expect(text.hasPrefix("AGE-SECRET-KEY-1") && text.count == 74 && text == text.uppercased())
        let again = try AgeX25519Identity(encoded: secure(text))
        #expect(again.secretKey.isEqual(to: identity.secretKey) && again.recipient == identity.recipient)
        let recipient = identity.recipient.description
        #expect(recipient.hasPrefix("age1") && recipient.count == 62)
        #expect(try AgeX25519Recipient(recipient) == identity.recipient)
    }

    @Test func badKeyTextIsRefusedWithoutRepeatingIt() throws {
        let identity = text(AgeX25519Identity.generate().encoded)
        var flipped = Array(identity.utf8)
        flipped[30] = flipped[30] == UInt8(ascii: "Q") ? UInt8(ascii: "P") : UInt8(ascii: "Q")
        for bad in [String(decoding: flipped, as: UTF8.self), identity.lowercased(), identity.prefix(20) + identity.dropFirst(20).lowercased()] {
            do {
                _ = try AgeX25519Identity(encoded: secure(bad))
                Issue.record("accepted a bad identity")
            } catch {
                #expect(!error.message.contains(String(bad.dropFirst(16).prefix(10))), "the message repeats the key")
                #expect(error.message.hasPrefix("That is not an age identity"))
            }
        }
        #expect(throws: AgeError.invalidRecipient("its Bech32 is malformed")) {
            try AgeX25519Recipient("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwx")
        }
        // A control character where a digit was: only the alphabet's letters have an upper case.
        #expect(throws: AgeError.invalidRecipient("its Bech32 is malformed")) {
            try AgeX25519Recipient("age1zvkyg2lqzraa2lnjvqej32nkuu\u{10}ues2s82hzrye869xeexvn73equnujwj")
        }
        #expect(throws: AgeError.invalidRecipient("an X25519 recipient begins with \"age1\"")) {
            try AgeX25519Recipient("AGE1ZVKYG2LQZRAA2LNJVQEJ32NKUU0UES2S82HZRYE869XEEXVN73EQUNUJWJ")
        }
    }

    @Test func anIdentityFileIsReadAsAgeKeygenWritesIt() throws {
        let a = AgeX25519Identity.generate(), b = AgeX25519Identity.generate()
        let file = "# created: 2026-11-28T06:00:00Z\r\n# public key: \(a.recipient)\n\(text(a.encoded))\n\n\(text(b.encoded))\r\n"
        let read = try AgeFile.identities(inFile: secure(file), plugins: AgePluginHost())
        #expect(read.compactMap { ($0 as? AgeX25519Identity)?.recipient } == [a.recipient, b.recipient])
        #expect(throws: AgeError.invalidIdentity("line 2 of the identity file is not a plugin's identity (AGE-PLUGIN-NAME-1…)")) {
            try AgeFile.identities(inFile: secure("# x\nAGE-PLUGIN-YUBIKEY-1XYZ\n"), plugins: AgePluginHost())
        }
        #expect(throws: AgeError.invalidIdentity("line 2 of the identity file is not an age identity (AGE-SECRET-KEY-1… or AGE-PLUGIN-…)")) {
            try AgeFile.identities(inFile: secure("# x\n\(a.recipient)\n"), plugins: AgePluginHost())
        }
        #expect(throws: AgeError.invalidIdentity("the identity file holds no identity")) {
            try AgeFile.identities(inFile: secure("# nothing\n\n"), plugins: AgePluginHost())
        }
        // The recipients file's reading is the backup's (BackupTests.aRecipientsFileIsReadAsAgeReadsItAndNeverQuoted).
    }
}
