import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Partial content in the cache, as pure functions: a request's byte range (RFC 9110 §14.1.2), answering it from
/// a stored complete or partial response (§14.3, RFC 9111 §3.3), and combining a new `206` with a stored one
/// into a larger or complete response (RFC 9111 §3.4).
///
/// Only one range per request is answered from the cache (`bytes=0-99`, `bytes=100-`, `bytes=-100`); several
/// ranges, another unit or `If-Range` go to the server as they are. Two partial responses are combined only when
/// both carry the same strong `ETag`, and a stored entry holds one contiguous span: a new `206` that neither
/// overlaps nor touches it replaces it.
enum PartialContent {
    /// One byte range of a `Range` header.
    enum Spec: Equatable, Sendable {
        /// `bytes=first-last`, or `bytes=first-` when `last` is `nil`.
        case from(Int64, through: Int64?)
        /// `bytes=-count`: the last `count` bytes.
        case suffix(Int64)

        /// The bytes it names of a representation of `length` bytes; `nil` when it names none of them (RFC 9110
        /// §14.1.1: a first byte at or past the length, or a suffix of zero).
        func resolved(length: Int64) -> ClosedRange<Int64>? {
            switch self {
            case .from(let first, let last):
                guard first < length else { return nil }
                return first...min(last ?? (length - 1), length - 1)
            case .suffix(let count):
                guard count > 0, length > 0 else { return nil }
                return max(0, length - count)...(length - 1)
            }
        }
    }

    /// The one byte range of `header`; `nil` for several ranges, another unit or anything malformed.
    static func spec(_ header: String) -> Spec? {
        let text = header.trimmingSpaces()
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return nil }
        let bounds = text.dropFirst("bytes=".count).trimmingSpaces()
            .split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return nil }
        let first = number(bounds[0])
        let last = number(bounds[1])
        switch (bounds[0].isEmpty, bounds[1].isEmpty) {
        case (true, false): return last.map(Spec.suffix)
        case (false, true): return first.map { .from($0, through: nil) }
        case (false, false):
            guard let first, let last, first <= last else { return nil }
            return .from(first, through: last)
        case (true, true): return nil
        }
    }

    /// The bytes `entry` holds and the length of the whole: all of it for a `200`, its `Content-Range` for a
    /// `206` (whose body must be exactly that long); `nil` for anything else.
    static func span(of entry: CacheEntry) -> (range: ClosedRange<Int64>, length: Int64)? {
        switch entry.status {
        case 200:
            let length = Int64(entry.body.count)
            return length > 0 ? (0...(length - 1), length) : nil
        case 206:
            guard let value = entry.headers[.contentRange], let carried = ContentRange(value),
                let range = carried.range, let length = carried.completeLength,
                carried.length == Int64(entry.body.count)
            else { return nil }
            return (range, length)
        default:
            return nil
        }
    }

    /// Whether `entry` holds every byte `spec` names.
    static func holds(_ spec: Spec, _ entry: CacheEntry) -> Bool { heldRange(spec, entry) != nil }

    /// The bytes `spec` names of `entry`'s representation, with the span the entry holds and the whole length,
    /// when the entry holds all of them.
    private static func heldRange(
        _ spec: Spec,
        _ entry: CacheEntry
    ) -> (wanted: ClosedRange<Int64>, held: ClosedRange<Int64>, length: Int64)? {
        guard let (held, length) = span(of: entry), let wanted = spec.resolved(length: length),
            held.contains(wanted.lowerBound), held.contains(wanted.upperBound)
        else { return nil }
        return (wanted, held, length)
    }

    /// The `206` that answers `spec` from `entry` (RFC 9110 §14.3), when the entry holds every byte of it.
    static func answer(_ spec: Spec, from entry: CacheEntry) -> (headers: HTTPFields, body: Data)? {
        guard let (wanted, held, length) = heldRange(spec, entry) else { return nil }
        // Offsets from the body's own start: a `Data` that is a slice of another does not start at 0.
        let start = entry.body.startIndex + Int(wanted.lowerBound - held.lowerBound)
        let body = Data(entry.body[start..<(start + Int(wanted.upperBound - wanted.lowerBound + 1))])
        var headers = entry.headers
        headers[.contentRange] = "bytes \(wanted.lowerBound)-\(wanted.upperBound)/\(length)"
        headers[.contentLength] = String(body.count)
        return (headers, body)
    }

    /// Whether a `206` may be stored: one range with its complete length, and a strong `ETag` to combine it by.
    static func isStorable(status: Int, headers: HTTPFields, bodyCount: Int) -> Bool {
        guard status == 206, strongTag(headers) != nil, let value = headers[.contentRange],
            let carried = ContentRange(value), carried.range != nil, carried.completeLength != nil
        else { return false }
        return carried.length == Int64(bodyCount)
    }

    /// What to store when `new`, a partial response, arrives while `stored` is in the cache (RFC 9111 §3.4):
    /// the two combined when they carry the same strong `ETag` and their spans overlap or touch (with the new
    /// response's header fields; a `200` once every byte is there), `stored` when it is the complete response
    /// of the same version, and `new` otherwise.
    static func combine(_ stored: CacheEntry?, with new: CacheEntry) -> CacheEntry {
        guard let stored, let tag = strongTag(new.headers), strongTag(stored.headers) == tag,
            let (old, oldLength) = span(of: stored), let (added, length) = span(of: new), oldLength == length
        else { return new }
        if stored.status == 200 { return stored }
        guard added.lowerBound <= old.upperBound + 1, old.lowerBound <= added.upperBound + 1 else { return new }
        let union = min(old.lowerBound, added.lowerBound)...max(old.upperBound, added.upperBound)
        var body = Data(count: Int(union.upperBound - union.lowerBound + 1))
        body.replaceSubrange(Self.offsets(old, in: union), with: stored.body)
        body.replaceSubrange(Self.offsets(added, in: union), with: new.body)
        var combined = new
        combined.body = body
        if union.lowerBound == 0, union.upperBound == length - 1 {
            combined.status = 200
            combined.headers[.contentRange] = nil
        } else {
            combined.headers[.contentRange] = "bytes \(union.lowerBound)-\(union.upperBound)/\(length)"
        }
        combined.headers[.contentLength] = String(body.count)
        return combined
    }

    /// The strong entity tag of `headers`, `nil` when it has none or a weak one (only strong ones may combine).
    static func strongTag(_ headers: HTTPFields) -> String? {
        guard let tag = headers[.eTag], !tag.hasPrefix("W/") else { return nil }
        return tag
    }

    private static func offsets(_ range: ClosedRange<Int64>, in union: ClosedRange<Int64>) -> Range<Int> {
        Int(range.lowerBound - union.lowerBound)..<Int(range.upperBound - union.lowerBound + 1)
    }

    private static func number(_ text: Substring) -> Int64? {
        let digits = text.trimmingSpaces()
        guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(digits)
    }
}
