/// A session length as people write it: `90s`, `15m`, `8h`, `1h30m`. Every number needs its unit: a bare `15`
/// read as seconds, beside a default shown as "15 min", made sessions end a minute early for whoever meant minutes.
package struct SessionDuration: CustomStringConvertible, Sendable {
    package let seconds: Int

    package init(seconds: Int) { self.seconds = seconds }

    /// What is wrong with a length as written, said as a fragment that follows the value.
    package struct Malformed: Error {
        package let reason: String
    }

    /// A length as written, within a session's bounds (`SessionStore.longestTTL`).
    package init(parsing argument: String) throws(Malformed) {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        var total = 0, number = 0, digits = 0
        for character in argument {
            if let digit = character.asciiDigitValue {
                number = number * 10 + digit
                digits += 1
                guard digits <= 6 else { throw Malformed(reason: "a number of at most 6 digits") }
            } else if let unit = units[character], digits > 0 {
                total += number * unit
                number = 0
                digits = 0
            } else if units[character] != nil {
                throw Malformed(reason: "each unit follows a number, as in 1h30m")
            } else {
                throw Malformed(reason: "give a number with its unit, s, m or h, as in 90s, 15m, 8h or 1h30m")
            }
        }
        guard digits == 0 else { throw Malformed(reason: "every number needs its unit, s, m or h: \(argument)m for minutes, \(argument)s for seconds") }
        guard !argument.isEmpty, total >= 1 else { throw Malformed(reason: "a session lasts at least 1s") }
        guard total <= SessionStore.longestTTL else { throw Malformed(reason: "a session lasts at most 24h") }
        seconds = total
    }

    package var description: String {
        let (hours, minutes, secs) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        return [(hours, "h"), (minutes, "min"), (secs, "s")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: " ")
    }
}

private extension Character {
    /// 0–9 for the ASCII digits only (`isNumber` and `wholeNumberValue` accept other scripts' digits too).
    var asciiDigitValue: Int? {
        guard let ascii = asciiValue, ascii >= UInt8(ascii: "0"), ascii <= UInt8(ascii: "9") else { return nil }
        return Int(ascii - UInt8(ascii: "0"))
    }
}
