import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// Tab completion as bash does it: the script `keystore --generate-completion-script bash` prints, sourced into a
/// bash of its own, and the function it registers for `keystore` called with the words typed so far, as bash calls
/// it on Tab (issue 28, 9.11).
@Suite(.offThePool) struct CompletionCLITests {
    /// Sources the script, calls the function `complete -p keystore` names, and prints what it offers, one a line.
    static let harness = #"""
        keystore="$1"; shift
        source <("$keystore" --generate-completion-script bash)
        function=$(complete -p keystore | sed -n 's/.* -F \([^ ]*\) keystore$/\1/p')
        COMP_WORDS=("$keystore" "$@")
        COMP_CWORD=$#
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        "$function" keystore "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf '%s\n' "${COMPREPLY[@]}"
        """#

    /// What bash offers after `keystore WORDS…` with the cursor at the end of the last word ("" for a new word).
    static func offered(_ words: [String], in home: KeystoreHome, environment: [String: String?] = [:]) throws -> [String] {
        var bash = home.keystore
        bash.program = "bash"
        for (key, value) in environment { bash.environment[key] = value }
        let result = try bash.run(["-c", harness, "bash", KeystoreProcess.binary] + words)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(words): exit \(result.status): \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    @Test func aCommandThatIsThePrefixOfOthersOffersThemAll() throws {
        let home = try KeystoreHome(inProcess: true)
        #expect(Set(try Self.offered(["sign"], in: home)) == ["sign", "signup", "sign-message", "sign-tx", "sign-auth"])
        #expect(Set(try Self.offered(["sign-"], in: home)) == ["sign-message", "sign-tx", "sign-auth"])
        #expect(try Self.offered(["sign-t"], in: home) == ["sign-tx"])
        // A finished command with a space after it goes on to that command's options.
        #expect(Set(try Self.offered(["sign", "--ba"], in: home)) == ["--batch", "--base64"])
    }

    @Test func anAliasIsACommandToo() throws {
        let home = try KeystoreHome(inProcess: true)
        #expect(try Self.offered(["who"], in: home) == ["whoami"])
        #expect(try Self.offered(["whoami", "--na"], in: home) == ["--name"])
        #expect(try Self.offered(["address", "--na"], in: home) == ["--name"])
    }

    @Test func networkOffersTheNetworks() throws {
        let home = try KeystoreHome(inProcess: true)
        for command in ["sign-tx", "show-tx", "combine-tx", "sign-auth", "web-auth"] {
            #expect(Set(try Self.offered([command, "--network", ""], in: home)) == ["public", "testnet", "futurenet", "mainnet", "pubnet"],
                    "\(command)")
        }
        #expect(try Self.offered(["sign-tx", "--network", "te"], in: home) == ["testnet"])
    }

    @Test func nameOffersTheIdentitiesInTheKeystore() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        try FileManager.default.copyItem(atPath: home.vaultPath(KeystoreHome.golden.name), toPath: home.path + "/work.vault")
        try Data().write(to: URL(fileURLWithPath: home.path + "/notes.txt"))
        #expect(Set(try Self.offered(["address", "--name", ""], in: home)) == [KeystoreHome.golden.name, "work"])
        #expect(try Self.offered(["sign-tx", "--name", "w"], in: home) == ["work"])
        #expect(try Self.offered(["whoami", "--name", "go"], in: home) == [KeystoreHome.golden.name])
        // --home, typed before it, says which keystore.
        let other = try KeystoreHome(inProcess: true)
        try FileManager.default.copyItem(atPath: home.vaultPath(KeystoreHome.golden.name), toPath: other.path + "/elsewhere.vault")
        #expect(try Self.offered(["login", "--home", other.path, "--name", ""], in: home) == ["elsewhere"])
    }

    /// A completion never prompts and never prints an error: a keystore that is missing, unreadable or not
    /// configured offers nothing, quietly.
    @Test func aKeystoreThatCannotBeReadOffersNothingQuietly() throws {
        let home = try KeystoreHome(inProcess: true)
        try home.addGolden()
        #expect(try Self.offered(["address", "--name", ""], in: home, environment: ["KEYSTORE_HOME": home.path + "/missing"]).isEmpty)
        #expect(try Self.offered(["address", "--name", ""], in: home,
                                 environment: ["KEYSTORE_HOME": nil, "XDG_DATA_HOME": nil, "HOME": nil]).isEmpty)
        if geteuid() != 0 {
            chmod(home.path, 0o000)
            defer { chmod(home.path, 0o700) }
            #expect(try Self.offered(["address", "--name", ""], in: home).isEmpty)
        }
        // argument-parser's hidden entry, called as the script calls it, prints the names and nothing else.
        let direct = try home.run(["---completion", "address", "--", "--name", "3", "0", "keystore", "address", "--name", ""])
        #expect(direct.status == 0 && direct.stderr.isEmpty && direct.stdout == KeystoreHome.golden.name + "\n",
                "exit \(direct.status): \(direct.stdout) \(direct.stderr)")
    }
}
