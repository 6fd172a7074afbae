/// Text made into one word for a POSIX shell, for the lines keystore prints to be `eval`ed or pasted: a path with
/// `$(…)`, a space or a quote in it must stay a path, never become a command.
enum ShellWord {
    /// `text` as it is when it holds only characters no shell treats specially, else in single quotes (each `'`
    /// inside written `'\''`).
    static func quoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: Array("/._-+:@%,=".utf8).contains(byte)
            }
        }
        if plain { return text }
        return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
