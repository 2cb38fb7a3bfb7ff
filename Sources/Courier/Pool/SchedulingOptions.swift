public import HTTPTypes

/// How a session's ``RequestPool`` schedules requests: concurrency limits, rate limits and coalescing.
///
/// ```swift
/// let config = Configuration {
///     $0.scheduling.maxConcurrentRequests = 16
///     $0.scheduling.maxRequestsPerHost = 6
///     $0.scheduling.rateLimits = [RateLimitRule(pathPrefix: "/search", limit: .minimumInterval(.seconds(1)))]
/// }
/// ```
public struct SchedulingOptions: Sendable, Hashable {
    /// Requests using the network at once, over all hosts; `nil` (the default) for no limit of Courier's own.
    public var maxConcurrentRequests: Int?
    /// Requests using the network at once per host; `nil` (the default) for no limit of Courier's own.
    public var maxRequestsPerHost: Int?
    /// Rate limits per endpoint; the first rule covering a request applies.
    public var rateLimits: [RateLimitRule]
    /// Whether identical idempotent requests in flight share one call (on by default; a request can opt out
    /// with ``Request/coalesces``).
    public var coalescesRequests: Bool
    /// Request headers that change the answer, so requests that differ in them never share a call.
    public var coalescingHeaders: [HTTPField.Name]

    /// Creates options; the defaults set no limits and coalesce.
    public init(
        maxConcurrentRequests: Int? = nil,
        maxRequestsPerHost: Int? = nil,
        rateLimits: [RateLimitRule] = [],
        coalescesRequests: Bool = true,
        coalescingHeaders: [HTTPField.Name] = [
            .authorization, .cookie, .accept, .acceptEncoding, .acceptLanguage, .range,
        ]
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.maxRequestsPerHost = maxRequestsPerHost
        self.rateLimits = rateLimits
        self.coalescesRequests = coalescesRequests
        self.coalescingHeaders = coalescingHeaders
    }

    var limits: RequestScheduler.Limits {
        RequestScheduler.Limits(
            maxConcurrent: maxConcurrentRequests.map { max(1, $0) },
            maxPerHost: maxRequestsPerHost.map { max(1, $0) }
        )
    }
}

/// Short texts to show a user when a request fails, by kind of failure (HLNetworking's tips). Courier puts the
/// matching one in ``CourierError/userMessage``.
public struct UserMessages: Sendable, Hashable {
    /// For connection failures, resets and timeouts.
    public var connectionError: String
    /// For ``CourierError/Code/tooFrequent``.
    public var tooFrequent: String
    /// For ``CourierError/Code/offline``.
    public var offline: String

    /// Creates the messages; the defaults are plain English.
    public init(
        connectionError: String = "Could not reach the server. Please try again.",
        tooFrequent: String = "You are doing that too often. Please wait a moment.",
        offline: String = "You appear to be offline."
    ) {
        self.connectionError = connectionError
        self.tooFrequent = tooFrequent
        self.offline = offline
    }

    /// The message for `error`, or `nil` when none fits.
    public func message(for error: CourierError) -> String? {
        switch error.code {
        case .tooFrequent: tooFrequent
        case .offline: offline
        case .connectionFailed, .connectionClosed, .connectionReset, .timeout: connectionError
        default: nil
        }
    }
}
