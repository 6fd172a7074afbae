import Foundation
import Glibc
import Testing
import TestFixtures

/// An input file that is a FIFO nobody writes to ends at once in one line, exit 2 (issue 41, 7.9): before, `open`
/// waited for a writer forever. A pipe with a writer (`<(…)`) is read; a directory or a device is refused; standard
/// input still works.
@Suite(.offThePool) struct NonRegularInputCLITests {
    let home = try! KeystoreHome(inProcess: true)
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
        #expect(result.stderrLines == ["keystore: Nothing was written to \(path) (a FIFO or pipe with no writer, or an empty one)."], "\(result.stderr)",
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
        #expect(dir.status == 2 && dir.stderrLines == ["keystore: \(directory) is a directory, not a regular file or a pipe; it was not read."], "\(dir.stderr)")
        let payment = try #require(TransactionCLITests.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        let piped = try home.run(["show-tx", "--network", "testnet"], stdin: payment.envelope + "\n", timeout: 20)
        #expect(piped.status == 0, "\(piped.stderr)")
    }

    /// A pipe with a writer is read as a file is: `--account-file <(curl …)`, `--file <(…)`.
    @Test func aPipeWithAWriterIsRead() throws {
        let payment = try #require(TransactionCLITests.envelopes.first { $0.name.hasPrefix("payment_native (testnet") })
        let accounts = home.path + "/A.json"
        try #require(Multisig.loaded.accounts["A"]).write(to: URL(fileURLWithPath: accounts))
        let fromFiles = try home.run(["show-tx", "--network", "testnet", "--account-file", accounts, payment.envelope])
        try #require(fromFiles.status == 0, "\(fromFiles.stderr)")
        var bash = home.keystore
        bash.program = "/bin/bash"
        let script = "sleep 0.2; exec '\(KeystoreProcess.binary)' show-tx --network testnet --account-file <(sleep 0.3; cat '\(accounts)') "
            + "--file <(echo '\(payment.envelope)')"
        let throughPipes = try bash.run(["-c", script], timeout: 20)
        #expect(throughPipes.status == 0 && throughPipes.stdout == fromFiles.stdout, "\(throughPipes.stderr)")
    }
}
