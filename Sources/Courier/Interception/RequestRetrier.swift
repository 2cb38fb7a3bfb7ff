#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one rule that decides whether a failed attempt goes again, for every kind of call: a send, a stream, an
/// upload, each exchange of a download. ``RetryPolicy`` is the rule Courier ships; set your own as
/// ``Configuration/retryPolicy`` or per request with ``Request/retry(_:)``.
///
/// An attempt fails when the exchange throws (a timeout, a reset, a refused connection) or when its final answer
/// is an error status (400 and above), offered as a ``CourierError/Code/httpStatus`` error before any validator
/// sees it. A kept-alive connection the server had already closed is not a failure the rule hears of: such a
/// request never reached the server, and an idempotent one goes again at once, once.
///
/// ```swift
/// struct RetryOnceOnTimeout: RequestRetrier {
///     func retry(_ request: PreparedRequest, failedWith error: CourierError, attempt: Int) -> RetryResult {
///         attempt == 1 && error.code == .timeout ? .retry(after: .milliseconds(100)) : .doNotRetry(reason: "once")
///     }
/// }
/// let session = Session(configuration: Configuration { $0.retryPolicy = RetryOnceOnTimeout() })
/// ```
public protocol RequestRetrier: Sendable {
    /// Whether attempt number `attempt` (1 for the first) of `request`, which failed with `error`, goes again,
    /// and after how long. A delay that would end past the call's deadline ends the call instead.
    func retry(_ request: PreparedRequest, failedWith error: CourierError, attempt: Int) -> RetryResult

    /// Hears that a call starts, before its first attempt; a rule that rations retries (``RetryBudget``) counts
    /// calls here. Does nothing by default.
    func callWillStart(_ request: PreparedRequest)
}

extension RequestRetrier {
    /// Does nothing.
    public func callWillStart(_ request: PreparedRequest) {}
}

extension RetryPolicy: RequestRetrier {
    /// ``decide(attempt:request:error:now:random:)`` with the clock and a random jitter.
    public func retry(_ request: PreparedRequest, failedWith error: CourierError, attempt: Int) -> RetryResult {
        decide(attempt: attempt, request: request, error: error)
    }

    /// Deposits the call in the ``budget``, when the policy has one.
    public func callWillStart(_ request: PreparedRequest) {
        budget?.deposit(host: request.url.host() ?? "")
    }
}

extension RequestRetrier where Self == RetryPolicy {
    /// Exponential backoff with full jitter and a shared budget: ``RetryPolicy/exponential(maxAttempts:baseDelay:)``.
    public static func exponential(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(200)) -> RetryPolicy {
        RetryPolicy.exponential(maxAttempts: maxAttempts, baseDelay: baseDelay)
    }
}
