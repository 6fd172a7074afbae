import StellarKeys
import StellarText

/// The client side of age's plugin protocol: a recipient `age1NAME1…` or an identity `AGE-PLUGIN-NAME-1…` is
/// handed to the program `age-plugin-NAME` (a YubiKey's, a TPM's, a cloud KMS's), which wraps or unwraps the file
/// key (`AgePluginConnection` runs it).
///
/// Written from the specification, C2SP's age-plugin.md at commit 5ba5ee830903e91240fc6f9f3a7a9293d49e69c9, and
/// speaking what age 1.1.1 (Debian's) speaks, FiloSottile/age's internal/plugin/client.go at v1.1.1
/// (c6dcfa1efcaa27879762a934d5bea0d1b83a894c; the stored copy's newest commit is
/// 10561a774f9f6de47c8d23ddc58537b6a18b083d): one plugin run per recipient or identity, one file key (index 0),
/// `recipient-stanza`, `file-key`, `error`, and the plugin's requests `msg`, `confirm`, `request-public` and
/// `request-secret`; anything else the plugin asks is answered `unsupported`. Like age 1.1.1 it offers no
/// `extension-labels` (age 1.1.1 has none), and like age it ends on a plugin's `error`.
enum AgePlugin {
    /// age-plugin.md: `NAME = 1*(ALPHA / DIGIT / "-" / "_" / "." / "+")`, compared in lower case. No `/` can be in
    /// it, so the program's name never reaches outside the directories of PATH. Longer names than this are refused.
    static let maximumNameLength = 64

    static func isValidName(_ name: some Collection<UInt8>) -> Bool {
        !name.isEmpty && name.count <= maximumNameLength && name.allSatisfy { byte in
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || [0x2D, 0x5F, 0x2E, 0x2B].contains(byte)
        }
    }

    /// More stanzas than this for one recipient are refused (a post-quantum plugin sends one or two).
    static let maximumStanzas = 64

    /// Answers a request of the plugin's that is neither a stanza nor the end (phase 2, bi-directional): shown or
    /// asked through the presenter, `fail` when it cannot be, `unsupported` when it is not known. Returns what was
    /// asked when nobody could answer it, for the error should the plugin give up.
    static func answer(_ request: AgeStanza, on connection: AgePluginConnection, presenter: any AgePluginPresenter) throws(AgeError) -> String? {
        let name = connection.name
        let message = TerminalText.escaped(String(decoding: request.body, as: UTF8.self), limit: 400)
        switch request.type {
        case "msg":
            try connection.send(presenter.show(message, plugin: name) ? "ok" : "fail")
            return nil
        case "confirm":
            guard (1...2).contains(request.arguments.count) else {
                throw .pluginBrokeProtocol(name, reason: "a confirm request has \(request.arguments.count) choices, not one or two")
            }
            let choices = request.arguments.map { AgeBase64.decode($0.utf8) }
            guard choices.allSatisfy({ $0 != nil }) else {
                throw .pluginBrokeProtocol(name, reason: "a confirm request's choices are not base64")
            }
            let texts = choices.map { TerminalText.escaped(String(decoding: $0!, as: UTF8.self), limit: 40) }
            guard let yes = presenter.confirm(message, yes: texts[0], no: texts.count == 2 ? texts[1] : nil, plugin: name) else {
                try connection.send("fail")
                return "a confirmation"
            }
            try connection.send("ok", [yes ? "yes" : "no"])
            return nil
        case "request-public", "request-secret":
            let secret = request.type == "request-secret"
            guard let value = presenter.ask(message, secret: secret, plugin: name) else {
                try connection.send("fail")
                return secret ? "a secret" : "a value"
            }
            try connection.send("ok", secretBody: value)
            return nil
        default:
            // age-plugin.md: in a bi-directional phase, a command not known is answered so.
            try connection.send("unsupported")
            return nil
        }
    }

    /// The text of an `error` command: the plugin's words, escaped and cut.
    static func errorMessage(_ stanza: AgeStanza) -> String {
        let text = TerminalText.escaped(String(decoding: stanza.body, as: UTF8.self), limit: 300)
        return text.isEmpty ? "it gave no reason" : text
    }
}

