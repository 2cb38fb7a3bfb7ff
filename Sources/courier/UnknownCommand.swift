import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A first argument that names no subcommand (`courier gett URL`): told as such, with the nearest name, instead
/// of swift-argument-parser's "unexpected arguments".
enum UnknownCommand {
    /// The message for `word` when it is not one of `names` and does not look like an option; `nil` otherwise.
    static func message(for word: String, among names: [String]) -> String? {
        guard !word.hasPrefix("-"), !names.contains(word) else { return nil }
        var text = "courier: unknown command '\(CourierError.printable(word, limit: 40))'"
        let nearest = names.map { (name: $0, distance: distance(word.lowercased(), $0)) }.min {
            $0.distance < $1.distance
        }
        if let nearest, nearest.distance <= max(1, min(2, word.count / 2)) {
            text += "; did you mean '\(nearest.name)'?"
        }
        return text + " (see courier --help)"
    }

    /// Whether `word`, the first argument, is a URL rather than a command: it is no command's name and has a
    /// scheme, a `/`, a `:` or a `.` (`example.com`, `127.0.0.1:8080/echo`, `localhost:8080`).
    static func looksLikeURL(_ word: String, among names: [String]) -> Bool {
        guard !word.hasPrefix("-"), !names.contains(word) else { return false }
        return word.contains("://") || word.contains("/") || word.contains(":") || word.contains(".")
    }

    /// The edit distance between `a` and `b` (insertions, deletions and substitutions).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, left) in a.enumerated() {
            var current = [i + 1]
            for (j, right) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
