/// What TOML's grammar says of single bytes, for the two small TOML readers (stellar-cli's key files, a
/// service's stellar.toml), which read different things and share only this.
package enum TOMLSyntax {
    /// `A-Z a-z 0-9 _ -`: what a bare key is made of.
    package static func isBareKeyByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
