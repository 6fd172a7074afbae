import FoundationEssentials
import StellarKeys

/// How a Soroban value (`SCVal`) is shown to a person before signing: every kind by its own rule, each tagged with
/// its type where two kinds could otherwise look alike (`u32 7` is not `i128 7`, `symbol "a"` is not
/// `string "a"`), integers of every width as exact decimals, addresses as StrKeys, text quoted as every text from
/// an envelope is (`SummaryText.quoted`), bytes in hex.
///
/// A person reads it, so it has bounds: at most `deepest` levels of nesting and `widest` elements of one vector
/// or map, and bytes cut after `longestBytes`, each saying in place what it left out, and each an `Elision` with
/// the SHA-256 of what was left out, so that two values that differ only there never render alike. `exact` has no
/// bounds: two values that differ never render alike, which is how an authorisation entry is compared with the
/// call it authorises, and what an elision hashes.
enum SCValText {
    static let deepest = 4
    static let widest = 12
    static let longestBytes = 64

    /// The bounded form, and what it left out.
    static func shown(_ value: XDR.SCVal, elided: inout [Elision]) -> String {
        var context = Context(bounded: true)
        let text = render(value, depth: 0, &context)
        elided += context.elided
        return text
    }

    /// The bounded form alone, where what it leaves out is said elsewhere or not at all (an error code).
    static func shown(_ value: XDR.SCVal) -> String {
        var ignored: [Elision] = []
        return shown(value, elided: &ignored)
    }

    static func exact(_ value: XDR.SCVal) -> String {
        var context = Context(bounded: false)
        return render(value, depth: 0, &context)
    }

    private struct Context {
        let bounded: Bool
        var elided: [Elision] = []
    }

    private static func render(_ value: XDR.SCVal, depth: Int, _ context: inout Context) -> String {
        let bounded = context.bounded
        switch value {
        case .b(let flag): return "bool \(flag)"
        case .void: return "void"
        case .error(let error): return "error \(Self.error(error))"
        case .u32(let number): return "u32 \(number)"
        case .i32(let number): return "i32 \(number)"
        case .u64(let number): return "u64 \(number)"
        case .i64(let number): return "i64 \(number)"
        case .timepoint(let seconds): return "timepoint \(seconds) (\(SummaryText.time(seconds)))"
        case .duration(let seconds): return "duration \(seconds) s"
        case .u128(let parts): return "u128 " + WideInteger(words: [parts.hi, parts.lo], negative: false).decimal
        case .i128(let parts):
            return "i128 " + WideInteger(signedWords: [UInt64(bitPattern: parts.hi), parts.lo]).decimal
        case .u256(let parts):
            return "u256 " + WideInteger(words: [parts.hiHi, parts.hiLo, parts.loHi, parts.loLo], negative: false).decimal
        case .i256(let parts):
            return "i256 " + WideInteger(signedWords: [UInt64(bitPattern: parts.hiHi), parts.hiLo, parts.loHi, parts.loLo]).decimal
        case .bytes(let bytes): return "bytes " + hex(bytes.value, &context)
        case .str(let text): return "string " + SummaryText.quoted(text.value)
        case .sym(let symbol): return "symbol " + SummaryText.quoted(symbol.value)
        case .vec(let vector):
            guard let elements = vector?.value else { return "vec none" }
            return "[" + list(elements.map { ($0, nil) }, depth: depth, &context) + "]"
        case .map(let map):
            guard let entries = map?.value else { return "map none" }
            return "{" + list(entries.map { ($0.val, $0.key) }, depth: depth, &context) + "}"
        case .address(let address): return SummaryText.address(address)
        // Never an argument the host accepts, so a person sees only its kind; the exact form keeps every field,
        // so that two instances never compare alike.
        case .instance(let instance):
            guard bounded else { return "contract instance \(instance)" }
            context.elided.append(Elision("a contract instance's executable and storage not shown", hashing: "\(instance)", of: "their exact form"))
            return "contract instance"
        case .ledgerKeyContractInstance: return "the contract instance's ledger key"
        case .nonceKey(let key): return "nonce \(key.nonce)"
        case .executableTag(let tag): return "executable tag " + SummaryText.quoted(tag.value)
        }
    }

