import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// C2SP's age test vectors (fixtures/age/README.md says where from): every file decrypts, or fails, as the vector
/// expects, and the failure is of the kind it names: a header that does not parse is never reported as a wrong
/// key, an altered header never as an altered payload.
@Suite struct AgeTestkitTests {
    static let directory = Fixtures.root.appendingPathComponent("age/testkit")
    static let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()

    @Test func everyVectorIsHere() {
        // 124 of CCTV's 143: the 19 post-quantum ones are left out (fixtures/age/README.md).
        #expect(Self.names.count == 124)
    }

    @Test(arguments: names) func vector(_ name: String) throws {
        let vector = try Vector(contentsOf: Self.directory.appendingPathComponent(name))
        var identities: [any AgeIdentity] = []
        for line in vector.values("identity") { identities.append(try AgeX25519Identity(encoded: secure(line))) }
        for line in vector.values("passphrase") { identities.append(AgePassphrase(secure(line))) }
        let expected = try #require(vector.values("expect").first)

        let outcome: String
        switch Result(catching: { () throws(AgeError) in try AgeFile.decrypt(vector.file, with: identities) }) {
        case .success(let plaintext):
            outcome = "success"
            let digest = plaintext.withUnsafeBytes { Sodium.sha256($0) }
            #expect(Hex.string(digest) == vector.values("payload").first, "\(name): the plaintext's SHA-256")
            // The encrypting direction, given the vector's file key and nonce: the same payload, byte for byte.
            let binary = AgeArmor.isArmored(vector.file) ? try AgeArmor.dearmored(vector.file) : vector.file
            let payload = Array(binary[try AgeHeader.parse(binary).payloadOffset...])
            var fileKey = try #require(vector.values("file key").first.flatMap(Hex.bytes))
            let sealed = AgePayload.sealed(plaintext, fileKey: SecureBytes(consuming: &fileKey), nonce: Array(payload.prefix(16)))
            #expect(sealed == payload, "\(name): the payload sealed again")
        case .failure(let error):
            outcome = Self.kind(of: error)
        }
        #expect(outcome == expected, "\(name): \(vector.values("comment").first ?? "")")

        // Every header that parses is written back byte for byte (CCTV's README: a header round trip), the MAC line
        // included: the parse is strict enough that a header has one spelling.
        if let binary = vector.values("armored").first == "yes" ? try? AgeArmor.dearmored(vector.file) : vector.file,
           let header = try? AgeHeader.parse(binary) {
            let written = AgeHeader.encoded(header.stanzas) + Array(" ".utf8) + AgeBase64.encode(header.mac) + Array("\n".utf8)
            #expect(written[...] == binary[..<header.payloadOffset], "\(name): the header written again")
            #expect(header.authenticatedBytes == binary[..<(header.payloadOffset - 45)])
        }
    }

    /// The testkit's name for the kind of fault each error is.
    static func kind(of error: AgeError) -> String {
        switch error {
        case .notAgeFile, .unsupportedVersion, .malformedHeader, .workFactorTooHigh: "header failure"
        case .malformedArmor: "armor failure"
        case .noMatchingIdentity, .wrongPassphrase: "no match"
        case .headerAltered: "HMAC failure"
        case .payloadAltered, .finalChunkAltered, .truncated, .emptyFinalChunk, .trailingData: "payload failure"
        case .tooLarge, .scryptFailed, .noRecipients, .passphraseNotAlone, .invalidRecipient, .invalidIdentity, .pluginNotFound,
             .pluginFailed, .pluginTimedOut, .pluginBrokeProtocol, .pluginRefused: "\(error)"
        }
    }

    /// One vector: `key: value` lines, an empty line, then the age file (zlib-compressed when the header says so).
    struct Vector {
        var header: [(String, String)] = []
        var file: [UInt8]

        init(contentsOf url: URL) throws {
            let bytes = Array(try Data(contentsOf: url))
            var offset = 0
            var header: [(String, String)] = []
            while true {
                let end = try #require(bytes[offset...].firstIndex(of: UInt8(ascii: "\n")))
                defer { offset = end + 1 }
                if end == offset { break }
                let line = String(decoding: bytes[offset..<end], as: UTF8.self)
                let parts = line.split(separator: ": ", maxSplits: 1)
                try #require(parts.count == 2, "a vector's header line: \(line)")
                header.append((String(parts[0]), String(parts[1])))
            }
            self.header = header
            let body = Array(bytes[offset...])
            file = header.contains { $0 == ("compressed", "zlib") } ? try Zlib.inflated(body) : body
        }

        func values(_ key: String) -> [String] { header.filter { $0.0 == key }.map(\.1) }
    }

    /// zlib's `uncompress`, from the system's libz.so.1 (which Debian always has): Foundation on Linux has no
    /// decompression, and the vectors of many chunks are stored compressed.
    enum Zlib {
        typealias Uncompress = @convention(c) (
            UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt>?, UnsafePointer<UInt8>?, UInt
        ) -> Int32

        static func inflated(_ data: [UInt8]) throws -> [UInt8] {
            let library = try #require(dlopen("libz.so.1", RTLD_NOW), "libz.so.1 is not on this machine")
            defer { dlclose(library) }
            let uncompress = unsafeBitCast(try #require(dlsym(library, "uncompress")), to: Uncompress.self)
            var capacity = max(1 << 20, data.count * 8)
            while capacity <= 64 << 20 {
                var out = [UInt8](repeating: 0, count: capacity)
                var length = UInt(capacity)
                let status = out.withUnsafeMutableBufferPointer { out in
                    data.withUnsafeBufferPointer { uncompress(out.baseAddress, &length, $0.baseAddress, UInt($0.count)) }
                }
                if status == 0 { return Array(out.prefix(Int(length))) }
                try #require(status == -5, "zlib's uncompress failed (\(status))")  // Z_BUF_ERROR: a larger buffer
                capacity *= 4
            }
            throw AgeError.tooLarge(limit: 64 << 20)
        }
    }
}
