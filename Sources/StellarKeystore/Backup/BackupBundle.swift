import StellarKeys
import StellarTransactions

/// What a backup holds: the plaintext inside its age file (docs/FORMAT.md, "Backup bundle"). Lines of
/// `field value` in printable ASCII, the first `stellar-keystore-backup v1`, then one record per identity, each begun by a blank line
/// and `identity NAME`. Text, not JSON, so that the seeds in it are read straight into `SecureBytes` and never
/// become a `String`.
///
/// ```
/// stellar-keystore-backup v1
/// created 2026-11-28T07:01:02Z
///
/// identity default
/// address GBRP…
/// seed SCZA…
/// phrase-root 3f1c…(128 hex digits: SEP-5's m/44'/148' node, key then chain code)
/// account 0
/// kdf 3 268435456 auto
/// tpm-bound yes
///
/// identity hsm
/// address GA7Q…
/// kept-in pkcs11
/// note The key is in a PKCS#11 token (…) and never leaves it: …
/// ```
package struct BackupBundle: Sendable {
    package static let firstLine = "stellar-keystore-backup v1"
    /// The most identities a bundle holds (docs/FORMAT.md): far more than a keystore has, and a bound on the work a
    /// hostile bundle asks for (each seed's address is derived again, each phrase root's account).
    package static let maximumIdentities = 10_000
    static let version = 1

    package enum Content: Sendable {
        /// A sealed seed, in the backup.
        case seed(Seed)
        /// A key that never leaves its hardware (a token's, a TPM's): only its public part and what to do instead.
        case keptElsewhere(key: AuthorizationSigner.Key, place: String, note: String)
    }

    /// A seed and what its vault said of it.
    package struct Seed: Sendable {
        /// The secret seed as its StrKey (`S…`), ASCII.
        package let secretSeed: SecureBytes
        package let keyPair: KeyPair
        /// SEP-5's `m/44'/148'` node and the account index, for an identity made from a recovery phrase.
        package let phrase: (root: AccountRoot, account: UInt32)?
        package let kdf: KDFParameters
        package let isKDFChosen: Bool
        package let wasTPMBound: Bool

        package init(secretSeed: SecureBytes, keyPair: KeyPair, phrase: (root: AccountRoot, account: UInt32)?, kdf: KDFParameters,
                     isKDFChosen: Bool, wasTPMBound: Bool) {
            (self.secretSeed, self.keyPair, self.phrase) = (secretSeed, keyPair, phrase)
            (self.kdf, self.isKDFChosen, self.wasTPMBound) = (kdf, isKDFChosen, wasTPMBound)
        }
    }

    package struct Entry: Sendable {
        package let name: IdentityName
        package let content: Content

        package init(name: IdentityName, content: Content) {
            (self.name, self.content) = (name, content)
        }

        /// The public key the entry is for.
        package var key: AuthorizationSigner.Key {
            switch content {
            case .seed(let seed): .ed25519(seed.keyPair.publicKey)
            case .keptElsewhere(let key, _, _): key
            }
        }
    }

    package let created: String
    package let entries: [Entry]

    package init(created: String, entries: [Entry]) {
        self.created = created
        self.entries = entries
    }

    // MARK: Writing

    /// The bundle's bytes, secrets included, in `SecureBytes`.
    package func encoded() -> SecureBytes {
        var parts: [Part] = [.text("\(Self.firstLine)\ncreated \(created)\n")]
        for entry in entries {
            parts.append(.text("\nidentity \(entry.name.rawValue)\n"))
            switch entry.content {
            case .seed(let seed):
                parts.append(.text("address \(seed.keyPair.publicKey.accountID)\nseed "))
                parts.append(.secret(seed.secretSeed))
                parts.append(.text("\n"))
                if let phrase = seed.phrase {
                    parts.append(.text("phrase-root "))
                    parts.append(.secret(Self.hex(phrase.root.node)))
                    parts.append(.text("\naccount \(phrase.account)\n"))
                }
                parts.append(.text("kdf \(seed.kdf.opsLimit) \(seed.kdf.memLimit) \(seed.isKDFChosen ? "chosen" : "auto")\n"))
                if seed.wasTPMBound { parts.append(.text("tpm-bound yes\n")) }
            case .keptElsewhere(let key, let place, let note):
                switch key {
                case .ed25519(let publicKey): parts.append(.text("address \(publicKey.accountID)\n"))
                case .p256(let publicKey): parts.append(.text("p256-key \(Hex.string(publicKey.keyData))\n"))
                }
                parts.append(.text("kept-in \(place)\nnote \(note)\n"))
            }
        }
        let count = parts.reduce(0) { $0 + $1.count }
        return SecureBytes(count: count) { output in
            var offset = 0
            for part in parts {
                switch part {
                case .text(let text):
                    let bytes = Array(text.utf8)
                    bytes.withUnsafeBytes { output.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                case .secret(let secret):
                    secret.withUnsafeBytes { output.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                }
                offset += part.count
            }
        }
    }

    private enum Part {
        case text(String), secret(SecureBytes)
        var count: Int {
            switch self {
            case .text(let text): text.utf8.count
            case .secret(let secret): secret.count
            }
        }
    }

    private static func hex(_ bytes: SecureBytes) -> SecureBytes {
        let digits = Array("0123456789abcdef".utf8)
        return bytes.withUnsafeBytes { input in
            SecureBytes(count: input.count * 2) { output in
                for (index, byte) in input.enumerated() {
                    output[2 * index] = digits[Int(byte >> 4)]
                    output[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
            }
        }
    }

    // MARK: Reading

    /// The bundle in `plaintext`, read strictly: every line a known field, each once per record, in a bundle of
    /// this version; every seed's address derived again and compared, and a phrase's account derived again from
    /// its root and compared with the seed. A bundle that says anything else is refused, never half read.
    package init(plaintext: SecureBytes) throws(BackupError) {
        var lines: [Range<Int>] = []
        var isText = true
        plaintext.withUnsafeBytes { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() {
                if byte == 0x0A {
                    lines.append(start..<index)
                    start = index + 1
                } else if byte < 0x20 || byte >= 0x7F {  // printable ASCII only: nothing read can be a control
                    isText = false
                }
            }
            if start != bytes.count { isText = false }  // the last line ends with a newline
        }
        guard isText, let first = lines.first else { throw .notABundle }
        let firstLine = Self.text(plaintext, first)
        guard firstLine == Self.firstLine else {
            if firstLine.hasPrefix("stellar-keystore-backup v"), let version = Int(firstLine.dropFirst("stellar-keystore-backup v".count)),
               version > Self.version {
                throw .futureVersion(version)
            }
            throw .notABundle
        }
        var records: [[(field: String, value: Range<Int>, line: Int)]] = [[]]
        for (number, range) in lines.enumerated().dropFirst() {
            if range.isEmpty {
                records.append([])
                continue
            }
            guard let space = plaintext.withUnsafeBytes({ bytes in bytes[range].firstIndex(of: 0x20) }) else {
                throw .malformed(line: number + 1, reason: "a field without a value")
            }
            let field = Self.text(plaintext, range.lowerBound..<space)
            records[records.count - 1].append((field, (space + 1)..<range.upperBound, number + 1))
        }
        // The header record, then identities; an empty record is two blank lines in a row.
        let header = records.removeFirst()
        guard header.count == 1, header[0].field == "created" else {
            throw .malformed(line: header.first?.line ?? 2, reason: "the header holds only its creation time")
        }
        created = Self.text(plaintext, header[0].value)
        guard records.count <= Self.maximumIdentities else {
            throw .malformed(line: records[Self.maximumIdentities][0].line, reason: "a bundle holds at most \(Self.maximumIdentities) identities")
        }
        var entries: [Entry] = []
        var names: Set<IdentityName> = []
        for record in records {
            let entry = try Self.entry(record, in: plaintext)
            guard names.insert(entry.name).inserted else {
                throw .malformed(line: record[0].line, reason: "identity \(entry.name.rawValue) appears twice")
            }
            entries.append(entry)
        }
        self.entries = entries
    }

    private static let fields: Set = ["identity", "address", "seed", "phrase-root", "account", "kdf", "tpm-bound", "p256-key",
                                      "kept-in", "note"]

    private static func entry(_ record: [(field: String, value: Range<Int>, line: Int)], in plaintext: SecureBytes) throws(BackupError) -> Entry {
        guard let first = record.first, first.field == "identity" else {
            throw .malformed(line: record.first?.line ?? 0, reason: "a record begins with its identity")
        }
        var values: [String: (value: Range<Int>, line: Int)] = [:]
        for item in record {
            guard fields.contains(item.field) else { throw .malformed(line: item.line, reason: "unknown field \(item.field)") }
            guard values[item.field] == nil else { throw .malformed(line: item.line, reason: "\(item.field) twice in one record") }
            values[item.field] = (item.value, item.line)
        }
        func text(_ field: String) -> String? { values[field].map { Self.text(plaintext, $0.value) } }
        func fail(_ field: String, _ reason: String) -> BackupError { .malformed(line: values[field]?.line ?? first.line, reason: reason) }
        guard let name = try? IdentityName(Self.text(plaintext, first.value)) else { throw fail("identity", "not an identity name") }

        if let place = text("kept-in") {
            guard let note = text("note"), ["pkcs11", "tpm"].contains(place) else { throw fail("kept-in", "kept in pkcs11 or tpm, with a note") }
            let key: AuthorizationSigner.Key
            if let address = text("address"), values["p256-key"] == nil, let publicKey = try? PublicKey(accountID: address) {
                key = .ed25519(publicKey)
            } else if let hex = text("p256-key"), values["address"] == nil, let data = Hex.bytes(hex), let publicKey = try? P256PublicKey(keyData: data) {
                key = .p256(publicKey)
            } else {
                throw fail("address", "a key kept elsewhere has an address or a P-256 key")
            }
            guard Set(values.keys).isSubset(of: ["identity", "address", "p256-key", "kept-in", "note"]) else {
                throw fail("seed", "a key kept elsewhere has no secret here")
            }
            return Entry(name: name, content: .keptElsewhere(key: key, place: place, note: note))
        }

        guard let seedRange = values["seed"]?.value, let address = text("address") else { throw fail("seed", "an identity's seed and address") }
        let secretSeed = plaintext.slice(seedRange)
        guard let keyPair = try? KeyPair(secretSeed: secretSeed) else { throw fail("seed", "not a secret seed (S…)") }
        guard keyPair.publicKey.accountID == address else { throw .addressMismatch(name: name.rawValue) }
        var phrase: (root: AccountRoot, account: UInt32)?
        if let rootRange = values["phrase-root"]?.value {
            guard let account = text("account").flatMap(UInt32.init), let root = Self.node(plaintext.slice(rootRange)) else {
                throw fail("phrase-root", "a phrase's root is 128 hex digits, with its account")
            }
            guard let derived = try? root.keyPair(account: account), derived.publicKey == keyPair.publicKey else {
                throw .phraseMismatch(name: name.rawValue, account: account)
            }
            phrase = (AccountRoot(node: root.node), account)
        } else if values["account"] != nil {
            throw fail("account", "an account without a phrase's root")
        }
        let kdfFields = text("kdf")?.split(separator: " ").map(String.init) ?? []
        guard kdfFields.count == 3, let ops = UInt64(kdfFields[0]), let mem = UInt64(kdfFields[1]), ["auto", "chosen"].contains(kdfFields[2]),
              case let kdf = KDFParameters(opsLimit: ops, memLimit: mem), kdf.isWithinAcceptedBounds else {
            throw fail("kdf", "the cost as OPS MEM auto|chosen, within what a vault may ask")
        }
        let bound = text("tpm-bound")
        guard bound == nil || bound == "yes" else { throw fail("tpm-bound", "tpm-bound is yes or absent") }
        guard values["p256-key"] == nil, values["note"] == nil else { throw fail("note", "a seed's record has no note or P-256 key") }
        return Entry(name: name, content: .seed(Seed(secretSeed: secretSeed, keyPair: keyPair, phrase: phrase, kdf: kdf,
                                                     isKDFChosen: kdfFields[2] == "chosen", wasTPMBound: bound != nil)))
    }

    private static func text(_ plaintext: SecureBytes, _ range: Range<Int>) -> String {
        plaintext.withUnsafeBytes { String(decoding: $0[range], as: UTF8.self) }
    }

    /// 128 lowercase hex digits as a SLIP-10 node, decoded straight into `SecureBytes`.
    private static func node(_ hex: SecureBytes) -> AccountRoot? {
        guard hex.count == 128 else { return nil }
        var valid = true
        let node = hex.withUnsafeBytes { digits in
            SecureBytes(count: 64) { output in
                func value(_ digit: UInt8) -> UInt8 {
                    switch digit {
                    case 0x30...0x39: return digit - 0x30
                    case 0x61...0x66: return digit - 0x61 + 10
                    default: valid = false; return 0
                    }
                }
                for index in 0..<64 { output[index] = value(digits[2 * index]) << 4 | value(digits[2 * index + 1]) }
            }
        }
        return valid ? AccountRoot(node: node) : nil
    }
}
