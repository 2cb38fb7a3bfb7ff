import Foundation

/// How a ``ResponseCache`` keys and admits entries.
public struct CacheOptions: Sendable {
    /// Part of every key: change it (a cache version, YTKNetwork's `cacheVersion`) and every earlier entry
    /// stops matching.
    public var namespace: String
    /// Responses for which this returns `true` are never stored (tokens, personal data).
    public var excludes: (@Sendable (PreparedRequest, ResponseBody) -> Bool)?
    /// Let the ``CachePolicy/http`` policy store answers to requests that carry `Authorization` even without
    /// `public`, `must-revalidate` or `s-maxage` (default `false`, as RFC 9111 §3.5 asks). The other policies
    /// store what they are told to.
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
    public init(namespace: String = "", excludes: (@Sendable (PreparedRequest, ResponseBody) -> Bool)? = nil,
                storesAuthorizedResponses: Bool = false, isShared: Bool = false, heuristicFraction: Double = 0.1,
                maxHeuristicLifetime: Duration = .seconds(86_400)) {
        self.namespace = namespace
        self.excludes = excludes
        self.storesAuthorizedResponses = storesAuthorizedResponses
        self.isShared = isShared
        self.heuristicFraction = heuristicFraction
        self.maxHeuristicLifetime = maxHeuristicLifetime
    }
}