    /// The elements of a vector (`key` nil) or the entries of a map, within the bounds.
    private static func list(_ items: [(value: XDR.SCVal, key: XDR.SCVal?)], depth: Int, _ context: inout Context) -> String {
        if items.isEmpty { return "" }
        func exact(_ items: ArraySlice<(value: XDR.SCVal, key: XDR.SCVal?)>) -> String {
            items.map { item in (item.key.map { SCValText.exact($0) + ": " } ?? "") + SCValText.exact(item.value) }.joined(separator: ", ")
        }
        let (one, many) = items[0].key == nil ? ("element of a vector", "elements of a vector") : ("entry of a map", "entries of a map")
        if context.bounded && depth + 1 >= deepest {
            context.elided.append(Elision("\(Elision.count(items.count, one, many)) nested deeper than \(deepest) levels not shown",
                                          hashing: exact(items[...]), of: "their exact form"))
            return "… \(items.count) nested deeper than \(deepest) levels, not shown"
        }
        let shownItems = context.bounded ? items.prefix(widest) : items[...]
        var parts = shownItems.map { item in
            let value = render(item.value, depth: depth + 1, &context)
            return item.key.map { render($0, depth: depth + 1, &context) + ": " + value } ?? value
        }
        if shownItems.count < items.count {
            parts.append("… \(items.count - shownItems.count) more not shown")
            context.elided.append(Elision("\(items.count - shownItems.count) of \(items.count) \(many) not shown",
                                          hashing: exact(items[shownItems.count...]), of: "their exact form"))
        }
        return parts.joined(separator: ", ")
    }

    private static func hex(_ bytes: [UInt8], _ context: inout Context) -> String {
        guard context.bounded, bytes.count > longestBytes else { return Hex.string(bytes) }
        context.elided.append(Elision("\(bytes.count) bytes, \(bytes.count - longestBytes) not shown",
                                      hashing: bytes, of: "all \(bytes.count)"))
        return Hex.string(Array(bytes.prefix(longestBytes))) + "… (\(bytes.count) bytes)"
    }

    private static func error(_ error: XDR.SCError) -> String {
        switch error {
        case .contractCode(let code): "contract code \(code)"
        case .code(let code): "\(code.xdrName)"
        case .codeContext(let code): "context \(code.xdrName)"
        case .codeStorage(let code): "storage \(code.xdrName)"
        case .codeObject(let code): "object \(code.xdrName)"
        case .codeCrypto(let code): "crypto \(code.xdrName)"
        case .codeEvents(let code): "events \(code.xdrName)"
        case .codeBudget(let code): "budget \(code.xdrName)"
        case .codeValue(let code): "value \(code.xdrName)"
        case .codeAuth(let code): "auth \(code.xdrName)"
        }
    }
}

/// A two's-complement integer of 64-bit words, most significant first, for exact decimals of Soroban's 128- and
/// 256-bit integers (no floating point, no rounding).
struct WideInteger {
    /// The magnitude, most significant word first.
    var words: [UInt64]
    var negative: Bool

    init(words: [UInt64], negative: Bool) {
        self.words = words
        self.negative = negative
    }

    /// Words in two's complement: the top bit is the sign.
    init(signedWords: [UInt64]) {
        guard let top = signedWords.first, top >> 63 == 1 else {
            self.init(words: signedWords, negative: false)
            return
        }
        // The magnitude of a negative number: invert every word, then add one.
        var magnitude = signedWords.map { ~$0 }
        var index = magnitude.count - 1
        while index >= 0 {
            let (sum, overflow) = magnitude[index].addingReportingOverflow(1)
            magnitude[index] = sum
            if !overflow { break }
            index -= 1
        }
        self.init(words: magnitude, negative: true)
    }

    /// The exact decimal, by repeated division by 10^19 (the largest power of ten a word holds).
    var decimal: String {
        var remaining = words
        var chunks: [UInt64] = []
        let base: UInt64 = 10_000_000_000_000_000_000
        while remaining.contains(where: { $0 != 0 }) {
            var remainder: UInt64 = 0
            for index in remaining.indices {
                let (quotient, rest) = base.dividingFullWidth((high: remainder, low: remaining[index]))
                remaining[index] = quotient
                remainder = rest
            }
            chunks.append(remainder)
        }
        guard let last = chunks.popLast() else { return "0" }
        var text = String(last)
        for chunk in chunks.reversed() {
            let digits = String(chunk)
            text += String(repeating: "0", count: 19 - digits.count) + digits
        }
        return (negative ? "-" : "") + text
    }
}
