import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The outcome of asking a ``RetryPolicy`` about a failed attempt.
public enum RetryResult: Sendable, Equatable {
    /// Try again after this delay.
    case retry(after: Duration)
    /// Give up; the reason is for logs.
    case doNotRetry(reason: String)
}

/// When and how soon to try a failed request again.
///
/// Exponential backoff with full jitter (a random delay between zero and `base × 2^(attempt−1)`, capped),
/// `Retry-After` honoured when the server sends it, idempotent methods only unless ``retriesNonIdempotent``,
/// and an optional shared ``RetryBudget`` so a failing host is not hammered.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included (3 means up to two retries).
    public var maxAttempts: Int
    /// The backoff scale.
    public var baseDelay: Duration
    /// The longest backoff.
    public var maxDelay: Duration
    /// Wait what `Retry-After` asks (up to ``maxDelay``) instead of the backoff.
    public var honoursRetryAfter: Bool
    /// Retry POST and PATCH as well. Off by default: the server may have acted on the first attempt.
    public var retriesNonIdempotent: Bool
    /// Statuses worth another attempt.
    public var retryableStatuses: Set<Int>
    /// Error codes worth another attempt.
    public var retryableErrors: Set<CourierError.Code>
    /// Limits retries per host to a fraction of requests; `nil` for no limit.
    public var budget: RetryBudget?

    /// Creates a policy.
    public init(
        maxAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(200),
        maxDelay: Duration = .seconds(10),
        honoursRetryAfter: Bool = true,
        retriesNonIdempotent: Bool = false,
        retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableErrors: Set<CourierError.Code> = [.timeout, .connectionFailed, .connectionClosed, .connectionReset],
        budget: RetryBudget? = nil
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.honoursRetryAfter = honoursRetryAfter
        self.retriesNonIdempotent = retriesNonIdempotent
        self.retryableStatuses = retryableStatuses
        self.retryableErrors = retryableErrors
        self.budget = budget
    }

    /// Exponential backoff with full jitter and a shared budget: the usual choice.
    public static func exponential(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(200)) -> RetryPolicy {
        RetryPolicy(maxAttempts: maxAttempts, baseDelay: baseDelay, budget: RetryBudget())
    }

    /// Decides about attempt number `attempt` (1 for the first) that failed with `error`.
    ///
    /// `random` returns a number in `0..<1`; tests pass a fixed one.
    public func decide(
        attempt: Int,
        request: PreparedRequest,
        error: CourierError,
        now: Date = Date(),
        random: () -> Double = { Double.random(in: 0..<1) }
    ) -> RetryResult {
        guard attempt < maxAttempts else { return .doNotRetry(reason: "attempt \(attempt) of \(maxAttempts)") }
        guard request.isIdempotent || retriesNonIdempotent else {
            return .doNotRetry(reason: "\(request.method.rawValue) is not idempotent")
        }
        guard request.body.isReplayable else {
            return .doNotRetry(reason: "the body is a stream and cannot be sent again")
        }
        let retryable =
            error.code == .httpStatus
            ? error.status.map { retryableStatuses.contains($0.code) } ?? false
            : retryableErrors.contains(error.code)
        guard retryable else { return .doNotRetry(reason: "\(error.code) is not retryable") }
        if let budget, !budget.withdraw(host: request.url.host() ?? "") {
            return .doNotRetry(reason: "the retry budget for \(request.url.host() ?? "this host") is spent")
        }
        if honoursRetryAfter, let header = error.retryAfter, let wait = Self.parseRetryAfter(header, now: now) {
            return .retry(after: min(wait, maxDelay))
        }
        return .retry(after: Backoff(base: baseDelay, maximum: maxDelay).delay(after: attempt) * random())
    }

    /// Reads `Retry-After` as seconds or as an HTTP date; `nil` when it is neither.
    public static func parseRetryAfter(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingSpaces()
        if let seconds = DeltaSeconds.parse(trimmed) { return .seconds(seconds) }
        guard let date = HTTPDate.parse(trimmed, now: now) else { return nil }
        // An HTTP date has a four-digit year, so the difference fits a Duration with room to spare.
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}

extension CourierError {
    /// The `Retry-After` header of the response that caused an ``Code/httpStatus`` error.
    public var retryAfter: String? {
        get { retryAfterValue }
        set { retryAfterValue = newValue }
    }
}
