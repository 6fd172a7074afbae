import Foundation
import StellarKeys
import Testing
import TestFixtures

/// `sign-auth --account G…`: three people, each with one signer of a multisig account in their own keystore, sign
/// one Soroban entry in turn; the entry that comes out of the third is byte for byte what stellar-sdk builds for
/// the three signatures (fixtures/multisig-entries.json), each says on whose behalf it signs and beside whom, and
/// an entry the host would refuse is refused before any PIN.
@Suite(.offThePool) struct MultisigAuthorizationCLITests {
    struct Case: Decodable { let name, network, envelope: String; let expiration: UInt32; let signed: [String: String] }
    struct Refusal: Decodable { let name, envelope, why: String; let expiration: UInt32 }
    struct File: Decodable { let account: String; let signers: [String: String]; let envelopes: [Case]; let refusals: [Refusal] }
    static let file = try! JSONDecoder().decode(File.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("multisig-entries.json")))
    static let pin = "582046"

    /// A keystore holding signer `name` of the fixture's account as the identity `name`.
    func person(_ name: String) throws -> (home: KeystoreHome, address: String) {
        let home = try KeystoreHome(inProcess: true)
        let hex = try #require(Self.file.signers[name])
        let seed = try StrKey(kind: .secretSeed, payload: try #require(Hex.bytes(hex)))
        let signup = try home.run(["signup", "--import", "--name", name.lowercased(), "--pin-stdin", "--kdf", "interactive"],
                                  stdin: seed.stringValue + "\n" + Self.pin + "\n")
        try #require(signup.status == 0, "\(signup.stderr)")
        let address = try home.run(["address", "--name", name.lowercased()])
        return (home, address.stdout.trimmingCharacters(in: .newlines))
    }

    func sign(_ envelope: String, as name: String, in home: KeystoreHome, expiration: UInt32) throws -> KeystoreProcess.Result {
        try home.run(["sign-auth", "--name", name.lowercased(), "--account", Self.file.account, "--network", "testnet",
                      "--expiration-ledger", String(expiration), "--pin-stdin"], stdin: Self.pin + "\n" + envelope + "\n")
    }

    @Test func threePeopleSignOneEntryInTurn() throws {
        let people = try ["B", "C", "A"].map { ($0, try person($0)) }
        for fixture in Self.file.envelopes where fixture.name != "a V1 entry of the account" {
            var envelope = fixture.envelope, signed: [String] = [], names: [Character] = []
            for (name, (home, address)) in people {
                let run = try sign(envelope, as: name, in: home, expiration: fixture.expiration)
                #expect(run.status == 0, "\(fixture.name), \(name): \(run.stderr)")
                #expect(run.stderr.contains("  signer      \(name.lowercased()) (\(address)), as a signer of \(Self.file.account)"), "\(run.stderr)")
                // Each after the first sees whose signatures the entry holds already.
                #expect(run.stderr.contains("beside the signature") == !signed.isEmpty, "\(run.stderr)")
                for earlier in signed { #expect(run.stderr.contains(earlier), "\(fixture.name): \(run.stderr)") }
                envelope = run.stdout.trimmingCharacters(in: .newlines)
                signed.append(address)
                names.append(Character(name))
                let set = String(names.sorted())
                #expect(envelope == fixture.signed[set], "\(fixture.name): after \(set)")
            }
        }
    }

    @Test func anEntryTheHostWouldRefuseIsRefusedBeforeAnyPIN() throws {
        let (home, _) = try person("C")
        let before = home.snapshot()
        for refusal in Self.file.refusals {
            // No PIN on standard input: a refusal after the PIN was asked would fail differently.
            let run = try home.run(["sign-auth", "--name", "c", "--account", Self.file.account, "--network", "testnet",
                                    "--expiration-ledger", String(refusal.expiration), refusal.envelope])
            #expect(run.status == 2 && run.stdout.isEmpty && run.stderrLines.count == 1, "\(refusal.name): \(run.stderr)")
            let expected = ["unreadable": "is not an account's Vec[Map{public_key, signature}]", "too many": "holds 20 signatures already",
                            "expiration differs": "already carries signatures valid through ledger"][refusal.why]!
            #expect(run.stderr.contains(expected), "\(refusal.name): \(run.stderr)")
        }
        #expect(home.snapshot() == before)
        // A contract address is not read as an account whose signer this is.
        let contract = try home.run(["sign-auth", "--name", "c", "--account", "CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA",
                                     "--network", "testnet", "--expiration-ledger", "3000000", Self.file.envelopes[0].envelope])
        #expect(contract.status == 2 && contract.stderr.contains("No authorization entry asks for CAS3J7"), "\(contract.stderr)")
    }
}