/// A recipient whose plugin wraps the file key: `age1NAME1…` (Bech32, lower case, its prefix `age1` and the name).
package struct AgePluginRecipient: AgeRecipient, CustomStringConvertible {
    /// The plugin's name: `yubikey` for `age1yubikey1…`.
    package let plugin: String
    let encoding: String
    let program: String
    let host: AgePluginHost

    /// Reads `age1NAME1…`, and finds its plugin's program: one that is not installed is found missing before anything
    /// else is done.
    package init(_ text: String, host: AgePluginHost) throws(AgeError) {
        let prefix: [UInt8]
        do throws(Bech32.Failure) {
            prefix = try Array(text.utf8).withUnsafeBytes { bytes in
                Result { () throws(Bech32.Failure) in try Bech32.decodeWithPrefix(bytes).prefix }
            }.get()
        } catch {
            throw .invalidRecipient("its Bech32 is malformed")
        }
        guard prefix.starts(with: Array("age1".utf8)), Self.isValidName(prefix.dropFirst(4)) else {
            throw .invalidRecipient("a plugin's recipient begins with \"age1\" and the plugin's name (letters, digits, - _ . +)")
        }
        plugin = String(decoding: prefix.dropFirst(4), as: UTF8.self)
        encoding = text
        self.host = host
        program = try AgePluginConnection.program(for: plugin, environment: host.environment)
    }

    private static func isValidName(_ name: some Collection<UInt8>) -> Bool { AgePlugin.isValidName(name) }

    /// age's rule (cmd/age/parse.go at v1.1.1): `age1` and another `1` after it is a plugin's recipient; an X25519
    /// recipient's Bech32 data has no `1` in it.
    package static func isPluginRecipient(_ text: String) -> Bool {
        text.hasPrefix("age1") && text.utf8.dropFirst(4).contains(UInt8(ascii: "1"))
    }

    package var description: String { encoding }

    /// recipient-v1: phase 1 gives the plugin this recipient and the file key; in phase 2 it sends the stanzas
    /// (and may ask the person things on the way), then `done`.
    package func stanzas(wrapping fileKey: SecureBytes) throws(AgeError) -> [AgeStanza] {
        let connection = try AgePluginConnection.start(program, name: plugin, stateMachine: "recipient-v1", host: host)
        defer { connection.stop() }
        try connection.send("add-recipient", [encoding])
        try connection.send("wrap-file-key", secretBody: fileKey)
        try connection.send("done")
        var stanzas: [AgeStanza] = []
        var unanswered: String?
        while true {
            let message = try connection.receive()
            switch message.type {
            case "recipient-stanza":
                guard message.arguments.count >= 2 else {
                    throw .pluginBrokeProtocol(plugin, reason: "a recipient-stanza holds no stanza")
                }
                // One file key was sent: its index is 0, and nothing else is.
                guard message.arguments[0] == "0" else {
                    throw .pluginBrokeProtocol(plugin, reason: "a recipient-stanza is for a file key that was not sent")
                }
                guard stanzas.count < AgePlugin.maximumStanzas else {
                    throw .pluginBrokeProtocol(plugin, reason: "it sent over \(AgePlugin.maximumStanzas) stanzas")
                }
                stanzas.append(AgeStanza(type: message.arguments[1], arguments: Array(message.arguments.dropFirst(2)), body: message.body))
                try connection.send("ok")
            case "error":
                try? connection.send("ok")
                throw .pluginRefused(plugin, message: AgePlugin.errorMessage(message), unanswered: unanswered)
            case "done":
                guard !stanzas.isEmpty else {
                    throw .pluginBrokeProtocol(plugin, reason: "it finished without wrapping the file key")
                }
                connection.finish()
                return stanzas
            default:
                unanswered = try AgePlugin.answer(message, on: connection, presenter: host.presenter) ?? unanswered
            }
        }
    }
}

