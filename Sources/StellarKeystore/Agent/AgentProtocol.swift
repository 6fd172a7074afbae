import StellarKeys
import StellarText

/// The agent's wire format (docs/AGENT.md): newline-delimited JSON-RPC 2.0 over a Unix stream socket, with
/// SEP-43's method names, result shapes and error codes where SEP-43 has them.
package enum AgentProtocol {
    /// No request comes near this (an envelope is at most 256 KiB as base64); a longer one is refused unread.
    package static let largestRequest = 1 << 20

    /// The range of the seconds a server waits for its person's answer before it withdraws a question: a client
    /// waits for an answer that long and a little more.
    package static let shortestConfirmationTimeout = 1
    package static let longestConfirmationTimeout = 600

    /// SEP-43's error codes.
    package enum ErrorCode: Int, Sendable {
        case `internal` = -1
        case invalidRequest = -3
        case rejected = -4
    }

    package enum Method: String, Sendable, CaseIterable {
        case getAddress, signMessage, signTransaction, signAuthEntry, signPayload
        case listKeys, status, lock, addKey, removeKey, shutdown

        /// Whether it makes a signature, and so is logged with its summary and, when the agent asks its person, shown first.
        var signs: Bool { [.signMessage, .signTransaction, .signAuthEntry, .signPayload].contains(self) }
    }
}

/// One request line, read strictly: a JSON object (no key twice), `"jsonrpc": "2.0"`, a `method` string, `params`
/// an object when present, and an `id` that is a string, an integer or null, echoed as given.
package struct AgentRequest: Sendable {
    /// The id as JSON text, ready to echo.
    package let id: [UInt8]
    package let method: AgentProtocol.Method
    package let params: [String: StrictJSON.Value]

    /// Why a line is not a request, with the id to answer it under (`null` when it could not be read).
    package struct Refusal: Error, Sendable, Equatable {
        package let id: [UInt8]
        package let message: String

        package init(id: [UInt8], message: String) { (self.id, self.message) = (id, message) }
    }

    package init(line: [UInt8]) throws(Refusal) {
        let members: [String: StrictJSON.Value]
        do {
            members = try StrictJSON.parse(line, integersOnly: false)
        } catch {
            throw Refusal(id: Array("null".utf8), message: "the request is not a JSON object: \((error as? StrictJSON.Violation)?.reason ?? "\(error)")")
        }
        switch members["id"] {
        case nil, .null?: id = Array("null".utf8)
        case .string(let text)?: id = Array(AgentJSON.quoted(text).utf8)
        case .integer(let digits)?: id = Array(digits.utf8)
        case let other?: throw Refusal(id: Array("null".utf8), message: "'id' is \(other.kind.rawValue), not a string, an integer or null")
        }
        let id = id
        guard members["jsonrpc"] == .string("2.0") else { throw Refusal(id: id, message: "'jsonrpc' must be \"2.0\"") }
        guard let name = members["method"]?.string else { throw Refusal(id: id, message: "'method' must be a string") }
        guard let method = AgentProtocol.Method(rawValue: name) else {
            throw Refusal(id: id, message: "there is no method '\(TerminalText.escaped(name, limit: 40))'")
        }
        self.method = method
        switch members["params"] {
        case nil: params = [:]
        case .object(let object)?: params = object
        case let other?: throw Refusal(id: id, message: "'params' is \(other.kind.rawValue), not an object of named parameters")
        }
    }

    /// A string parameter; nil when absent.
    package func string(_ key: String) throws(Refusal) -> String? {
        switch params[key] {
        case nil: return nil
        case .string(let text)?: return text
        case let other?: throw Refusal(id: id, message: "'\(key)' is \(other.kind.rawValue), not a string")
        }
    }

    package func requiredString(_ key: String) throws(Refusal) -> String {
        guard let text = try string(key) else { throw Refusal(id: id, message: "'\(key)' is missing") }
        return text
    }

    package func base64(_ key: String) throws(Refusal) -> [UInt8]? {
        guard let text = try string(key) else { return nil }
        guard let bytes = Base64.decode(text) else { throw Refusal(id: id, message: "'\(key)' is not valid base64") }
        return bytes
    }

    /// An array of smart-account context rule ids (each 0 to 2³²−1), at most `SmartAccountCredential.maximumContextRules`;
    /// nil when absent.
    package func ruleIDs(_ key: String) throws(Refusal) -> [UInt32]? {
        switch params[key] {
        case nil, .null?: return nil
        case .array(let elements)?:
            guard !elements.isEmpty, elements.count <= SmartAccountCredential.maximumContextRules else {
                throw Refusal(id: id, message: "'\(key)' must hold 1 to \(SmartAccountCredential.maximumContextRules) rule ids")
            }
            var ids: [UInt32] = []
            for element in elements {
                guard case .integer(let digits) = element, let value = UInt32(digits) else {
                    throw Refusal(id: id, message: "'\(key)' must hold whole numbers from 0 to 4294967295")
                }
                ids.append(value)
            }
            return ids
        case let other?: throw Refusal(id: id, message: "'\(key)' is \(other.kind.rawValue), not an array of rule ids")
        }
    }

    /// The length of a token's PIN an `addKey` will send: 4 to 64 bytes, as `PIN(token:)` takes.
    package func pinLength() throws(Refusal) -> Int {
        guard case .integer(let digits)? = params["pinLength"], let value = Int(digits), (4...64).contains(value) else {
            throw Refusal(id: id, message: "'pinLength' must be 4 to 64 bytes")
        }
        return value
    }

    /// A whole number of seconds from 1 to a day; nil when absent.
    package func seconds(_ key: String) throws(Refusal) -> Int? {
        switch params[key] {
        case nil, .null?: return nil
        case .integer(let digits)?:
            guard let value = Int(digits), (1...86_400).contains(value) else {
                throw Refusal(id: id, message: "'\(key)' must be 1 to 86400 seconds")
            }
            return value
        case let other?: throw Refusal(id: id, message: "'\(key)' is \(other.kind.rawValue), not a number of seconds")
        }
    }
}

