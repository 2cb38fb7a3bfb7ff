import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Cache-Control` directives of a request or a response (RFC 9111 §5.2), parsed leniently: unknown
/// directives are skipped, a malformed number makes its directive absent (or, for `max-age`, stale: §4.2.1).
struct CacheControl: Sendable, Hashable {
    var maxAge: Int?
    var sharedMaxAge: Int?
    var maxStale: Int?
    var minFresh: Int?
    var staleWhileRevalidate: Int?
    var staleIfError: Int?
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    var proxyRevalidate = false
    var isPrivate = false
    var isPublic = false
    var onlyIfCached = false
    var mustUnderstand = false

    init(_ headers: HTTPFields) {
        for value in headers[values: .cacheControl] {
            for part in Self.directives(value) { apply(part.name, part.argument) }
        }
    }

    init() {}

    private mutating func apply(_ name: String, _ argument: String?) {
        let seconds = argument.flatMap(DeltaSeconds.parse)
        switch name {
        case "max-age": maxAge = seconds ?? 0  // an invalid max-age means stale
        case "s-maxage": sharedMaxAge = seconds ?? 0
        case "max-stale": maxStale = argument == nil ? Int.max : seconds
        case "min-fresh": minFresh = seconds
        case "stale-while-revalidate": staleWhileRevalidate = seconds
        case "stale-if-error": staleIfError = seconds
        case "no-store": noStore = true
        case "no-cache": noCache = true  // with field names too: revalidating every time is the safe reading
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "only-if-cached": onlyIfCached = true
        case "must-understand": mustUnderstand = true
        default: break
        }
    }

    /// `a, b=1, c="x, y"` → (a, nil), (b, 1), (c, x, y); names lowercased.
    static func directives(_ value: String) -> [(name: String, argument: String?)] {
        var result: [(String, String?)] = []
        for member in FieldList.members(value) {
            let part = member.trimmingSpaces()
            guard !part.isEmpty else { continue }
            if let equals = part.firstIndex(of: "=") {
                let name = part[..<equals].trimmingSpaces().lowercased()
                var argument = part[part.index(after: equals)...].trimmingSpaces()
                if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
                    argument = String(argument.dropFirst().dropLast())
                }
                result.append((name, argument))
            } else {
                result.append((part.lowercased(), nil))
            }
        }
        return result
    }
}
