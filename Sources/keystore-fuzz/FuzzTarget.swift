import FoundationEssentials
import Glibc
import StellarKeystore
import StellarKeystoreAgent
import StellarKeys
import StellarTransactions
import StellarWebAuth
import StellarText

/// The parsers that read bytes keystore did not write itself, each with what must hold for every input.
///
/// Any input may be rejected; none may crash, and any error must be one of keystore's own with a one-line
/// message. Where an input is accepted, the checks below say what accepting it must mean. A failed check traps,
/// which libFuzzer reports as a crash and keeps as a test case.
enum FuzzTarget: String, CaseIterable {
    /// `StrKey(_:)`: every SEP-23 key kind.
    case strkey
    /// `Vault(file:path:)` and, when the key derivation is cheap, `open(pin:)`.
    case vault
    /// `BatchRequest(line:)`, both its fast path and the full JSON path, and the payload decoders.
    case batch
    /// `SessionToken(_:)` on the first line, then `SessionStore.unseal` of the rest with that token.
    case session
    /// `Mnemonic(_:)`: recovery phrases as typed.
    case mnemonic
    /// `Throttle.parse`: the wrong-PIN counter beside a vault, which anyone who can write the directory can plant.
    case throttle
    /// `StellarCLIKeyFile.parse`: stellar-cli's identity files, which `import-stellar-cli` reads.
    case stellarcli
    /// `TransactionEnvelope(xdr:)`: a transaction envelope's XDR, then its summary, hash and signing.
    case tx
    /// `AuthorizationPreimage(xdr:)`: a Soroban authorization preimage (its invocation tree), then its summary
    /// and signing; and the same bytes as an `AuthorizationEntry(xdr:)`, signed for its own address's key, for
    /// a delegate's, and as a smart account's signer (`SmartAccountCredential`).
    case auth
    /// `StellarTOML(_:)`: a service's stellar.toml, which `web-auth` fetches from the network.
    case toml
    /// `SmartAccountCredential.read` and `.adding`: an OpenZeppelin smart account's credential (the signature
    /// SCVal of its authorization entry), which the envelope to sign brings.
    case smartaccount
    /// `AgentRequest(line:)` and the agent's answer, for each line: what any process of the user can send it.
    case agent
    /// `TransactionRequest(uri:)`: a SEP-7 request, which `sign-tx` reads from anyone; then its signature payload,
    /// its origin check, its summary, and the request made again from its fields.
    case sep7
    /// `BackupBundle(plaintext:)`: a backup's plaintext, which `restore` reads out of any file it is given; and the
    /// same bytes as an age file (`AgeFile.decrypt`) opened with a fixed identity (`backupIdentity`).
    case backup

    /// The PIN that the seed vaults are sealed under, so the fuzzer reaches the code after decryption.
    static let seedPIN = "270419"
    /// Deriving a key at a higher cost is too slow for fuzzing; such vaults are only parsed.
    static let costliestOpened = KDFParameters(opsLimit: 2, memLimit: 64 * 1024)

    func run(_ data: UnsafeRawBufferPointer) {
        switch self {
        case .strkey: Self.strKey(data)
        case .vault: Self.vault(Array(data))
        case .batch: Self.batch(data)
        case .session: Self.session(Array(data))
        case .mnemonic: Self.mnemonic(data)
        case .throttle: Self.throttle(Array(data))
        case .stellarcli: Self.stellarCLI(Array(data))
        case .tx: Self.transaction(Array(data))
        case .auth: Self.authorization(Array(data))
        case .toml: Self.stellarTOML(Array(data))
        case .smartaccount: Self.smartAccount(Array(data))
        case .agent: Self.agentRequests(Array(data))
        case .sep7: Self.transactionRequest(Array(data))
        case .backup: Self.backup(Array(data))
        }
    }

