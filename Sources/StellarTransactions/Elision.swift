import StellarKeys

/// Something a summary left out to stay readable: where, what and how much, and the SHA-256 of what was left out
/// (or of the whole it was cut from), so that two requests that differ only in the part not shown never render
/// alike. A person cannot compare two hashes by heart, but sees that they differ, and that something was left out.
struct Elision: Sendable, Equatable {
    /// Where, for a person: "operation 1, argument 2"; nil until the caller that knows it says.
    var place: String?
    /// What and how much, with the hash: "1 of 13 elements of a vector not shown (SHA-256 of their exact form …)".
    let text: String
    /// Whether it left out a whole part of a request (calls of a tree, most of a message), which is said before
    /// the parts left out of single values, so that no number of those can push it into the shared last line.
    let isWhole: Bool

    init(_ what: String, hashing bytes: [UInt8], of whose: String, isWhole: Bool = false) {
        text = "\(what) (SHA-256 of \(whose) \(Self.sha256(bytes)))"
        self.isWhole = isWhole
    }

    init(_ what: String, hashing text: String, of whose: String, isWhole: Bool = false) {
        self.init(what, hashing: Array(text.utf8), of: whose, isWhole: isWhole)
    }

    /// `1 element`, `2 elements`.
    static func count(_ number: Int, _ singular: String, _ plural: String) -> String {
        "\(number) " + (number == 1 ? singular : plural)
    }

    /// The same, said to be at `place` (within any place it already had).
    func at(_ place: String) -> Elision {
        var elision = self
        elision.place = self.place.map { "\(place), \($0)" } ?? place
        return elision
    }

    /// As a warning line says it.
    var warning: String { (place.map { "\($0): " } ?? "") + text }

    static func sha256(_ bytes: [UInt8]) -> String { Hex.string(bytes.withUnsafeBytes { Sodium.sha256($0) }) }

    /// At most this many elisions get a warning line each; the rest share one, so that a value elided a thousand
    /// times does not push everything else out of the summary.
    static let mostWarnings = 8

    /// The warning lines for `elisions`: one each for the first `mostWarnings`, then one for the rest, with the
    /// SHA-256 of their own lines (which hold their hashes).
    static func warnings(_ elisions: [Elision]) -> [String] {
        let elisions = elisions.filter(\.isWhole) + elisions.filter { !$0.isWhole }
        guard elisions.count > mostWarnings else { return elisions.map(\.warning) }
        let rest = elisions[mostWarnings...].map(\.warning)
        return elisions.prefix(mostWarnings).map(\.warning)
            + ["and \(rest.count) more parts not shown, in values and trees like those above (SHA-256 of their warnings, one a line, "
               + sha256(Array(rest.joined(separator: "\n").utf8)) + ")"]
    }
}
