#if !KEYSTORE_FUZZING
import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

/// The starting inputs for each target, made from the published vectors in fixtures/ and from files keystore
/// itself writes. Written once and committed (fuzz/corpus), so that every run starts from the same place.
enum SeedCorpus {
    static func write(to directory: String, fixtures: String = "fixtures") throws {
        for target in FuzzTarget.allCases { mkdir("\(directory)/\(target.rawValue)", 0o755) }
        func save(_ target: FuzzTarget, _ name: String, _ bytes: [UInt8]) throws {
            let folder = "\(directory)/\(target.rawValue)"
            try AtomicFile.write(bytes, to: "\(folder)/seed-\(name)", directory: folder)
        }

        struct StrKeys: Decodable {
            struct Entry: Decodable { var strkey: String }
            var valid: [Entry]
            var invalid: [Entry]
        }
        let strKeys = try JSONDecoder().decode(StrKeys.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/sep23-strkeys.json")))
        for (index, entry) in (strKeys.valid + strKeys.invalid).enumerated() {
            try save(.strkey, "sep23-\(index)", Array(entry.strkey.utf8))
        }

        struct Phrases: Decodable {
            struct Vector: Decodable { var mnemonic: String }
            var vectors: [Vector]
        }
        let phrases = try JSONDecoder().decode(Phrases.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/sep5-mnemonics.json")))
        for (index, vector) in phrases.vectors.enumerated() {
            try save(.mnemonic, "sep5-\(index)", Array(vector.mnemonic.utf8))
        }
        try save(.mnemonic, "mixed-case-tabs", Array("Illness\tSPIKE retreat  truth genius clock brain pass fit cave bargain toe\n".utf8))

        // The golden vaults parse but are too costly to open; fresh ones under the cheapest key derivation open.
        for golden in ["golden-interactive", "golden-mnemonic", "tpm/golden-tpm"] {
            try save(.vault, String(golden.split(separator: "/").last!),
                     try KeystoreFuzz.contents(of: "\(fixtures)/vaults/\(golden).vault"))
        }
        let cheap = KDFParameters(opsLimit: 1, memLimit: 8192)
        let pin = try PIN(FuzzTarget.seedPIN)
        let keyPair = KeyPair.random()
        try save(.vault, "cheap-v1", try Vault.seal(keyPair, name: IdentityName("fuzz"), pin: pin, kdf: cheap).encoded())
        var phrase = Array(phrases.vectors[0].mnemonic.utf8)
        let mnemonic = try Mnemonic(SecureBytes(consuming: &phrase))
        let root = AccountRoot(bip39Seed: try mnemonic.seed())
        let account = try root.keyPair(account: 3)
        try save(.vault, "cheap-v2", try Vault.seal(account, root: (root, 3), name: IdentityName("fuzz"), pin: pin, kdf: cheap).encoded())

        let lines = [
            #"{"id":1,"message":"hello"}"#, #"{"id":"a","base64":"aGVsbG8="}"#, #"{"hex":"68656c6c6f","id":null}"#,
            #"{"message":"caf\u00e9","id":-7}"#, #" { "id" : 12.5 , "base64" : "" } "#, #"{"message":"a","hex":"00"}"#,
            #"{"id":{"nested":true},"message":"x"}"#, #"{"message":"x","message":"y"}"#, "[]", "",
        ]
        for (index, line) in lines.enumerated() { try save(.batch, "line-\(index)", Array(line.utf8)) }

        let counters = [
            #"{"failures":0,"lockedUntil":0}"#, #"{"failures":6,"lockedUntil":1800000060.5}"#,
            #"{"lockedUntil":1800003600,"failures":12}"#, #"{"failures":1}"#, "{}", "",
        ]
        for (index, counter) in counters.enumerated() { try save(.throttle, "counter-\(index)", Array((counter + "\n").utf8)) }

        let identities = [
            "secret_key = \"SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO\"\n",
            "seed_phrase = \"illness spike retreat truth genius clock brain pass fit cave bargain toe\"\nhd_path = 1\n",
            "hardware = \"ledger\"\npublic_key = \"GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR\"\nhd_path = 0\n",
            "entry_name = \"secure_store:org.stellar.cli-alice\"\n", "public_key = 'GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR'\n",
            "# comment\n\nsecret_key = 'x' # trailing\n",
        ]
        for (index, identity) in identities.enumerated() { try save(.stellarcli, "identity-\(index)", Array(identity.utf8)) }

        let tomls = [
            """
            VERSION = "2.0.0"
            NETWORK_PASSPHRASE = "Test SDF Network ; September 2015"
            WEB_AUTH_ENDPOINT = "https://a.example/auth"
            SIGNING_KEY = "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR"
            [DOCUMENTATION]
            ORG_NAME = "x"

            """,
            #"""
            ACCOUNTS = [
              "G1", # c
              'G2',
            ]
            M = """
            line \
              two"""
            L = '''raw\'''
            I = { a = 1, b = [2, 3] }
            E = "\u00e9\U0001F600\t"

            """#,
        ]
        for (index, toml) in tomls.enumerated() { try save(.toml, "stellar-toml-\(index)", Array(toml.utf8)) }

        // SEP-7 requests stellar-sdk made and signed, and broken one way each (fixtures/make-sep7.py).
        struct SEP7Requests: Decodable {
            struct Entry: Decodable { var name, uri: String }
            var cases: [Entry]
        }
        let sep7 = try JSONDecoder().decode(SEP7Requests.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/sep7.json")))
        for entry in sep7.cases { try save(.sep7, "stellar-sdk-\(entry.name)", Array(entry.uri.utf8)) }

        // A backup's bundle (a seed, a phrase-made one, a key kept in a token), as plaintext and as an age file to
        // the fuzzer's identity.
        let seed = try KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")
        var phraseText = Array("illness spike retreat truth genius clock brain pass fit cave bargain toe".utf8)
        let phraseRoot = AccountRoot(bip39Seed: try Mnemonic(SecureBytes(consuming: &phraseText)).seed())
        let fromPhrase = try phraseRoot.keyPair(account: 2)
        let bundle = BackupBundle(created: "2026-11-28T00:00:00Z", entries: [
            .init(name: IdentityName("golden"), content: .seed(.init(secretSeed: seed.secretSeedStrKey(), keyPair: seed, phrase: nil,
                                                                       kdf: KDFParameters.Level.interactive.parameters, isKDFChosen: true, wasTPMBound: true))),
            .init(name: IdentityName("phrase"), content: .seed(.init(secretSeed: fromPhrase.secretSeedStrKey(), keyPair: fromPhrase,
                                                                       phrase: (phraseRoot, 2), kdf: KDFParameters.Level.moderate.parameters,
                                                                       isKDFChosen: false, wasTPMBound: false))),
            .init(name: IdentityName("hsm"), content: .keptElsewhere(key: .ed25519(seed.publicKey), place: "pkcs11", note: "Kept in the token.")),
        ])
        try save(.backup, "bundle", bundle.encoded().withUnsafeBytes { Array($0) })
        try save(.backup, "age-binary", try AgeFile.encrypt(bundle.encoded(), to: [FuzzTarget.backupIdentity.recipient]))
        try save(.backup, "age-armored", try AgeFile.encrypt(bundle.encoded(), to: [FuzzTarget.backupIdentity.recipient], armored: true))
        try save(.backup, "age-passphrase", try AgeFile.encrypt(bundle.encoded(), to: [AgePassphrase(SecureBytes.random(count: 16), workFactor: 2)]))


        // Every fifth envelope stellar-sdk made (all kinds and operation types are among them), as raw XDR.
        struct Envelopes: Decodable {
            struct Entry: Decodable { var envelope: String }
            var envelopes: [Entry]
            var full: Entry
        }
        let envelopes = try JSONDecoder().decode(Envelopes.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/tx-envelopes.json")))
        for (index, entry) in (envelopes.envelopes + [envelopes.full]).enumerated() where index % 5 == 0 || index == envelopes.envelopes.count {
            try save(.tx, "stellar-sdk-\(index)", Base64.decode(entry.envelope) ?? [])
        }

        // Every authorization preimage stellar-sdk made, and its envelopes with authorization entries (for the
        // splicing of signed entries), as raw XDR.
        struct Preimages: Decodable {
            struct Case: Decodable { var preimage: String }
            struct Envelope: Decodable { var envelope: String }
            var cases: [Case]
            var envelopes: [Envelope]
        }
        let preimages = try JSONDecoder().decode(Preimages.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/auth-preimages.json")))
        for (index, entry) in preimages.cases.enumerated() { try save(.auth, "stellar-sdk-\(index)", Base64.decode(entry.preimage) ?? []) }
        for (index, entry) in preimages.envelopes.enumerated() { try save(.tx, "auth-envelope-\(index)", Base64.decode(entry.envelope) ?? []) }

        // Entries with delegates (CAP-71), signed and not, as the `auth` target reads them as entries too; their
        // envelope, and the smart-account envelopes, for the `tx` target's splicing.
        struct Delegates: Decodable {
            struct Entry: Decodable { var entry: String; var signed: String? }
            struct Envelope: Decodable { var envelope, signed: String }
            var entries: [Entry]
            var envelopes: [Envelope]
        }
        let delegates = try JSONDecoder().decode(Delegates.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/delegates.json")))
        for (index, entry) in delegates.entries.enumerated() {
            try save(.auth, "delegates-\(index)", Base64.decode(entry.entry) ?? [])
            if let signed = entry.signed { try save(.auth, "delegates-signed-\(index)", Base64.decode(signed) ?? []) }
        }
        for (index, entry) in delegates.envelopes.enumerated() { try save(.tx, "delegates-envelope-\(index)", Base64.decode(entry.envelope) ?? []) }
        // A multisig account's entries, signed by each set of its signers: the `auth` target signs them as one
        // more signer of the account.
        struct Multisig: Decodable { struct Case: Decodable { var signed: [String: String] }; var envelopes: [Case] }
        let multisig = try JSONDecoder().decode(Multisig.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/multisig-entries.json")))
        for (index, fixture) in multisig.envelopes.enumerated() {
            for (set, envelope) in fixture.signed.sorted(by: { $0.key < $1.key }) {
                for slot in try TransactionEnvelope(base64: envelope).authorizationSlots() {
                    try save(.auth, "multisig-\(index)-\(set)-\(slot.number)", slot.entry.bytes)
                }
            }
        }
        struct SmartEnvelopes: Decodable { var envelope, cosignedEnvelope: String }
        let smartEnvelopes = try JSONDecoder().decode(SmartEnvelopes.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/smart-account-envelopes.json")))
        try save(.tx, "smart-account-envelope", Base64.decode(smartEnvelopes.envelope) ?? [])
        try save(.tx, "smart-account-cosigned-envelope", Base64.decode(smartEnvelopes.cosignedEnvelope) ?? [])

        // Every smart-account credential of the independent reference, before and after its signature, and
        // each one it refuses.
        struct SmartAccounts: Decodable {
            struct Case: Decodable { var existing: String; var credential: String? }
            var cases: [Case]
            var refusals: [Case]
        }
        let smart = try JSONDecoder().decode(SmartAccounts.self, from: Data(try KeystoreFuzz.contents(of: "\(fixtures)/smart-accounts.json")))
        for (index, entry) in smart.cases.enumerated() {
            try save(.smartaccount, "existing-\(index)", Base64.decode(entry.existing) ?? [])
            try save(.smartaccount, "signed-\(index)", Base64.decode(entry.credential ?? "") ?? [])
        }
        for (index, entry) in smart.refusals.enumerated() { try save(.smartaccount, "refused-\(index)", Base64.decode(entry.existing) ?? []) }

        // Agent requests as docs/AGENT.md writes them, one method per line, each seed a short conversation.
        let golden = "GDLVVGABQKYQVN6VJP7NHSLEA45A5YLS6PNKMIZFV4BBU2HXA5IRVHUR"
        let requests = [
            #"{"jsonrpc":"2.0","id":1,"method":"getAddress","params":{}}"#,
            #"{"jsonrpc":"2.0","id":"x","method":"signPayload","params":{"payload":"AAEC","address":"\#(golden)"}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"signMessage","params":{"message":"h\u00e9llo\n"}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"signMessage","params":{"messageBase64":"AP8="}}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"signTransaction","params":{"xdr":"\#(envelopes.envelopes[0].envelope)","networkPassphrase":"Test SDF Network ; September 2015"}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"signAuthEntry","params":{"authEntry":"\#(preimages.cases[0].preimage)","networkPassphrase":"Test SDF Network ; September 2015"}}"#,
            #"{"jsonrpc":"2.0","id":null,"method":"listKeys"}"#,
            #"{"jsonrpc":"2.0","id":8,"method":"status"}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"removeKey","params":{"name":"default","keystore":"/fuzz"}}"#,
            #"{"jsonrpc":"2.0","id":10,"method":"lock"}"#,
        ]
        for (index, request) in requests.enumerated() {
            try save(.agent, "request-\(index)", Array((request + "\n" + requests[(index + 1) % requests.count] + "\n").utf8))
        }

        // A real session file, with its token on the line before it.
        var template = Array("/tmp/keystore-fuzz-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw AtomicFile.ioError("create a directory in", "/tmp") }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let sessions = temporary + "/sessions"
        let store = SessionStore(directory: sessions)
        let token = try store.open(keyPair, for: .init(keystore: "/home/fuzz/.keystore", name: IdentityName("fuzz")), ttl: 600)
        let file = try KeystoreFuzz.contents(of: store.path(of: token))
        try save(.session, "live", Array((token.stringValue + "\n").utf8) + file)
        try save(.session, "token-only", Array(token.stringValue.utf8))
        _ = try store.close(token)
        rmdir(sessions)
        rmdir(temporary)
    }
}
#endif
