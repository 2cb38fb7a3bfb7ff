/// Trimming without Foundation's `CharacterSet`, which FoundationEssentials does not have.
extension StringProtocol {
    /// The text without leading and trailing whitespace other than line breaks: spaces, tabs and the other
    /// Unicode spaces (what `trimmingSpaces()` removed).
    package func trimmingSpaces() -> String { trimming { $0.isWhitespace && !$0.isNewline } }

    /// The text without leading and trailing whitespace and line breaks (`.whitespacesAndNewlines`).
    package func trimmingWhitespace() -> String { trimming(\.isWhitespace) }

    /// The text without leading and trailing spaces and tabs: HTTP's optional whitespace (OWS, RFC 9110 §5.6.3).
    package func trimmingOWS() -> String { trimming { $0 == " " || $0 == "\t" } }

    /// The text without the leading and trailing characters for which `remove` is true.
    package func trimming(_ remove: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !remove($0) }), let last = lastIndex(where: { !remove($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
