import Foundation
import Testing
@testable import StellarKeys
@testable import StellarKeystore
import TestFixtures

/// A session names its identity, whatever else the keystore holds (found in issue 31's review): `signingKey(as:keys:)` looked for a P-256 vault named "default" before anything
/// else, even when no name is given and a session names the identity; a keystore without a "default" identity
/// could then no longer sign through a session without naming the identity.
@Suite struct SessionWithoutDefaultIdentityTests {
    let directory = TemporaryDirectory()
    let pin = try! PIN("270419")

    func keystore() throws -> Keystore {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return try Keystore(directory: directory.path + "/keys", sessionDirectory: directory.path + "/run/keystore", warnings: { _ in })
    }

    @Test func aSessionSignsWithoutANameWhenNoDefaultIdentityExists() throws {
        let keystore = try keystore()
        let created = try keystore.signUp(name: IdentityName("alice"), kdf: .interactive) { _ in pin }
        let token = try keystore.startSession(name: created.name, ttl: .seconds(60)) { pin }
        defer { _ = try? keystore.endSession(token) }
        // Before issue 31 this found the session's identity (alice); the session alone names it.
        let key = try keystore.signingKey(as: nil, keys: .automatic(agent: nil, session: token.stringValue, pinAvailable: false))
        #expect(key.name == created.name && key.source == .session)
    }
}
