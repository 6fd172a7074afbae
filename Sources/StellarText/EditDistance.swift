/// How many one-element insertions, deletions and substitutions turn one sequence into another (Levenshtein):
/// the "did you mean" for a mistyped word, a phrase word or a command name alike.
package enum EditDistance {
    package static func between<Element: Equatable>(_ a: some Collection<Element>, _ b: some Collection<Element>) -> Int {
        var previous = Array(0...b.count)
        var current = previous
        for (i, x) in a.enumerated() {
            current[0] = i + 1
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
