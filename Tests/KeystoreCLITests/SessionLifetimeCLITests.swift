import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// What sessions outlive and what they do not: key and PIN changes, and how long they last. Each test was written failing first (issue 11 and later).
@Suite(.offThePool) struct SessionLifetimeCLITests: CLIExpectations {
    // MARK: Sessions across key and PIN changes
    @Test func changePINEndsTheIdentitysSessions() throws {
        let (home, process, token) = try goldenSession()
        defer { withExtendedLifetime(home) {} }  // its deinit removes the keystore the test runs in
        #expect(try signWith(process, token: token).status == 0)
        let change = try process.run(["change-pin", "--name", Self.golden.name, "--pin-stdin", "--new-pin-fd", "3"],
                                     stdin: Array("\(Self.golden.pin)\n".utf8), files: [3: Array("918273\n".utf8)])
        #expect(change.status == 0, "\(change.stderr)")
        expectOneLine(try signWith(process, token: token), status: 9, "session")
    }

    @Test(arguments: [["signup", "--replace", "--kdf", "interactive", "--pin-stdin"],
                      ["recover", "--replace", "--kdf", "interactive", "--pin-stdin"]])
    func replacingAnIdentityEndsItsSessions(_ command: [String]) throws {
        let (home, process, token) = try goldenSession()
        defer { withExtendedLifetime(home) {} }  // its deinit removes the keystore the test runs in
        let phrase = "illness spike retreat truth genius clock brain pass fit cave bargain toe\n"
        let replace = try process.run(command + ["--name", Self.golden.name],
                                      stdin: Array(((command[0] == "recover" ? phrase : "") + "918273\n").utf8))
        #expect(replace.status == 0, "\(replace.stderr)")
        let signed = try signWith(process, token: token)
        expectOneLine(signed, status: 9, "session")
        #expect(signed.stdout.isEmpty, "signed with the old key after the identity was replaced")
    }

    @Test func aSessionIsRefusedOnceItsVaultHoldsAnotherKey() throws {
        let (home, process, token) = try goldenSession()
        let sessionDirectory = home.runtime + "/keystore"
        let files = try FileManager.default.contentsOfDirectory(atPath: sessionDirectory)
        let saved = try files.map { ($0, try Data(contentsOf: URL(fileURLWithPath: "\(sessionDirectory)/\($0)"))) }
        let replace = try process.run(["signup", "--replace", "--kdf", "interactive", "--name", Self.golden.name, "--pin-stdin"],
                                      stdin: Array("918273\n".utf8))
        #expect(replace.status == 0, "\(replace.stderr)")
        // Put the session file back, as if the replace had not ended it: the session must still not sign.
        for (file, bytes) in saved { try bytes.write(to: URL(fileURLWithPath: "\(sessionDirectory)/\(file)")) }
        let signed = try signWith(process, token: token)
        expectOneLine(signed, status: 9, "no longer holds the key")
    }

    // MARK: Session lengths

    @Test func aSessionLengthNeedsAUnit() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        let process = try home.keystoreWithRuntime()
        let bare = try process.run(["login", "--session", "--ttl", "15", "--name", Self.golden.name, "--pin-stdin"],
                                   stdin: Array("\(Self.golden.pin)\n".utf8))
        #expect(bare.status == 64 && bare.stdout.isEmpty, "\(bare.stderr)")
        let minutes = try process.run(["login", "--session", "--ttl", "15s", "--name", Self.golden.name, "--pin-stdin"],
                                      stdin: Array("\(Self.golden.pin)\n".utf8))
        #expect(minutes.status == 0 && minutes.stderr.contains("15 s"), "\(minutes.stderr)")
    }
}