/// The little JSON the agent writes: results with strings, integers, booleans, arrays and objects, members in
/// the order given (so that an answer is the same bytes each time).
package indirect enum AgentJSON: Sendable, Equatable {
    case string(String), integer(Int), boolean(Bool), null
    case array([AgentJSON])
    case object([(String, AgentJSON)])

    package static func == (a: AgentJSON, b: AgentJSON) -> Bool { a.text == b.text }

    package var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    package func write(into out: inout String) {
        switch self {
        case .string(let text): out += Self.quoted(text)
        case .integer(let value): out += String(value)
        case .boolean(let value): out += value ? "true" : "false"
        case .null: out += "null"
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                out += Self.quoted(key) + ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as is (UTF-8).
    package static func quoted(_ text: String) -> String {
        // Addresses, signatures and envelopes: nothing to escape, and every answer has some.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 != 0x7F }) { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u00" + Hex.string([UInt8(scalar.value)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `{"jsonrpc":"2.0","id":…,"result":…}` and its newline.
    package static func result(id: [UInt8], _ result: AgentJSON) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":"#.utf8) + id + Array(#","result":"#.utf8) + Array(result.text.utf8) + [UInt8(ascii: "}"), 0x0A]
    }

    /// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":"…"}}` and its newline; with `reason`, also
    /// `"data":{"reason":…}`, a stable word for a client to branch on ("no-key": the agent holds no such key).
    package static func error(id: [UInt8], code: AgentProtocol.ErrorCode, message: String, reason: String? = nil) -> [UInt8] {
        var members: [(String, AgentJSON)] = [("code", .integer(code.rawValue)), ("message", .string(message))]
        if let reason { members.append(("data", .object([("reason", .string(reason))]))) }
        let error = AgentJSON.object(members)
        return Array(#"{"jsonrpc":"2.0","id":"#.utf8) + id + Array(#","error":"#.utf8) + Array(error.text.utf8) + [UInt8(ascii: "}"), 0x0A]
    }
}