    private static func strKey(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)
        let key: StrKey
        do { key = try StrKey(text) } catch { return expectKeystoreError(error) }
        // Decoding is strict, so there is exactly one text per key: the one we were given.
        check(key.stringValue == text, "StrKey accepted \(text) but encodes it as \(key.stringValue)")
        check((try? StrKey(kind: key.kind, payload: key.payload)) == key, "StrKey payload does not rebuild \(text)")
    }

    private static func vault(_ bytes: [UInt8]) {
        openVault(bytes)
        // The check digest stops nearly every mutation at once. Re-sealing it lets the fuzzer reach the field
        // checks and the decryption behind it.
        guard var file = try? JSONDecoder().decode(Vault.File.self, from: Data(bytes)) else { return }
        file.check = file.expectedCheck
        guard let resealed = try? JSONEncoder().encode(file) else { return }
        openVault(Array(resealed))
    }

    private static func openVault(_ bytes: [UInt8]) {
        let vault: Vault
        do { vault = try Vault(file: bytes, path: "fuzz.vault") } catch { return expectKeystoreError(error) }
        // A vault that parses writes back to a file that parses to the same vault.
        let encoded = vault.encoded()
        let again = try? Vault(file: encoded, path: "fuzz.vault")
        check(again?.encoded() == encoded, "a parsed vault does not survive being written and read back")
        // A token's key (version 4) is only parsed: its vault holds nothing to open.
        guard let kdf = vault.kdf, kdf.memLimit <= costliestOpened.memLimit, kdf.opsLimit <= costliestOpened.opsLimit else { return }
        // A TPM-bound vault (version 3) is only parsed: opening it needs its TPM, which the fuzzer has not.
        guard !vault.isTPMBound else { return }
        do {
            let (keyPair, root) = try vault.openWithRoot(pin: PIN(seedPIN))
            check(keyPair.publicKey == vault.publicKey, "an opened vault gave a key for another address")
            check((root == nil) == (vault.account == nil), "an account root without an account number, or the reverse")
        } catch {
            expectKeystoreError(error)
        }
    }

    private static func batch(_ line: UnsafeRawBufferPointer) {
        let full = BatchRequest(decoding: line)
        // The fast path may decline anything, but what it accepts it must read as the JSON parser does.
        if let fast = BatchRequest(flat: line) {
            check(fast == full, "fast path read \(fast) where JSON says \(String(describing: full))")
        }
        guard let request = BatchRequest(line: line) else { return }
        check(!request.id.isEmpty, "an accepted request has an empty id")
        switch request.payload {
        case .base64(let text)?:
            guard let bytes = Base64.decode(text) else { return }
            var encoded: [UInt8] = []
            Base64.encode(bytes, into: &encoded)
            check(encoded == text, "base64 \(String(decoding: text, as: UTF8.self)) is not the encoding of what it decodes to")
        case .hex(let text)?:
            let string = String(decoding: text, as: UTF8.self)
            guard let bytes = Hex.bytes(string) else { return }
            check(Hex.string(bytes) == string.lowercased(), "hex \(string) does not round-trip")
        case .envelope(let text)?:
            do { _ = try TransactionEnvelope(base64: text) } catch { expectKeystoreError(error) }
        case .message?, nil:
            break
        }
    }

    private static let signer = try! KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")

    private static func transaction(_ bytes: [UInt8]) {
        let envelope: TransactionEnvelope
        do { envelope = try TransactionEnvelope(xdr: bytes) } catch { return expectKeystoreError(error) }
        let summary = TransactionSummary(envelope, on: .testnet)
        check(summary.lines.allSatisfy(TerminalText.isPlain), "a summary line would reach the terminal with a control character")
        authorizations(envelope)
        let signing = Signer(name: .default, keyPair: signer, isFromPhrase: nil)
        do {
            let signed = try signing.signTransaction(envelope, on: .testnet)
            guard !signed.wasAlreadySigned else { return }
            // The splice is one more valid envelope: the same transaction, one more signature, nothing else moved.
            let again = try TransactionEnvelope(xdr: signed.envelope)
            check(again.signatures.count == envelope.signatures.count + 1, "signing did not add exactly one signature")
            check(again.hash(on: .testnet) == envelope.hash(on: .testnet), "signing changed the transaction")
            check(signed.envelope.count == bytes.count + 72, "signing changed more than the signature")
            check(again.isSigned(by: signer.publicKey, hash: signed.hash), "the signature does not verify")
        } catch {
            check(envelope.signatures.count == TransactionEnvelope.maximumSignatures, "signing failed: \(error)")
        }
    }

    /// Signing an envelope's authorization entries splices bytes at offsets found by walking it: the result must
    /// be an envelope again, with the same entries in the same places, the signed ones valid.
    private static func authorizations(_ envelope: TransactionEnvelope) {
        let signed: SignedAuthorizations
        do {
            signed = try envelope.signingAuthorizations(by: signer, on: .testnet, expirationLedger: 7, allowing: [.notStrict, .notAddressBound])
        } catch {
            return expectKeystoreError(error)
        }
        let again: TransactionEnvelope
        do { again = try TransactionEnvelope(xdr: signed.envelope) } catch { return check(false, "signed entries do not parse: \(error)") }
        check(again.hash(on: .testnet) != envelope.hash(on: .testnet), "signing entries left the transaction as it was")
        let before = (try? envelope.authorizationSlots()) ?? [], after = (try? again.authorizationSlots()) ?? []
        check(before.map(\.entry.address) == after.map(\.entry.address) && before.map(\.entry.nonce) == after.map(\.entry.nonce),
              "signing moved an entry")
        for slot in after where signed.plan.toSign.contains(slot.number) {
            check(slot.entry.signatureExpirationLedger == 7, "the expiration was not set")
        }
        // Entries left alone keep every byte.
        for (old, new) in zip(before, after) where !signed.plan.toSign.contains(old.number) {
            check(old.entry.bytes == new.entry.bytes, "an entry not signed changed")
        }
    }

    private static func authorization(_ bytes: [UInt8]) {
        authorizationEntry(bytes)
        let preimage: AuthorizationPreimage
        do { preimage = try AuthorizationPreimage(xdr: bytes) } catch { return expectKeystoreError(error) }
        check(preimage.bytes == bytes, "the preimage is not kept as given")
        for network in StellarNetwork.wellKnown {
            let lines = preimage.lines(on: network, signingAs: ("fuzz", signer.publicKey))
            check(lines.allSatisfy(TerminalText.isPlain), "a summary line would reach the terminal with a control character")
            let signing = Signer(name: .default, keyPair: signer, isFromPhrase: nil)
            do {
                let signature = try signing.signAuthorization(AuthorizationPayload(preimage: preimage), on: network)
                check(preimage.networkID == network.id, "a preimage for another network was signed")
                check(signer.publicKey.isValidSignature(signature, for: preimage.hash), "the signature does not verify")
            } catch {
                check(error as? AuthorizationError == .otherNetwork(expected: network.shown), "signing failed: \(error)")
            }
        }
    }

    /// The smart account the fuzzer signs for: entries whose address (or a delegate's) is this contract.
    static let smartAccount = try! StrKey(kind: .contract, payload: [UInt8](repeating: 0xC0, count: 32)).stringValue
    static let verifier = try! StrKey(kind: .contract, payload: [UInt8](repeating: 0xED, count: 32)).stringValue

    /// An entry signed for its own address's key (the fuzzer's key, top level or delegate) and for a smart account:
    /// every node not signed keeps its bytes, the invocation too, the signed nodes hold a signature that verifies
    /// over the payload's digest, and the result is one valid entry again.
    private static func authorizationEntry(_ bytes: [UInt8]) {
        let entry: AuthorizationEntry
        do { entry = try AuthorizationEntry(xdr: bytes) } catch { return expectKeystoreError(error) }
        check(entry.bytes == bytes, "the entry is not kept as given")
        let rules = try? SmartAccountRules(verifier: verifier, contextRuleIDs: (0..<UInt32(min(entry.contextCount, 16))).map { $0 })
        var signers = [AuthorizationSigner.account(signer.publicKey)]
        if let rules, let smart = try? AuthorizationSigner.smartAccount(smartAccount, key: signer.publicKey, rules: rules) { signers.append(smart) }
        // As a signer of the entry's own account, whatever maps of others its credential holds already.
        if let address = entry.address, let multisig = try? AuthorizationSigner.multisigAccount(address, key: signer.publicKey) { signers.append(multisig) }
        for authorizationSigner in signers {
            var digest: [UInt8] = []
            let signed: AuthorizationEntry
            do {
                signed = try entry.signed(for: authorizationSigner, on: .testnet, expirationLedger: 7, allowing: .notAddressBound) { payload in
                    digest = payload.digest
                    return signer.signature(for: payload.digest)
                }
            } catch {
                expectKeystoreError(error)
                continue
            }
            check(signed.invocationRange.count == entry.invocationRange.count
                  && Array(signed.bytes[signed.invocationRange]) == Array(entry.bytes[entry.invocationRange]), "signing changed the invocation")
            check(signed.signatureExpirationLedger == 7 && signed.nonce == entry.nonce, "the expiration or the nonce is wrong")
            check(signed.nodes.map(\.address) == entry.nodes.map(\.address), "signing moved a node")
            for (old, new) in zip(entry.nodes, signed.nodes) {
                let value = Array(signed.bytes[new.signatureRange])
                guard new.address == authorizationSigner.address else {
                    check(Array(entry.bytes[old.signatureRange]) == value, "a node not signed changed")
                    continue
                }
                if authorizationSigner.rules == nil {
                    // The other signers' maps as they were, and this key's in its place among them.
                    let ours = AccountSignatures.Signature(key: signer.publicKey.rawRepresentation, signature: signer.signature(for: digest))
                    let before = (try? AccountSignatures.read(Array(entry.bytes[old.signatureRange])))?.filter { $0.key != ours.key }
                    let after = try? AccountSignatures.read(value)
                    check(before != nil && after?.filter { $0.key != ours.key } == before && after?.filter { $0.key == ours.key } == [ours],
                          "a signed node does not hold the account's signatures, this key's added")
                } else {
                    let read = (try? SmartAccountCredential.read(value)).flatMap { $0 }
                    check(read?.signers.contains { $0.kind == .external && $0.key == signer.publicKey.rawRepresentation } == true,
                          "a signed node does not hold an AuthPayload with this key")
                }
            }
        }
    }

    /// The key and verifier of fixtures/smart-accounts.json, so that seeds already signed by it reach the
    /// "already there" paths.
    private static let smartAccountKey = try! KeyPair(seed: SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 0x11) })
    private static let smartAccountVerifier = "CBNFUWS2LJNFUWS2LJNFUWS2LJNFUWS2LJNFUWS2LJNFUWS2LJNFU7WI"

    /// A credential that reads gets this key's signature added for its own rules: the result reads back with the
    /// same rules and the same signers, in the same order, plus this one (or, when it was there with this
    /// signature, is the credential unchanged), and adding it again changes nothing.
    private static func smartAccount(_ bytes: [UInt8]) {
        let before: (contextRuleIDs: [UInt32], signers: [SmartAccountCredential.Signer])?
        do { before = try SmartAccountCredential.read(bytes) } catch { return expectKeystoreError(error) }
        let ids = before?.contextRuleIDs ?? [0]
        guard let rules = try? SmartAccountRules(verifier: smartAccountVerifier, contextRuleIDs: ids) else {
            fail("the rule ids of a credential that reads are refused: \(ids)")
        }
        let key = smartAccountKey
        let signature = key.signature(for: SmartAccountCredential.digest(payload: Array(bytes.prefix(32)), contextRuleIDs: ids))
        let added: [UInt8]
        do {
            added = try SmartAccountCredential.adding(signature: signature, by: key.publicKey, rules: rules, to: bytes)
        } catch {
            // What reads can only be refused for holding another signature by this key, or having no room.
            switch error as? SmartAccountError {
            case .otherSignature?, .tooManySigners?: return
            default: fail("a credential that reads was refused: \(error)")
            }
        }
        guard let after = try? SmartAccountCredential.read(added) else { fail("a signed credential does not read back") }
        check(after.contextRuleIDs == ids, "adding a signature changed the rule ids")
        let ours = after.signers.filter { $0.kind == .external && $0.address == smartAccountVerifier && $0.key == key.publicKey.rawRepresentation }
        check(ours.count == 1, "the signer added is there \(ours.count) times")
        let old = before?.signers ?? []
        if old.contains(ours[0]) {
            check(added == bytes, "a signature already there changed the credential")
        } else {
            check(after.signers.filter { $0 != ours[0] } == old, "adding a signature moved or changed another signer")
        }
        let again = try? SmartAccountCredential.adding(signature: signature, by: key.publicKey, rules: rules, to: added)
        check(again == added, "adding the same signature twice changed the credential")
    }

    private static func session(_ bytes: [UInt8]) {
        let newline = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
        let text = String(decoding: bytes[..<newline], as: UTF8.self)
        let token: SessionToken
        do { token = try SessionToken(text) } catch { return expectKeystoreError(error) }
        check(token.stringValue == text.lowercased(), "token \(text) prints as \(token.stringValue)")
        let file = Array(bytes[min(newline + 1, bytes.endIndex)...])
        do { _ = try SessionStore.unseal(file, with: token) } catch { expectKeystoreError(error) }
    }

    private static func mnemonic(_ data: UnsafeRawBufferPointer) {
        let mnemonic: Mnemonic
        do { mnemonic = try Mnemonic(SecureBytes(copying: data)) } catch { return expectKeystoreError(error) }
        check(Mnemonic.wordCounts.contains(mnemonic.wordCount), "a phrase of \(mnemonic.wordCount) words was accepted")
        // The normalised phrase must itself be accepted as the same phrase.
        let again = try? Mnemonic(mnemonic.phrase)
        check(again?.phrase.isEqual(to: mnemonic.phrase) == true, "a normalised phrase does not parse to itself")
    }

    private static func throttle(_ bytes: [UInt8]) {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var throttle = Throttle.parse(bytes, now: now)
        check((0...Throttle.mostFailures).contains(throttle.failures), "a count of \(throttle.failures) was read")
        check((throttle.secondsLeft(now: now) ?? 0) <= Throttle.longestWait, "a wait beyond the longest was read")
        for _ in 0..<2 { throttle.recordFailure(now: now) }
        check((1...Throttle.mostFailures).contains(throttle.failures), "recording failures gave \(throttle.failures)")
        check((1...Throttle.longestWait).contains(throttle.secondsLeft(now: now) ?? Throttle.longestWait), "recording a failure gave no bounded wait")
    }

    private static func stellarTOML(_ bytes: [UInt8]) {
        let toml: StellarTOML
        do { toml = try StellarTOML(bytes) } catch { return expectKeystoreError(error) }
        // Each string read, written back as a TOML basic string with every character escaped, reads the same.
        for (key, value) in toml.strings {
            let escaped = value.unicodeScalars.map { scalar in
                let hex = String(scalar.value, radix: 16)
                return "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
            }.joined()
            let again = try? StellarTOML(Array("K = \"\(escaped)\"\n".utf8))
            check(again?.strings["K"] == value, "the value of \(key) does not survive being written back")
        }
    }

    /// A key that signs no request the fuzzer can make: any origin it "verifies" is a forged signature.
    static let sep7OriginKey = try! PublicKey(rawRepresentation: [UInt8](repeating: 7, count: 32))

    private static func transactionRequest(_ bytes: [UInt8]) {
        let request: TransactionRequest
        do { request = try TransactionRequest(uri: bytes) } catch { return expectKeystoreError(error) }
        // The payload is SEP-7's prefix and the request's own text up to its signature, never more.
        let payload = request.signaturePayload
        check(payload.count >= 62 && payload.prefix(36) == [UInt8](repeating: 0, count: 35) + [4], "a payload without SEP-7's prefix")
        check(request.uri.utf8.starts(with: payload.dropFirst(62)), "a payload that is not the start of the request")
        check(request.signature != nil || payload.count - 62 == request.uri.utf8.count, "an unsigned request whose payload is not all of it")
        check(request.message.map { $0.unicodeScalars.count <= TransactionRequest.mostMessageCharacters } ?? true, "a message over 300 characters")
        check(request.chainDepth <= TransactionRequest.mostChainLevels, "a chain deeper than 7")
        let checked: TransactionRequest.Checked
        do {
            checked = try request.checked(originKey: sep7OriginKey)
            if case .verified = checked.origin { check(request.isSigned(by: sep7OriginKey), "an origin verified without its signature") }
        } catch {
            expectKeystoreError(error)
            guard let unnamed = try? TransactionRequest(envelope: request.envelope, network: request.network, message: request.message,
                                                        callback: request.callback, pubkey: request.pubkey).checked(originKey: nil) else {
                fail("the fields of a read request do not make a request")
            }
            checked = unnamed
        }
        let summary = SigningSummary.transaction(request.envelope, on: request.network, signingAs: nil, request: checked)
        check(summary.text.count <= SigningSummary.maximumLines, "a summary over its bound")
        check(summary.text.allSatisfy { !$0.utf8.contains { $0 < 0x20 || $0 == 0x7F } }, "a control character in a summary")
        // Made again from its fields (a chain is not made), it reads back to the same fields.
        guard request.chain == nil else { return }
        guard let again = try? TransactionRequest(envelope: request.envelope, network: request.network, message: request.message,
                                                  callback: request.callback, pubkey: request.pubkey, originDomain: request.originDomain,
                                                  signature: request.signature) else {
            fail("the fields of a read request do not make a request")
        }
        let sameTransaction = again.envelope.bytes == request.envelope.bytes && again.network == request.network
        let sameWords = again.message == request.message && again.callback == request.callback && again.pubkey == request.pubkey
        let sameOrigin = again.originDomain == request.originDomain && again.signature == request.signature
        check(sameTransaction && sameWords && sameOrigin, "a made request reads back to other fields")
    }

    private static func stellarCLI(_ bytes: [UInt8]) {
        let identity: StellarCLIKeyFile
        do { identity = try StellarCLIKeyFile.parse(bytes.withUnsafeBytes { SecureBytes(copying: $0) }) } catch { return expectKeystoreError(error) }
        switch identity {
        case .secretKey(let secret):
            // What is read as a secret is a range of the file, never more.
            check(secret.count <= bytes.count, "a secret longer than its file")
            do { _ = try KeyPair(secretSeed: secret) } catch { expectKeystoreError(error) }
        case .seedPhrase(let phrase, let account):
            check(phrase.count <= bytes.count && account < 1 << 31, "a phrase longer than its file, or account \(account)")
            do { _ = try Mnemonic(phrase) } catch { expectKeystoreError(error) }
        case .elsewhere(let reason):
            check(!reason.isEmpty, "no reason for a skipped identity")
        case .publicOnly:
            break
        }
    }

    /// One agent for the whole run, holding the golden key, that never listens: its socket is unlinked at once,
    /// so that nothing is left behind, and requests are answered in-process.
    private static let heldAgent: KeystoreAgent = {
        let directory = "/tmp/keystore-fuzz-agent-\(getpid())"
        guard let agent = try? KeystoreAgent(socketPath: directory + "/agent.sock") else { fail("no agent could be made") }
        unlink(agent.socketPath)
        rmdir(directory)
        return agent
    }()
    private static let golden = try! KeyPair(secretSeed: "SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")
    private static let caller = AgentCaller(pid: getpid())

    private static func agentRequests(_ bytes: [UInt8]) {
        heldAgent.add(Signer(name: .default, keyPair: golden, isFromPhrase: nil), keystore: "/fuzz")
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            let response: [UInt8]
            var request: AgentRequest?
            do {
                request = try AgentRequest(line: Array(line))
                guard request!.method != .addKey else { continue }
                response = heldAgent.answer(request!, from: caller).response
            } catch {
                check(!error.message.isEmpty && !error.message.contains("\n"), "a refusal that is not one line: \(error.message)")
                response = AgentJSON.error(id: error.id, code: .invalidRequest, message: error.message)
            }
            // One line of strict JSON, JSON-RPC 2.0, with the request's id, and a result or an error.
            check(response.last == 0x0A && response.dropLast().allSatisfy { $0 >= 0x20 }, "an answer that is not one line of text")
            guard let answer = try? StrictJSON.parse(Array(response.dropLast()), integersOnly: false) else {
                fail("an answer that is not a JSON object: \(String(decoding: response, as: UTF8.self))")
            }
            check(answer["jsonrpc"] == .string("2.0") && (answer["result"] == nil) != (answer["error"] == nil), "not a JSON-RPC answer")
            let opening = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
            if let request { check(Array(response.dropFirst(opening.count).prefix(request.id.count)) == request.id, "the id was not echoed") }
            // A signature is the golden key's, of the payload asked for.
            if request?.method == .signPayload, let result = answer["result"]?.object {
                let signature = result["signature"]?.string.flatMap { Base64.decode($0) } ?? []
                let payload = (try? StrictJSON.parse(Array(line), integersOnly: false))?["params"]?.object?["payload"]?.string.flatMap { Base64.decode($0) }
                check(payload.map { golden.publicKey.isValidSignature(signature, for: $0) } == true, "a signature that does not verify")
            }
        }
    }

    /// Errors are keystore's own, with the one-line message the CLI prints.
    /// The age identity the backup seeds are encrypted to, so that the fuzzer reaches the payload behind the header.
    static let backupIdentity = AgeX25519Identity(secretKey: SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 9) })

    private static func backup(_ bytes: [UInt8]) {
        var copy = bytes
        do {
            let bundle = try BackupBundle(plaintext: SecureBytes(consuming: &copy))
            // A bundle that parses writes back to one that parses to the same bytes again.
            let encoded = bundle.encoded()
            let again = try? BackupBundle(plaintext: encoded)
            check(again?.encoded().isEqual(to: encoded) == true, "a parsed bundle does not survive being written and read back")
            for entry in bundle.entries {
                guard case .seed(let seed) = entry.content else { continue }
                check((try? KeyPair(secretSeed: seed.secretSeed))?.publicKey == seed.keyPair.publicKey, "a seed read as another key")
            }
        } catch {
            expectKeystoreError(error)
        }
        do {
            let plaintext = try AgeFile.decrypt(bytes, with: [backupIdentity])
            // What opens was sealed to the identity: sealed again, it opens to the same plaintext.
            let resealed = try AgeFile.encrypt(plaintext, to: [backupIdentity.recipient])
            check((try? AgeFile.decrypt(resealed, with: [backupIdentity]))?.isEqual(to: plaintext) == true, "a plaintext that does not survive being sealed again")
        } catch {
            expectKeystoreError(error)
        }
    }

    private static func expectKeystoreError(_ error: Error) {
        guard let error = error as? KeystoreError else { fail("an error that is not a KeystoreError: \(error)") }
        check(!error.message.isEmpty && !error.message.contains("\n"), "a message that is not one line: \(error.message)")
    }

    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    private static func fail(_ message: String) -> Never {
        fatalError("fuzz check failed: \(message)")
    }
}
