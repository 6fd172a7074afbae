import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
@testable import StellarKeystore
import TestFixtures

/// Signing a Soroban authorization preimage (SEP-43's `signAuthEntry`): compared byte for byte with stellar-sdk's
/// `authorize_entry` over fixtures/auth-preimages.json (fixtures/make-auth-preimages.py), v1 and v2 (CAP-71).
@Suite struct AuthorizationSigningTests {
    struct Case: Decodable { let name, network, preimage, hash, signature: String; let nonce: Int64; let expiration: UInt32 }
    struct File: Decodable { let signer: String; let cases: [Case] }
    static let file = try! Fixtures.load(File.self, "auth-preimages.json")

    let directory = TemporaryDirectory()

    /// The golden key (the fixtures' signer), in a keystore of this test's own, signed in.
    func signer() throws -> Signer {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let keystore = try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore")
        let key = try KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")
        let name = IdentityName("golden")
        let pin = try PIN("270419")
        _ = try keystore.signUp(name: name, kdf: .interactive, key: .imported(key)) { _ in pin }
        let signer = try keystore.signIn(name: name) { pin }
        #expect(signer.address == Self.file.signer)
        return signer
    }

    @Test func signaturesAreStellarSDKs() throws {
        let signer = try signer()
        #expect(Self.file.cases.count == 8)
        for fixture in Self.file.cases {
            let preimage = try AuthorizationPreimage(base64: fixture.preimage)
            let network = try StellarNetwork(named: fixture.network)
            #expect(Hex.string(preimage.hash) == fixture.hash, "\(fixture.name)")
            #expect(preimage.nonce == fixture.nonce && preimage.signatureExpirationLedger == fixture.expiration)
            #expect((preimage.boundAddress == Self.file.signer) == fixture.name.hasPrefix("v2"), "\(fixture.name)")
            #expect(Hex.string(try signer.signAuthorization(AuthorizationPayload(preimage: preimage), on: network)) == fixture.signature, "\(fixture.name)")
        }
    }

    @Test func aPreimageForAnotherNetworkIsRefused() throws {
        let signer = try signer()
        let fixture = try #require(Self.file.cases.first { $0.network == "testnet" })
        let preimage = try AuthorizationPreimage(base64: fixture.preimage)
        for other in [StellarNetwork.public, .futurenet, try StellarNetwork(passphrase: "keystore fixture network ; 2026")] {
            #expect(throws: AuthorizationError.otherNetwork(expected: other.shown)) {
                try signer.signAuthorization(AuthorizationPayload(preimage: preimage), on: other)
            }
        }
    }

    /// The summary names the network, the nonce, the expiry, what the signature binds and the whole invocation
    /// tree with its arguments.
    @Test func theSummaryShowsTheTree() throws {
        let swap = try #require(Self.file.cases.first { $0.name == "v2 nested swap" })
        let lines = try AuthorizationPreimage(base64: swap.preimage).lines(on: .public)
        #expect(lines.first == "Authorization on \(StellarNetwork.public.shown)")
        #expect(lines.contains("  hash        \(swap.hash)"))
        #expect(lines.contains("  binds       the address \(Self.file.signer) (CAP-71)"))
        #expect(lines.contains("  nonce       1001"))
        #expect(lines.contains("  expires     after ledger 123457"))
        let calls = lines.filter { $0.contains("invokes") }
        #expect(calls.count == 2)
        #expect(calls[0].hasPrefix("  invokes     CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA \"swap\"("))
        #expect(calls[0].contains("u64 7"), "\(calls[0])")
        #expect(calls[1].hasPrefix("    invokes     CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE \"transfer\"("))
        #expect(calls[1].contains("i128 -1"), "\(calls[1])")
        let v1 = try #require(Self.file.cases.first { $0.name == "v1 create contract" })
        let created = try AuthorizationPreimage(base64: v1.preimage).lines(on: .testnet)
        #expect(created.contains("  binds       any address whose credentials carry this nonce"))
        #expect(created.contains { $0.hasPrefix("  invokes     create ") && $0.contains("0001020304") && $0.contains("\"hello\"") }, "\(created)")
    }

    /// A tree whose calls carry one SCVal of every arm (make-tx-envelopes.py's `every_scval`) reads, and shows each
    /// value by its kind at both levels.
    @Test func everyArmReadsInAnAuthTree() throws {
        let fixture = try #require(Self.file.cases.first { $0.name == "v1 every arm" })
        let calls = try AuthorizationPreimage(base64: fixture.preimage).lines(on: .testnet).filter { $0.contains("invokes") }
        #expect(calls.count == 2)
        for call in calls {
            for shown in ["bool true", "void", "error contract code 7", "u32 4294967295", "i64 -9223372036854775808",
                          "u256 115792089237316195423570985008687907853269984665640564039457584007913129639935",
                          "string \"caf\u{e9} \u{2603}\"", "symbol \"transfer\"", "contract instance", "nonce 42"] {
                #expect(call.contains(shown), "\(shown) in \(call)")
            }
        }
    }

    /// Strict decoding: other preimage kinds, trailing or missing bytes, and text that is not base64.
    @Test func badPreimagesAreRefused() throws {
        let bytes = try #require(Base64.decode(Array(Self.file.cases[0].preimage.utf8)))
        #expect(throws: AuthorizationError.empty) { try AuthorizationPreimage(base64: " \n") }
        #expect(throws: AuthorizationError.notBase64) { try AuthorizationPreimage(base64: "not base64!") }
        // ENVELOPE_TYPE_CONTRACT_ID (8) and ENVELOPE_TYPE_TX (2) are preimages of other things.
        #expect(throws: AuthorizationError.notAnAuthorization("ENVELOPE_TYPE_CONTRACT_ID")) {
            try AuthorizationPreimage(xdr: [0, 0, 0, 8] + bytes.dropFirst(4))
        }
        #expect(throws: AuthorizationError.notAnAuthorization("ENVELOPE_TYPE_TX")) {
            try AuthorizationPreimage(xdr: [0, 0, 0, 2] + bytes.dropFirst(4))
        }
        #expect(throws: AuthorizationError.self) { try AuthorizationPreimage(xdr: bytes + [0, 0, 0, 0]) }
        #expect(throws: AuthorizationError.self) { try AuthorizationPreimage(xdr: Array(bytes.dropLast(4))) }
        // v1 bytes labelled v2 read the contract address as the bound address, then fail on what follows.
        #expect(throws: AuthorizationError.self) { try AuthorizationPreimage(xdr: [0, 0, 0, 10] + bytes.dropFirst(4)) }
        #expect(try AuthorizationPreimage(xdr: bytes).bytes == bytes)
    }
}
