#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A limit on how often requests to one endpoint may go out (HLNetworking's "requests sent too fast").
///
/// ```swift
/// let config = Configuration {
///     $0.scheduling.rateLimits = [
///         RateLimitRule(pathPrefix: "/search", limit: .minimumInterval(.milliseconds(500)), whenLimited: .fail),
///         RateLimitRule(host: "api.example.com", limit: .tokenBucket(capacity: 10, refillEvery: .milliseconds(100))),
///     ]
/// }
/// ```
public struct RateLimitRule: Sendable, Hashable {
    /// How fast requests may go.
    public enum Limit: Sendable, Hashable {
        /// At least this long between two requests.
        case minimumInterval(Duration)
        /// Bursts of up to `capacity` requests, then one more per `refillEvery`.
        case tokenBucket(capacity: Int, refillEvery: Duration)
    }

    /// What a request over the limit does.
    public enum Behaviour: Sendable, Hashable {
        /// Waits for its turn (while waiting it shows as waiting in the pool and can be cancelled).
        case wait
        /// Fails at once with ``CourierError/Code/tooFrequent``.
        case fail
    }

    /// The host the rule covers; `nil` for every host.
    public var host: String?
    /// The path prefix the rule covers (`/search` covers `/search` and `/search/users`); `/` for every path.
    public var pathPrefix: String
    /// The limit.
    public var limit: Limit
    /// What a request over the limit does.
    public var whenLimited: Behaviour

    /// Creates a rule. Every request the rule covers shares one allowance.
    public init(host: String? = nil, pathPrefix: String = "/", limit: Limit, whenLimited: Behaviour = .wait) {
        self.host = host
        self.pathPrefix = pathPrefix
        self.limit = limit
        self.whenLimited = whenLimited
    }

    /// Whether the rule covers `url`.
    public func covers(_ url: URL) -> Bool {
        if let host, host.lowercased() != url.host()?.lowercased() { return false }
        let path = url.path(percentEncoded: true).isEmpty ? "/" : url.path(percentEncoded: true)
        guard path.hasPrefix(pathPrefix) else { return false }
        // `/search` covers `/search/x` but not `/searching`.
        return pathPrefix.hasSuffix("/") || path.count == pathPrefix.count
            || path[path.index(path.startIndex, offsetBy: pathPrefix.count)] == "/"
    }
}

/// The allowance of one ``RateLimitRule``: a token bucket, where a minimum interval is a bucket of one.
/// A pure value; the clock is passed in.
struct TokenBucket: Sendable {
    enum Decision: Sendable, Equatable {
        /// Go now.
        case proceed
        /// A token is reserved; go after this wait.
        case wait(Duration)
        /// Over the limit; the next token comes after this wait. Nothing was reserved.
        case refuse(retryAfter: Duration)
    }

    let capacity: Double
    let refill: Duration
    private var tokens: Double
    private var updated: ContinuousClock.Instant

    init(_ limit: RateLimitRule.Limit, now: ContinuousClock.Instant) {
        switch limit {
        case .minimumInterval(let interval):
            capacity = 1
            refill = interval
        case .tokenBucket(let size, let every):
            capacity = Double(max(1, size))
            refill = every
        }
        tokens = capacity
        updated = now
    }

    /// Takes one token, reserving a future one when `waits` and none is left.
    mutating func take(now: ContinuousClock.Instant, waits: Bool) -> Decision {
        let refillSeconds = refill.seconds
        if now > updated {
            let earned = refillSeconds > 0 ? updated.duration(to: now).seconds / refillSeconds : capacity
            tokens = min(capacity, tokens + earned)
            updated = now
        }
        if tokens >= 1 {
            tokens -= 1
            return .proceed
        }
        let missing = 1 - tokens
        let wait = Duration.seconds(missing * refillSeconds)
        guard waits else { return .refuse(retryAfter: wait) }
        tokens -= 1  // negative: later callers queue behind this reservation
        return .wait(wait)
    }
}
