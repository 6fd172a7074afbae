import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// stellar-cli's plaintext identity files, read by the library: the seed goes from the file into guarded memory
/// and nowhere else, and only a file of the size stellar-cli writes is read at all (issue 28, item 6).
@Suite struct StellarCLIImportTests {
    let directory = TemporaryDirectory()
    var config: String { directory.path + "/stellar" }

    /// Writes `bytes` as identity/NAME.toml straight from guarded memory, so that the test itself never puts a
    /// copy of the secret in ordinary memory.
    func plant(_ name: String, _ bytes: SecureBytes) throws -> String {
        try FileManager.default.createDirectory(atPath: config + "/identity", withIntermediateDirectories: true)
        let path = "\(config)/identity/\(name).toml"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        try #require(written == bytes.count)
        return path
    }

    /// `secret_key = "S…"` for `keyPair`, built in guarded memory, after a comment line of `comment` bytes and
    /// before one of `padding`.
    func secretKeyFile(_ keyPair: KeyPair, comment: Int = 0, padding: Int = 0) -> SecureBytes {
        let seed = keyPair.secretSeedStrKey()
        let head = (comment > 0 ? Array(repeating: UInt8(ascii: "#"), count: comment - 1) + [0x0A] : []) + Array("secret_key = \"".utf8), tail = Array("\"\n".utf8) + Array(repeating: UInt8(ascii: "#"), count: padding)
        return SecureBytes(count: head.count + seed.count + tail.count) { out in
            out.copyBytes(from: head)
            seed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[head.count...]).copyMemory(from: $0) }
            UnsafeMutableRawBufferPointer(rebasing: out[(head.count + seed.count)...]).copyBytes(from: tail)
        }
    }

    func importAll(_ keystore: Keystore) throws -> [StellarCLIImportResult] {
        try keystore.importStellarCLI(from: config, names: [], pin: { _ in try PIN("270419") }, kdf: .interactive, deletePlaintext: false)
    }

    /// Reading an identity file and parsing it, as the import does, leaves the seed in guarded memory only: right
    /// after, no writable memory of this process (heap, stacks, freed blocks) holds it or either half of it.
    /// Guarded buffers are read-only once filled, so the scan skips them, the test's own copy of the seed included.
    /// The scan runs before anything else allocates, so that a freed block still holds what was left in it; even
    /// so, a pass means no copy was found at that moment, not that none was ever made.
    @Test func readingAnIdentityFileLeavesNoCopyOfTheSeedInWritableMemory() throws {
        let keyPair = KeyPair.random()
        let seed = keyPair.secretSeedStrKey()
        let half = seed.count / 2
        let needles = [0..<seed.count, 0..<half, half..<seed.count]
        // The secret a kilobyte into the file: a block freed by the reader is reused from its start.
        let path = try plant("alice", secretKeyFile(keyPair, comment: 1024))
        let read = try StellarCLIKeyFile.read(path)
        let found = try seed.withUnsafeBytes { seed in
            try WritableMemory.scan { region in
                needles.compactMap { range in
                    let needle = UnsafeRawBufferPointer(rebasing: seed[range])
                    return WritableMemory.memmem(region.baseAddress, region.count, needle.baseAddress, needle.count) == nil ? nil : range
                }
            }
        }
        #expect(found.isEmpty, "seed bytes found in writable memory: \(found.prefix(3))")
        guard case .secretKey(let secret)? = read?.identity else { Issue.record("not read as a secret key"); return }
        #expect(secret.isEqual(to: seed))
    }

    /// stellar-cli writes a few short lines (a 24-word phrase and an account is under 300 bytes): a larger file is
    /// refused before a byte of it is read, and no vault is made.
    @Test func anIdentityFileOverTheBoundIsRefusedUnread() throws {
        let keyPair = KeyPair.random()
        let unpadded = secretKeyFile(keyPair).count
        _ = try plant("big", secretKeyFile(keyPair, padding: StellarCLIKeyFile.maximumSize + 1 - unpadded))
        let keystore = try Keystore(directory: directory.path + "/keys")
        let results = try importAll(keystore)
        #expect(results.map(\.outcome) == [.failed("\(config)/identity/big.toml: it is \(StellarCLIKeyFile.maximumSize + 1) bytes, far too large")])
        #expect(!keystore.vaults.exists(IdentityName("big")))
    }

    /// The reader hands back guarded memory holding exactly the file, with the file's identity; refuses a file over
    /// its limit and anything that is not a regular file; and says nil for a missing one.
    @Test func theSecretReaderReturnsGuardedBytesAndRefusesOversizedFiles() throws {
        let keyPair = KeyPair.random()
        let content = secretKeyFile(keyPair)
        let path = try plant("alice", content)
        let read = try #require(try AtomicFile.readSecret(path, limit: content.count))
        #expect(read.bytes.isEqual(to: content))
        var info = stat()
        try #require(stat(path, &info) == 0)
        #expect(AtomicFile.FileIdentity(read.status) == AtomicFile.FileIdentity(info))
        #expect(throws: FileError.tooLarge(path: path, size: content.count)) { try AtomicFile.readSecret(path, limit: content.count - 1) }
        let fifo = config + "/identity/fifo.toml"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: FileError.notRegular(path: fifo, kind: "a FIFO")) { try AtomicFile.readSecret(fifo, limit: 4096) }
        #expect(try AtomicFile.readSecret(config + "/identity/none.toml", limit: 4096) == nil)
        let empty = try plant("empty", SecureBytes(count: 0) { _ in })
        #expect(try #require(try AtomicFile.readSecret(empty, limit: 4096)).bytes.count == 0)
    }
}
