/// The value of each byte as a symbol of `alphabet` (RFC 4648's base64 or base32), 0xFF for a byte that is not
/// one: a decoder's one lookup per symbol.
func decodingTable(_ alphabet: [UInt8]) -> [UInt8] {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
    return table
}
