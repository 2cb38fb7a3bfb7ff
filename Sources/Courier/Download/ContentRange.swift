#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `Content-Range` response header (RFC 9110 §14.4): the bytes a 206 carries, or `bytes */N` on a 416.
package struct ContentRange: Hashable, Sendable {
    /// The first and last byte carried, inclusive as on the wire; `nil` for `bytes */N`.
    package var range: ClosedRange<Int64>?
    /// The complete length, `nil` when the server wrote `*`.
    package var completeLength: Int64?

    /// The first byte past the range (`last + 1`); `nil` for `bytes */N`. Never overflows: the parser refuses a
    /// last byte of `Int64.max`.
    package var end: Int64? { range.map { $0.upperBound + 1 } }
    /// How many bytes the range carries; `nil` for `bytes */N`.
    package var length: Int64? { range.map { $0.upperBound - $0.lowerBound + 1 } }

    /// Parses `bytes a-b/N`, `bytes a-b/*` and `bytes */N`; `nil` for anything else, including a last byte
    /// before the first, at or past the complete length, or so large that the byte after it has no number.
    package init?(_ header: String) {
        let text = header.trimmingSpaces()
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[1] == "*" {
            completeLength = nil
        } else {
            guard let length = Self.number(spec[1]) else { return nil }
            completeLength = length
        }
        if spec[0] == "*" {
            guard completeLength != nil else { return nil }
            range = nil
            return
        }
        let bounds = spec[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last,
            last < Int64.max
        else { return nil }
        if let completeLength, last >= completeLength { return nil }
        range = first...last
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(text)
    }
}