/// An identity whose plugin unwraps the file key: `AGE-PLUGIN-NAME-1…` (Bech32, upper case). What it holds is the
/// plugin's (a YubiKey's serial and slot, or a key), so it is kept as a secret and given to the plugin only on its
/// standard input.
package struct AgePluginIdentity: AgeIdentity {
    package let plugin: String
    let encoding: SecureBytes
    let program: String
    let host: AgePluginHost

    /// Reads `AGE-PLUGIN-NAME-1…`, and finds its plugin's program.
    package init(encoded text: UnsafeRawBufferPointer, host: AgePluginHost) throws(AgeError) {
        var decoded: (prefix: [UInt8], data: [UInt8])
        do throws(Bech32.Failure) {
            decoded = try Bech32.decodeWithPrefix(text)
        } catch {
            throw .invalidIdentity("its Bech32 is malformed")
        }
        Sodium.zero(&decoded.data)
        let head = Array("AGE-PLUGIN-".utf8)
        let name = decoded.prefix.dropFirst(head.count).dropLast().map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        guard decoded.prefix.starts(with: head), decoded.prefix.last == UInt8(ascii: "-"), AgePlugin.isValidName(name) else {
            throw .invalidIdentity("a plugin's identity begins with \"AGE-PLUGIN-\", the plugin's name and \"-\"")
        }
        plugin = String(decoding: name, as: UTF8.self)
        encoding = SecureBytes(copying: text)
        self.host = host
        program = try AgePluginConnection.program(for: plugin, environment: host.environment)
    }

    /// identity-v1: phase 1 gives the plugin this identity and every stanza of the header (all of them: stanza types
    /// are not tied to plugin names, and a plugin ignores those it does not know); in phase 2 it sends the file key
    /// if it could unwrap one, then `done`. Nil when it sent none: the file is not for this identity.
    package func fileKey(from stanzas: [AgeStanza]) throws(AgeError) -> SecureBytes? {
        let connection = try AgePluginConnection.start(program, name: plugin, stateMachine: "identity-v1", host: host)
        defer { connection.stop() }
        try connection.send("add-identity", secretArgument: encoding)
        for stanza in stanzas {
            try connection.send("recipient-stanza", ["0", stanza.type] + stanza.arguments, body: stanza.body)
        }
        try connection.send("done")
        var fileKey: SecureBytes?
        var unanswered: String?
        while true {
            var message = try connection.receive()
            switch message.type {
            case "file-key":
                defer { Sodium.zero(&message.body) }
                guard message.arguments == ["0"] else {
                    throw .pluginBrokeProtocol(plugin, reason: "a file-key is not for the one file key asked (index 0)")
                }
                guard fileKey == nil else { throw .pluginBrokeProtocol(plugin, reason: "it sent the file key twice") }
                guard message.body.count == FileKeyWrap.fileKeyBytes else {
                    throw .pluginBrokeProtocol(plugin, reason: "its file key is not \(FileKeyWrap.fileKeyBytes) bytes")
                }
                fileKey = SecureBytes(copying: message.body.withUnsafeBytes { $0 })
                try connection.send("ok")
            case "error":
                try? connection.send("ok")
                throw .pluginRefused(plugin, message: AgePlugin.errorMessage(message), unanswered: unanswered)
            case "done":
                connection.finish()
                return fileKey
            default:
                unanswered = try AgePlugin.answer(message, on: connection, presenter: host.presenter) ?? unanswered
            }
        }
    }
}

extension AgeFile {
    /// The recipient `text` is, as age reads one: a plugin's (`age1NAME1…`) or X25519 (`age1…`).
    package static func recipient(_ text: String, plugins: AgePluginHost) throws(AgeError) -> any AgeRecipient {
        AgePluginRecipient.isPluginRecipient(text) ? try AgePluginRecipient(text, host: plugins) : try AgeX25519Recipient(text)
    }

    /// The identities in an identity file as age reads one: `AGE-SECRET-KEY-1…` (X25519) and `AGE-PLUGIN-…` (a
    /// plugin's) lines, `#` comments and empty lines between. Any other line is refused, with its number but never
    /// its text.
    package static func identities(inFile contents: SecureBytes, plugins: AgePluginHost) throws(AgeError) -> [any AgeIdentity] {
        try contents.withUnsafeBytes { bytes in Result { () throws(AgeError) in
            var identities: [any AgeIdentity] = []
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
                var line = UnsafeRawBufferPointer(rebasing: line)
                if line.last == UInt8(ascii: "\r") { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
                if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
                if line.starts(with: Array("AGE-PLUGIN-".utf8)) {
                    do throws(AgeError) {
                        identities.append(try AgePluginIdentity(encoded: line, host: plugins))
                    } catch .pluginNotFound(let name) {
                        throw .pluginNotFound(name)
                    } catch {
                        throw .invalidIdentity("line \(number + 1) of the identity file is not a plugin's identity (AGE-PLUGIN-NAME-1…)")
                    }
                    continue
                }
                do {
                    identities.append(try AgeX25519Identity(encoded: line))
                } catch {
                    throw .invalidIdentity("line \(number + 1) of the identity file is not an age identity (AGE-SECRET-KEY-1… or AGE-PLUGIN-…)")
                }
            }
            guard !identities.isEmpty else { throw .invalidIdentity("the identity file holds no identity") }
            return identities
        } }.get()
    }
}
