import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A resumable upload's retry rule, asked by the upload's ``CallStateMachine`` after each failure the protocol
/// machine calls worth another try (``ResumableUploadStateMachine/Action/retry(_:)``): up to
/// ``ResumableUploadOptions/maxFailuresInARow`` failures with no byte confirmed in between, after a wait that
/// doubles from ``ResumableUploadOptions/retryDelay`` up to 30 s.
struct ResumableUploadRetryRule: RequestRetrier {
    let maxFailuresInARow: Int
    let backoff: Backoff

    init(_ options: ResumableUploadOptions) {
        maxFailuresInARow = max(1, options.maxFailuresInARow)
        backoff = Backoff(base: options.retryDelay, maximum: .seconds(30))
    }

    func retry(_ request: PreparedRequest, failedWith error: CourierError, attempt: Int) -> RetryResult {
        guard attempt < maxFailuresInARow else {
            return .doNotRetry(reason: "\(maxFailuresInARow) failures in a row")
        }
        return .retry(after: backoff.delay(after: attempt))
    }
}

/// A resumable upload's retries: the protocol machine says a failure is worth another try, and this upload's
/// ``CallStateMachine`` decides, with ``ResumableUploadRetryRule``, whether and when it comes. The upload tells
/// the call machine of each byte the server confirms beyond what it had (``CallStateMachine/progressed()``).
struct ResumableUploadRetries {
    var call: CallStateMachine
    private let request: PreparedRequest
    private let rule: ResumableUploadRetryRule

    init(target: URL, rule: ResumableUploadRetryRule) {
        request = PreparedRequest(method: .patch, url: target)
        call = CallStateMachine(continuing: request)
        self.rule = rule
        _ = call.start()
    }

    /// The failure's verdict: the protocol machine's next try after the wait the call machine asks for, or the
    /// failure that ends the upload.
    mutating func decide(after error: CourierError) -> Decision {
        var action = call.failed(error)
        action = call.asking(rule, about: request, action)
        switch action {
        case .wait(let delay): return .wait(delay)
        case .fail(let error): return .fail(error)
        case .exchange, .resend, .askRetryRule, .deliver, .done, .refresh:
            return .fail(
                CourierError(code: .invalidState, message: "the upload's call machine met \(action) out of turn")
            )
        }
    }

    /// The wait asked for is over: the call machine's next attempt begins.
    mutating func slept() {
        _ = call.slept()
    }

    /// What the call machine decided after a failure.
    enum Decision: Equatable {
        case wait(Duration)
        case fail(CourierError)
    }
}
