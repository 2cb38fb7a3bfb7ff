/// Where a request's answer may come from: the network, the session's ``ResponseCache``, or both.
///
/// Set a default in ``Configuration/cachePolicy`` and override it per request with
/// ``Request/cachePolicy(_:)``. Policies other than ``networkOnly`` need ``Configuration/cache``.
///
/// ```swift
/// let feed = try await session.send(Request<Data>.get("/feed").cachePolicy(.cacheElseNetwork(ttl: .seconds(300))))
/// if feed.cacheInfo.isFromCache { print("served from the cache, \(feed.cacheInfo.age ?? .zero) old") }
/// ```
public enum CachePolicy: Sendable, Hashable {
    /// Never read or write the cache.
    case networkOnly
    /// Answer from the cache while the entry is younger than `ttl`; otherwise ask the network and store the
    /// answer (YTKNetwork's `cacheTimeInSeconds`, RBEFireworks' freshness cache, WYNetwork's `cacheDuration`).
    case cacheElseNetwork(ttl: Duration = CachePolicy.defaultTTL)
    /// Ask the network and store the answer; when the network fails, answer from the cache whatever the entry's
    /// age (WYNetwork's default for GET).
    case networkElseCache
    /// Ask the network and store the answer, like ``networkElseCache`` without the fallback. Use
    /// ``Session/responses(for:)`` to get the cached answer first, then the fresh one.
    case cacheThenNetwork
    /// Answer from the cache only; a miss fails with ``CourierError/Code/cacheMiss``.
    case cacheOnly
    /// HTTP caching as RFC 9111 describes it for a private cache: `Cache-Control`, `Expires`, heuristic
    /// freshness, conditional revalidation with `ETag` / `Last-Modified`, `Vary`, `stale-while-revalidate` and
    /// `stale-if-error`.
    case http

    /// The time-to-live of ``cacheElseNetwork(ttl:)`` when none is given: 30 days.
    public static let defaultTTL: Duration = .seconds(30 * 24 * 3600)

    /// Whether the policy ever looks at the cache.
    var usesCache: Bool { self != .networkOnly }
}

/// Where an answer came from: the network, or the cache and how old the entry was.
public struct CacheInfo: Sendable, Hashable {
    /// Whether the body came from the cache (also after a 304 revalidation).
    public var isFromCache: Bool
    /// The age of the cached answer (RFC 9111's current age), which its `Age` header also carries, in whole
    /// seconds; `nil` for an answer from the network.
    public var age: Duration?
    /// Whether the cache asked the server and got a 304, so the cached body was confirmed fresh.
    public var wasRevalidated: Bool
    /// Whether the answer was handed to the cache's stores on its way to the caller (the policy and the response
    /// allowed it). A store that cannot write logs a warning instead of failing, so this does not promise a file.
    public var wasStored: Bool

    /// Creates the value.
    public init(isFromCache: Bool = false, age: Duration? = nil, wasRevalidated: Bool = false, wasStored: Bool = false)
    {
        self.isFromCache = isFromCache
        self.age = age
        self.wasRevalidated = wasRevalidated
        self.wasStored = wasStored
    }

    /// An answer fetched from the network and not stored.
    public static let network = CacheInfo()
}
