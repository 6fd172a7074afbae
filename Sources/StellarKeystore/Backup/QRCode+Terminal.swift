extension QRCode {
    /// The code as text for a terminal, two module rows per line with the half blocks ▀ ▄ █ and spaces.
    ///
    /// A block lights its half of the cell in the terminal's foreground colour, so the blocks draw the *light*
    /// modules and the quiet zone, and the dark modules are spaces: on the usual light-on-dark terminal that shows
    /// dark modules on a light ground, as scanners expect (many read only that way). The quiet zone (§ 6.3.8, four
    /// modules) is drawn lit too, because the terminal's dark background around it would otherwise merge with the
    /// finders. A row below the last, when the count is odd, is left unlit.
    package func terminalLines(quietZone: Int = 4) -> [String] {
        let span = size + 2 * quietZone
        func isLit(_ x: Int, _ y: Int) -> Bool {
            guard (0..<span).contains(y) else { return false }
            let column = x - quietZone, row = y - quietZone
            guard (0..<size).contains(column), (0..<size).contains(row) else { return true }
            return !isDark(x: column, y: row)
        }
        return stride(from: 0, to: span, by: 2).map { top in
            String((0..<span).map { x -> Character in
                switch (isLit(x, top), isLit(x, top + 1)) {
                case (true, true): "█"
                case (true, false): "▀"
                case (false, true): "▄"
                case (false, false): " "
                }
            })
        }
    }
}
