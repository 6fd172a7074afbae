import Foundation
import Glibc
import Testing

/// An input file that is not a regular file (a FIFO nobody writes to, a directory, a device) is refused at once
/// in one line, exit 2, as `--log` refuses one (issue 41, 7.9): before, `open` waited for a writer forever.
/// Standard input, a pipe, still works.
@Suite(.offThePool) struct NonRegularInputCLITests {
    let home = try! KeystoreHome()
    let name = KeystoreHome.golden.name

    init() throws {
        try home.addGolden()
    }

    /// A FIFO in the test's home, removed with it.
    func fifo() throws -> String {
        let path = home.path + "/in.fifo"
        try #require(mkfifo(path, 0o600) == 0)
        return path
    }

    static func expectRefused(_ result: KeystoreProcess.Result, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 2, "status \(result.status) (137: it waited for a writer): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(result.stderrLines == ["keystore: \(path) is a FIFO, not a regular file; it was not read."], "\(result.stderr)",
                sourceLocation: sourceLocation)
    }

    @Test func aFIFOGivenToCombineTxIsRefused() throws {
        let path = try fifo()
        Self.expectRefused(try home.run(["combine-tx", "--network", "testnet", path], timeout: 5), path)
    }

    @Test func aFIFOGivenAsAnAccountFileIsRefused() throws {
        let path = try fifo()
        let payment = try #require(TransactionCLITests.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        Self.expectRefused(try home.run(["show-tx", "--network", "testnet", "--account-file", path, payment.envelope], timeout: 5), path)
    }

    @Test func aFIFOGivenToSignTxOrShareTxAsFileIsRefused() throws {
        let path = try fifo()
        Self.expectRefused(try home.run(["sign-tx", "--name", name, "--network", "testnet", "--file", path, "--pin-stdin"],
                                        stdin: "\(KeystoreHome.golden.pin)\n", timeout: 5), path)
        Self.expectRefused(try home.run(["share-tx", "--network", "testnet", "--file", path], timeout: 5), path)
    }

    /// A directory is no input either; standard input (a pipe) still is.
    @Test func aDirectoryIsRefusedAndStandardInputStillWorks() throws {
        let directory = home.path + "/dir"
        try #require(mkdir(directory, 0o700) == 0)
        let dir = try home.run(["show-tx", "--network", "testnet", "--file", directory], timeout: 5)
        #expect(dir.status == 2 && dir.stderrLines == ["keystore: \(directory) is a directory, not a regular file; it was not read."], "\(dir.stderr)")
        let payment = try #require(TransactionCLITests.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        let piped = try home.run(["show-tx", "--network", "testnet"], stdin: payment.envelope + "\n", timeout: 20)
        #expect(piped.status == 0, "\(piped.stderr)")
    }
}
