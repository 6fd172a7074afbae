import StellarKeys

/// A value of the JSON summary that has a structure of its own (a Soroban value, an authorization entry), so
/// that a program reads its parts instead of parsing the text a person reads.
public indirect enum JSONTree: Sendable, Equatable, Encodable {
    case string(String)
    case number(Int64)
    case bool(Bool)
    case array([JSONTree])
    case object([String: JSONTree])
    case null

    public func encode(to encoder: Encoder) throws {
        struct Key: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
        switch self {
        case .string(let text): var c = encoder.singleValueContainer(); try c.encode(text)
        case .number(let number): var c = encoder.singleValueContainer(); try c.encode(number)
        case .bool(let flag): var c = encoder.singleValueContainer(); try c.encode(flag)
        case .null: var c = encoder.singleValueContainer(); try c.encodeNil()
        case .array(let items): var c = encoder.unkeyedContainer(); for item in items { try c.encode(item) }
        case .object(let members):
            var c = encoder.container(keyedBy: Key.self)
            for (key, value) in members { try c.encode(value, forKey: Key(stringValue: key)) }
        }
    }
}

/// Soroban values as typed JSON: `{"type": "i128", "value": "-1"}`, every kind by its XDR name; integers wider
/// than 32 bits as decimal strings (JSON numbers lose precision past 2^53); bytes in hex; text as its string, or
/// `{"type": "string", "hex": …}` when it is not UTF-8; vectors and maps in full (JSON has no reader to tire).
enum SCValJSON {
    static func tree(_ value: XDR.SCVal) -> JSONTree {
        func typed(_ type: String, _ value: JSONTree) -> JSONTree { .object(["type": .string(type), "value": value]) }
        func text(_ type: String, _ bytes: [UInt8]) -> JSONTree {
            if let text = String(validating: bytes, as: UTF8.self) { return typed(type, .string(text)) }
            return .object(["type": .string(type), "hex": .string(Hex.string(bytes))])
        }
        switch value {
        case .b(let flag): return typed("bool", .bool(flag))
        case .void: return .object(["type": .string("void")])
        case .error: return typed("error", .string(String(SCValText.shown(value).dropFirst("error ".count))))
        case .u32(let number): return typed("u32", .number(Int64(number)))
        case .i32(let number): return typed("i32", .number(Int64(number)))
        case .u64(let number): return typed("u64", .string(String(number)))
        case .i64(let number): return typed("i64", .string(String(number)))
        case .timepoint(let seconds): return typed("timepoint", .string(String(seconds)))
        case .duration(let seconds): return typed("duration", .string(String(seconds)))
        case .u128, .i128, .u256, .i256:
            // The text form is "<type> <decimal>", exact.
            let parts = SCValText.exact(value).split(separator: " ", maxSplits: 1)
            return typed(String(parts[0]), .string(String(parts[1])))
        case .bytes(let bytes): return typed("bytes", .string(Hex.string(bytes.value)))
        case .str(let string): return text("string", string.value)
        case .sym(let symbol): return text("symbol", symbol.value)
        case .vec(let vector): return typed("vec", vector.map { .array($0.value.map(tree)) } ?? .null)
        case .map(let map):
            return typed("map", map.map { .array($0.value.map { .object(["key": tree($0.key), "value": tree($0.val)]) }) } ?? .null)
        case .address(let address): return typed("address", .string(SummaryText.address(address)))
        case .instance: return .object(["type": .string("instance")])
        case .ledgerKeyContractInstance: return .object(["type": .string("ledger_key_contract_instance")])
        case .nonceKey(let key): return typed("ledger_key_nonce", .string(String(key.nonce)))
        case .executableTag(let tag): return text("executable_tag", tag.value)
        }
    }

    /// An authorization entry: its credentials, strictness and invocation tree.
    static func entry(_ entry: XDR.SorobanAuthorizationEntry, strict: Bool) -> JSONTree {
        func address(_ kind: String, _ credentials: XDR.SorobanAddressCredentials) -> [String: JSONTree] {
            ["credentials": .string(kind), "address": .string(SummaryText.address(credentials.address)),
             "nonce": .string(String(credentials.nonce)), "signatureExpirationLedger": .number(Int64(credentials.signatureExpirationLedger)),
             "signature": tree(credentials.signature)]
        }
        var members: [String: JSONTree]
        switch entry.credentials {
        case .sourceAccount: members = ["credentials": .string("source_account")]
        case .address(let credentials): members = address("address", credentials)
        case .addressV2(let credentials): members = address("address_v2", credentials)
        case .addressWithDelegates(let credentials):
            members = address("address_with_delegates", credentials.addressCredentials)
            members["delegates"] = .number(Int64(credentials.delegates.count))
        }
        if case .sourceAccount = entry.credentials {} else { members["strict"] = .bool(strict) }
        members["invocation"] = invocation(entry.rootInvocation)
        return .object(members)
    }

    static func invocation(_ invocation: XDR.SorobanAuthorizedInvocation) -> JSONTree {
        var members: [String: JSONTree]
        switch invocation.function {
        case .contractFn(let call):
            members = ["contract": .string(SummaryText.address(call.contractAddress)),
                       "function": text(call.functionName.value), "args": .array(call.args.map(tree))]
        case .createContractHostFn(let create):
            members = ["create": .string(ContractCallText.created(create.contractIDPreimage, create.executable))]
        case .createContractV2HostFn(let create):
            members = ["create": .string(ContractCallText.created(create.contractIDPreimage, create.executable)),
                       "constructorArgs": .array(create.constructorArgs.map(tree))]
        }
        members["subInvocations"] = .array(invocation.subInvocations.map(Self.invocation))
        return .object(members)
    }

    private static func text(_ bytes: [UInt8]) -> JSONTree {
        String(validating: bytes, as: UTF8.self).map(JSONTree.string) ?? .string("(not UTF-8) " + Hex.string(bytes))
    }
}
