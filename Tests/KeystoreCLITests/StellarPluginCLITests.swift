import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// `stellar keystore …`: stellar-cli runs `stellar-keystore` from PATH with the remaining arguments. Run under that
/// name (a symlink, as the README installs it), keystore is the same tool; only its own name in usage lines and help
/// reads `stellar keystore`.
@Suite(.offThePool) struct StellarPluginCLITests {
    /// A directory holding `stellar-keystore`, a symlink to the built binary, removed with the value.
    final class PluginLink {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-plugin-\(UUID().uuidString)").path
        var path: String { directory + "/stellar-keystore" }
        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: KeystoreProcess.binary)
        }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Each help text is the recorded one (fixtures/cli) with exactly the tool's name changed, in the usage line
    /// and in the pointer to `help`; nothing else differs.
    @Test(arguments: CommandTableTests.helps)
    func helpNamesStellarKeystore(_ command: String) throws {
        let link = try PluginLink()
        let file = command.isEmpty ? "help.txt" : "help-\(command.replacingOccurrences(of: " ", with: "-")).txt"
        let recorded = try String(contentsOf: KeystoreHome.fixtures.appendingPathComponent("cli/\(file)"), encoding: .utf8)
        let expected = recorded
            .replacingOccurrences(of: "USAGE: keystore ", with: "USAGE: stellar keystore ")
            .replacingOccurrences(of: "See 'keystore help ", with: "See 'stellar keystore help ")
        #expect(expected != recorded)
        let words = command.split(separator: " ").map(String.init)
        let result = try KeystoreProcess(program: link.path).run(words + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout == expected)
    }

    /// The same commands give the same output, exit code and vault files under either name: a signup and a
    /// signature through the plugin name, checked with plain `keystore`, and a usage error.
    @Test func behavesAsKeystore() throws {
        let link = try PluginLink()
        let home = try KeystoreHome()
        var plugin = home.keystore
        plugin.program = link.path
        let golden = KeystoreHome.golden
        let signup = try plugin.run(["signup", "--name", "alice", "--import", "--pin-stdin", "--kdf", "interactive"],
                                    stdin: Array("\(golden.seed)\n\(golden.pin)\n".utf8))
        #expect(signup.status == 0, "\(signup.stderr)")
        for arguments in [["address", "--name", "alice"], ["list"], ["strkey", "decode", golden.address]] {
            let viaPlugin = try plugin.run(arguments), direct = try home.run(arguments)
            #expect(viaPlugin.status == 0 && viaPlugin.stdout == direct.stdout && viaPlugin.stderr == direct.stderr, "\(arguments)")
        }
        let signArguments = ["sign", "--name", "alice", "--hex", "00ff", "--pin-stdin"]
        let signed = try plugin.run(signArguments, stdin: Array("\(golden.pin)\n".utf8))
        let signedDirect = try home.run(signArguments, stdin: "\(golden.pin)\n")
        #expect(signed.status == 0 && signed.stdout == signedDirect.stdout)
        #expect(!signed.stdout.isEmpty)

        let wrong = try plugin.run(["sign", "--bogus"]), direct = try home.run(["sign", "--bogus"])
        #expect(wrong.status == 64 && wrong.status == direct.status && wrong.stderr == direct.stderr)
    }
}
