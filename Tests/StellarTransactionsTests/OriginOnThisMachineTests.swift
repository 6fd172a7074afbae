import Foundation
import Testing
@testable import StellarKeys
@testable import StellarTransactions
import TestFixtures

/// A SEP-7 request that names a port on this machine as its origin is known as one (SEP-7: `origin_domain` is
/// "a fully qualified domain name"; the domain is the requester's claim). Failed on fd0e85e.
@Suite struct OriginOnThisMachineTests {
    static let sep7 = try! SEP7Fixtures.load()

    /// Issue 32, item 4: the origin's stellar.toml is fetched "https only", and SEP-7 makes `origin_domain` "a fully
    /// qualified domain name". A request that names `127.0.0.1:PORT` or `localhost:PORT` was read, its stellar.toml
    /// fetched over plain http from that port (which any local user can bind), and shown as "verified". The domain
    /// a request names is the requester's claim, unlike the one a person types for web-auth. Now such an origin is
    /// known as one on this machine (`originIsOnThisMachine`), which `verifiedOrigin` refuses unless allowed and the
    /// summary warns of (SEP7CLITests.anOriginOnThisMachineIsRefusedUnlessAllowed).
    @Test func aRequestThatNamesALoopbackPortAsItsOriginIsKnownAsOne() throws {
        let valid = try #require(Self.sep7.cases.first { $0.name == "valid-testnet" })
        let domain = try #require(valid.originDomain)
        #expect(try !TransactionRequest(uri: valid.uri).originIsOnThisMachine)
        for loopback in ["127.0.0.1:8000", "localhost:8000", "127.1.2.3:1"] {
            let uri = valid.uri.replacingOccurrences(of: "origin_domain=" + TransactionRequest.escaped(domain),
                                                     with: "origin_domain=" + TransactionRequest.escaped(loopback))
            try #require(uri != valid.uri)
            #expect(try TransactionRequest(uri: uri).originIsOnThisMachine, "\(loopback)")
        }
        // Any other host with a port is no domain name at all.
        for other in ["example.com:8000", "10.0.0.1:80", "[::1]:80"] {
            let uri = valid.uri.replacingOccurrences(of: "origin_domain=" + TransactionRequest.escaped(domain),
                                                     with: "origin_domain=" + TransactionRequest.escaped(other))
            #expect(throws: TransactionRequestError.badOriginDomain(other), "\(other)") { try TransactionRequest(uri: uri) }
        }
    }
}
