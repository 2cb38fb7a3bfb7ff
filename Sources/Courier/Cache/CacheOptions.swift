#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``ResponseCache`` keys and admits entries.
public struct CacheOptions: Sendable {
    /// Part of every key: change it (a cache version, YTKNetwork's `cacheVersion`) and every earlier entry
    /// stops matching.
    public var namespace: String
    /// Responses for which this returns `true` are never stored (tokens, personal data).
    public var excludes: (@Sendable (PreparedRequest, ResponseBody) -> Bool)?
    /// Let the caches store answers to requests that carry credentials (default `false`): the time-to-live
    /// policies then store answers to requests with `Authorization`, `Cookie`, `X-Api-Key` or `X-Auth-Token`, and
    /// the ``CachePolicy/http`` policy answers to requests with `Authorization` even without `public`,
    /// `must-revalidate` or `s-maxage` (which RFC 9111 §3.5 asks for). Whatever the policy, the key of an answer to
    /// a request with credentials holds a SHA-256 of them (never the credentials themselves), so it is served only
    /// to a request that carries the same ones.
    public var storesAuthorizedResponses: Bool
    /// Behave as a shared cache: honour `s-maxage` and never store `private` answers (default `false`: Courier
    /// caches for one user).
    public var isShared: Bool
    /// The part of the time since `Last-Modified` an answer without an explicit lifetime counts as fresh
    /// (RFC 9111 §4.2.2 suggests 10%).
    public var heuristicFraction: Double
    /// The longest heuristic lifetime (default one day).
    public var maxHeuristicLifetime: Duration

    /// Creates options; the defaults suit a client cache.
    public init(
        namespace: String = "",
        excludes: (@Sendable (PreparedRequest, ResponseBody) -> Bool)? = nil,
        storesAuthorizedResponses: Bool = false,
        isShared: Bool = false,
        heuristicFraction: Double = 0.1,
        maxHeuristicLifetime: Duration = .seconds(86_400)
    ) {
        self.namespace = namespace
        self.excludes = excludes
        self.storesAuthorizedResponses = storesAuthorizedResponses
        self.isShared = isShared
        self.heuristicFraction = heuristicFraction
        self.maxHeuristicLifetime = maxHeuristicLifetime
    }
}
