import Foundation
import StellarKeys
import Testing
import TestFixtures

/// The multi-signature recipe (docs/guides/multisig.md, once the README's "Multi-signature" section), run as written. Each `# On NAME's machine`
/// block runs in bash with NAME's own keystore and working directory; the files its first line names ("with
/// payment.xdr") are the only ones carried over from the machine that made them. stellar-cli, curl and the network
/// are shell functions that answer with fixtures/readme-multisig.json (made by stellar-sdk: the unsigned payment,
/// the treasury's Horizon JSON) and fixtures/multisig-entries.json (the simulated Soroban call), and keep what
/// would have been sent. What each machine makes must be what stellar-sdk makes of the same signatures, and every
/// line of the guide's output excerpts must be a line the commands printed.
@Suite(.offThePool) struct ReadmeMultisigTests {
    struct Person: Decodable { let secretSeed, address: String }
    struct Fixture: Decodable {
        let people: [String: Person]
        let treasury, supplier, payment, combined, trimmed, shareURI: String
        let signed: [String: String]
    }
    struct Entries: Decodable {
        struct Case: Decodable { let name, envelope: String; let signed: [String: String] }
        let account: String
        let signers: [String: String]
        let envelopes: [Case]
    }

    static let pin = "582046"
    let fixture = try! JSONDecoder().decode(Fixture.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("readme-multisig.json")))
    let entries = try! JSONDecoder().decode(Entries.self, from: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("multisig-entries.json")))

    /// The recipe: the whole of docs/guides/multisig.md (once the README's "Multi-signature" section).
    static func section() throws -> String {
        try ReadmeTests.document("docs/guides/multisig.md")
    }

    /// The section's `sh` blocks that begin `# On NAME's machine`, in order, with NAME.
    static func machineBlocks(in section: String) -> [(person: String, header: String, script: String)] {
        var blocks: [(person: String, header: String, script: String)] = []
        for block in section.components(separatedBy: "```sh\n").dropFirst().map({ $0.components(separatedBy: "```")[0] }) {
            let header = String(block.prefix { $0 != "\n" })
            guard header.hasPrefix("# On "), let end = header.range(of: "'s machine") else { continue }
            blocks.append((String(header[header.index(header.startIndex, offsetBy: 5)..<end.lowerBound]), header, block))
        }
        return blocks
    }

    /// Stand-ins for what needs the network, each checking that it was asked what the README asks: stellar-cli
    /// builds (the fixtures' envelopes), simulates (as given: the fixture is simulated already) and sends (kept in
    /// $SENT); curl answers Horizon's URL for the treasury; keystore is given the PIN on a descriptor, as a person
    /// types it at the terminal.
    static let prelude = #"""
        set -eo pipefail
        stellar() {
          case "$1 $2" in
            "tx new")
              [[ " $* " == *" payment --source-account $TREASURY_ID --destination $SUPPLIER_ID --amount 1000000000 --network testnet --build-only "* ]] || { echo "stellar: unexpected $*" >&2; return 9; }
              cat "$FIXTURES/payment.xdr" ;;
            "contract invoke")
              [[ " $* " == *" --build-only -- transfer --from $TREASURY_ID "* ]] || { echo "stellar: unexpected $*" >&2; return 9; }
              cat "$FIXTURES/simulated.xdr" ;;
            "tx simulate") cat ;;
            "tx send") cat > "$SENT" ;;
            *) echo "stellar: unexpected $*" >&2; return 9 ;;
          esac
        }
        curl() {
          [ "${@: -1}" = "https://horizon-testnet.stellar.org/accounts/$TREASURY_ID" ] || { echo "curl: unexpected $*" >&2; return 9; }
          cat "$FIXTURES/treasury.json"
        }
        keystore() {
          case "$1" in
            sign-tx|sign-auth) command keystore "$@" --pin-fd 3 3<"$PIN_FILE" ;;
            *) command keystore "$@" ;;
          esac
        }

        """#

    @Test func threePeopleOnThreeMachinesSignAsTheGuideSays() throws {
        let section = try Self.section()
        let blocks = Self.machineBlocks(in: section)
        #expect(blocks.map(\.person) == ["alice", "bob", "carol", "alice", "alice", "bob"], "\(blocks.map(\.header))")
        // The Soroban part signs multisig-entries.json's entry: its signers A, B, C must be alice, bob and carol.
        let soroban = try #require(entries.envelopes.first { $0.name == "a V2 entry of the account" })
        #expect(entries.account == fixture.treasury)
        for (letter, name) in [("A", "alice"), ("B", "bob"), ("C", "carol")] {
            let hex = try #require(entries.signers[letter])
            let seed = try StrKey(kind: .secretSeed, payload: try #require(Hex.bytes(hex)))
            #expect(seed.stringValue == fixture.people[name]?.secretSeed, "\(name)")
        }

        try ReadmeTests.withScratch { scratch in
            let fixtures = scratch + "/network"
            try FileManager.default.createDirectory(atPath: fixtures, withIntermediateDirectories: true)
            try (fixture.payment + "\n").write(toFile: fixtures + "/payment.xdr", atomically: false, encoding: .utf8)
            try (soroban.envelope + "\n").write(toFile: fixtures + "/simulated.xdr", atomically: false, encoding: .utf8)
            let raw = try JSONSerialization.jsonObject(with: Data(contentsOf: KeystoreHome.fixtures.appendingPathComponent("readme-multisig.json"))) as? [String: Any]
            try JSONSerialization.data(withJSONObject: try #require(raw?["treasuryAccount"])).write(to: URL(fileURLWithPath: fixtures + "/treasury.json"))

            // Each person: a keystore holding only their own key, a working directory, and their PIN in a file.
            var machines: [String: (home: KeystoreHome, work: String)] = [:]
            for (name, person) in fixture.people {
                let home = try KeystoreHome()
                let signup = try home.run(["signup", "--import", "--name", name, "--kdf", "interactive", "--pin-stdin"],
                                          stdin: person.secretSeed + "\n" + Self.pin + "\n")
                try #require(signup.status == 0 && signup.stdout == person.address + "\n", "\(signup.stderr)")
                let work = scratch + "/" + name
                try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                _ = FileManager.default.createFile(atPath: work + "/.pin", contents: Data((Self.pin + "\n").utf8), attributes: [.posixPermissions: 0o600])
                machines[name] = (home, work)
            }

            var printed: [String] = []
            for block in blocks {
                let machine = try #require(machines[block.person])
                // The files the block's first line says it is given, from the one machine that made each.
                for file in Self.fileNames(in: block.header) {
                    let makers = machines.filter { FileManager.default.fileExists(atPath: $0.value.work + "/" + file) && $0.key != block.person }
                    try #require(makers.count == 1, "\(block.header): \(file) was made on \(makers.keys.sorted())")
                    try FileManager.default.copyItem(atPath: makers.first!.value.work + "/" + file, toPath: machine.work + "/" + file)
                }
                var bash = machine.home.keystore
                bash.program = "/bin/bash"
                bash.environment["PATH"] = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
                bash.environment["FIXTURES"] = fixtures
                bash.environment["SENT"] = scratch + "/sent.xdr"
                bash.environment["PIN_FILE"] = machine.work + "/.pin"
                bash.environment["TREASURY_ID"] = fixture.treasury
                bash.environment["SUPPLIER_ID"] = fixture.supplier
                for variable in ["STELLAR_NETWORK", "STELLAR_NETWORK_PASSPHRASE", "KEYSTORE_SESSION", "KEYSTORE_AGENT"] {
                    bash.environment[variable] = .some(nil)
                }
                let run = try bash.run(["-c", Self.prelude + "cd '\(machine.work)'\n" + block.script])
                try #require(run.status == 0, "\(block.header)\n\(run.stdout)\n\(run.stderr)")
                printed += (run.stdout + run.stderr).split(separator: "\n").map(String.init)
            }

            func file(_ person: String, _ name: String) throws -> String {
                try String(contentsOfFile: machines[person]!.work + "/" + name, encoding: .utf8)
            }
            // Byte for byte what stellar-sdk makes of the same signatures.
            #expect(try file("alice", "payment.uri") == fixture.shareURI + "\n")
            for name in ["alice", "bob", "carol"] {
                #expect(try file(name, "payment.\(name).xdr") == fixture.signed[name]! + "\n", "\(name)'s copy")
            }
            #expect(try file("alice", "payment.all.xdr") == fixture.combined + "\n")
            #expect(try file("alice", "payment.signed.xdr") == fixture.trimmed + "\n")
            #expect(try String(contentsOfFile: scratch + "/sent.xdr", encoding: .utf8) == fixture.trimmed + "\n", "what was sent")
            #expect(try file("bob", "auth.signed.xdr") == soroban.signed["AB"]! + "\n")

            // Every line of the section's output excerpts was printed by the commands, and each excerpt's command
            // is one of the recipe's.
            let excerpts = section.components(separatedBy: "\n```\n$ ").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
            #expect(excerpts.count == 5)
            let scripts = blocks.map(\.script).joined(separator: "\n")
            for excerpt in excerpts {
                let lines = excerpt.split(separator: "\n").map(String.init)
                #expect(scripts.contains(lines[0] + "\n"), "not a command of the recipe: \(lines[0])")
                for line in lines.dropFirst() where line != "…" {
                    let wasPrinted = printed.contains(line)
                    #expect(wasPrinted, "not printed: \(line)")
                }
            }

            // The prose's "not checked" line: combining without an account file on a machine without the signers.
            let stranger = try KeystoreHome()
            var combine = stranger.keystore
            combine.program = "/bin/bash"
            combine.environment["PATH"] = URL(fileURLWithPath: KeystoreProcess.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
            let blind = try combine.run(["-c", "cd '\(machines["alice"]!.work)' && keystore combine-tx --network testnet payment.alice.xdr payment.bob.xdr payment.carol.xdr"])
            #expect(blind.status == 0 && blind.stdout == fixture.combined + "\n", "\(blind.stderr)")
            let quoted = try #require(section.range(of: "`not checked: ").map { section[$0.lowerBound...].dropFirst().prefix { $0 != "`" } })
            #expect(blind.stderr.contains("keystore: " + quoted + "\n"), "\(blind.stderr)")
        }
    }

    /// The `.xdr` and `.uri` files a block's first line names.
    static func fileNames(in header: String) -> [String] {
        header.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init).filter { $0.hasSuffix(".xdr") || $0.hasSuffix(".uri") }
    }
}
