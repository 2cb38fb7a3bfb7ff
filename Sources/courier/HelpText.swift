import ArgumentParser

/// Help text as swift-argument-parser should wrap it.
enum HelpText {
    /// The help of a `--limit-rate` option, whose downloads the rate covers are `scope` ("all downloads").
    static func limitRate(covering scope: String) -> ArgumentHelp {
        ArgumentHelp(
            "The most bytes per second, such as 500K or 2M: K, M and G are powers of 1024 (KiB, MiB, GiB, as sizes are printed); \(scope) together."
        )
    }

    /// `text` with the lines of each paragraph joined, so swift-argument-parser wraps them to the terminal instead
    /// of breaking them again where the source broke them (ragged at 80 columns). Blank lines and lines indented
    /// by two spaces (examples) stay as they are, and a line ending in `:` (a heading) starts a line of its own.
    static func reflow(_ text: String) -> String {
        var lines: [String] = []
        var joinsNext = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let isProse = !line.isEmpty && !line.hasPrefix(" ")
            if isProse, joinsNext, !line.hasSuffix(":"), let last = lines.popLast() {
                lines.append(last + " " + line)
            } else {
                lines.append(line)
            }
            joinsNext = isProse && !line.hasSuffix(":")
        }
        return lines.joined(separator: "\n")
    }
}
