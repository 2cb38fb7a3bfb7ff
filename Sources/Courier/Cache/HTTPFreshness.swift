import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 9111's arithmetic on one stored response: how long it stays fresh and how old it is.
struct HTTPFreshness {
    let options: CacheOptions

    /// Statuses a cache may store without an explicit lifetime (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The final statuses whose meaning Courier's cache knows (RFC 9110 §15), which `must-understand` asks for
    /// (RFC 9111 §5.2.2.3). 206 is among them: this cache stores and combines partial content (``PartialContent``).
    static let understood: Set<Int> = [
        200, 201, 202, 203, 204, 205, 206, 300, 301, 302, 303, 307, 308, 400, 401, 402, 403, 404, 405, 406,
        407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426, 451, 500, 501, 502, 503,
        504, 505,
    ]

    /// How long the response stays fresh after it was generated (§4.2.1), heuristics included (§4.2.2);
    /// `control` is the parsed `Cache-Control` of `headers`.
    func lifetime(status: Int, headers: HTTPFields, control: CacheControl, receivedAt: Date) -> Duration {
        if options.isShared, let shared = control.sharedMaxAge { return .seconds(shared) }
        if let maxAge = control.maxAge { return .seconds(maxAge) }
        let date = headers[.date].flatMap { HTTPDate.parse($0) } ?? receivedAt
        if let expires = headers[.expires] {
            // an invalid Expires means "already expired"
            guard let expiry = HTTPDate.parse(expires) else { return .zero }
            return .seconds(max(0, expiry.timeIntervalSince(date)))
        }
        // §4.2.2: heuristics for a status cacheable by default, or for any answer marked `public`.
        if Self.heuristicallyCacheable.contains(status) || control.isPublic,
            let modified = headers[.lastModified].flatMap({ HTTPDate.parse($0) })
        {
            let heuristic = Duration.seconds(max(0, date.timeIntervalSince(modified)) * options.heuristicFraction)
            return min(heuristic, options.maxHeuristicLifetime)
        }
        return .zero
    }

    /// Whether the response carries its own lifetime (`max-age`, `s-maxage` or `Expires`).
    func hasExplicitLifetime(_ headers: HTTPFields, control: CacheControl) -> Bool {
        control.maxAge != nil || (options.isShared && control.sharedMaxAge != nil) || headers[.expires] != nil
    }

    /// The `Age` a response carries: the first valid delta-seconds among its field lines and list members
    /// (RFC 9111 §5.1); an invalid one (`7200.0`, `-5`, `inf`) is ignored, and none means 0.
    static func ageValue(_ headers: HTTPFields) -> Int {
        for line in headers[values: .age] {
            for member in line.split(separator: ",", omittingEmptySubsequences: false) {
                if let seconds = DeltaSeconds.parse(member.trimmingOWS()) { return seconds }
            }
        }
        return 0
    }

    /// The age the response already had when it arrived (§4.2.3's `corrected_initial_age`).
    static func initialAge(headers: HTTPFields, requestTime: Date, responseTime: Date) -> Duration {
        let date = headers[.date].flatMap { HTTPDate.parse($0) } ?? responseTime
        let apparent = max(0, responseTime.timeIntervalSince(date))
        let corrected = Double(ageValue(headers)) + max(0, responseTime.timeIntervalSince(requestTime))
        return .seconds(max(apparent, corrected))
    }
}
