import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import Courier

@Suite("Retry policy")
struct RetryPolicyTests {
    let get = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/x")!)
    let post = PreparedRequest(method: .post, url: URL(string: "https://h.example.com/x")!)
    let reset = CourierError(code: .connectionReset, message: "reset")

    func status(_ code: Int, retryAfter: String? = nil) -> CourierError {
        var error = CourierError.httpStatus(HTTPResponse.Status(code: code), bodyPreview: nil)
        error.retryAfter = retryAfter
        return error
    }

    @Test func backoffIsExponentialWithFullJitter() {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        #expect(
            policy.decide(attempt: 1, request: get, error: reset, random: { 0.5 }) == .retry(after: .milliseconds(50))
        )
        #expect(
            policy.decide(attempt: 3, request: get, error: reset, random: { 0.5 }) == .retry(after: .milliseconds(200))
        )
        // attempt 6 uncapped would wait up to 3.2 s (100 ms × 2⁵): maxDelay holds it to 1 s
        let long = RetryPolicy(maxAttempts: 10, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        guard case .retry(let capped) = long.decide(attempt: 6, request: get, error: reset, random: { 0.999 }) else {
            Issue.record("not retried")
            return
        }
        #expect(capped <= .seconds(1) && capped > .milliseconds(900))
        #expect(policy.decide(attempt: 2, request: get, error: reset, random: { 0 }) == .retry(after: .zero))
    }

    @Test func stopsAtMaxAttemptsAndOnNonRetryableErrors() {
        let policy = RetryPolicy(maxAttempts: 2)
        #expect(policy.decide(attempt: 2, request: get, error: reset) == .doNotRetry(reason: "attempt 2 of 2"))
        guard case .doNotRetry = policy.decide(attempt: 1, request: get, error: status(404)) else {
            Issue.record("404 retried")
            return
        }
        guard case .retry = policy.decide(attempt: 1, request: get, error: status(503)) else {
            Issue.record("503 not retried")
            return
        }
    }

    @Test func nonIdempotentMethodsOnlyWhenOptedIn() {
        #expect(
            RetryPolicy().decide(attempt: 1, request: post, error: reset)
                == .doNotRetry(reason: "POST is not idempotent")
        )
        guard case .retry = RetryPolicy(retriesNonIdempotent: true).decide(attempt: 1, request: post, error: reset)
        else {
            Issue.record("opted-in POST not retried")
            return
        }
    }

    @Test func streamedBodiesAreNeverRetried() {
        var put = PreparedRequest(method: .put, url: URL(string: "https://h.example.com/x")!)
        put.body = .stream(.empty, length: nil)
        guard case .doNotRetry = RetryPolicy().decide(attempt: 1, request: put, error: reset) else {
            Issue.record("stream retried")
            return
        }
        put.body = .stream(ByteStream(AsyncStream<ByteBuffer> { $0.finish() }, replayable: true), length: 1)
        guard case .retry = RetryPolicy().decide(attempt: 1, request: put, error: reset) else {
            Issue.record("a stream that starts again at each iteration is not retried")
            return
        }
    }

    @Test func retryAfterSecondsAndDatesAreHonoured() {
        let policy = RetryPolicy(maxDelay: .seconds(30))
        #expect(
            policy.decide(attempt: 1, request: get, error: status(429, retryAfter: "7")) == .retry(after: .seconds(7))
        )
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let later = "Tue, 14 Nov 2023 22:13:40 GMT"  // now + 20 s
        #expect(
            policy.decide(attempt: 1, request: get, error: status(503, retryAfter: later), now: now)
                == .retry(after: .seconds(20))
        )
        #expect(
            policy.decide(attempt: 1, request: get, error: status(503, retryAfter: "9999"))
                == .retry(after: .seconds(30))
        )
        #expect(RetryPolicy.parseRetryAfter("soon") == nil)
    }

    @Test func theBudgetStopsHammeringAFailingHost() {
        let budget = RetryBudget(ratio: 0.5, minimumRetries: 2)
        let policy = RetryPolicy(maxAttempts: 10, budget: budget)
        var retries = 0
        for _ in 0..<10 {
            budget.deposit(host: "h.example.com")
            if case .retry = policy.decide(attempt: 1, request: get, error: reset) { retries += 1 }
        }
        #expect(retries < 10)
        #expect(retries >= 2)
        #expect(budget.withdraw(host: "other.example.com"))
    }
}
