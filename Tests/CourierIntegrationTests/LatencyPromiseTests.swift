import Courier
import CourierTestSupport
import CourierTesting
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

/// The few checks whose point is a latency: a cancelled request's caller hears within 100 ms, and retries end at
/// the total deadline. Everything else waits on events; these measure a clock, so they run one at a time (the test
/// run's width is capped too, see `Tests/CTestRunWidth`), which keeps the machine's queue short enough for the
/// promise itself to be the margin.
@Suite("Latency promises", .serialized, .timeLimit(.minutes(1)))
struct LatencyPromiseTests {
    /// Cancels a request while the server is dripping its body and measures how soon the caller hears, three
    /// times: the best must keep the 100 ms promise and every one must be far from the five seconds the body takes.
    /// The best of three, because the other suites running beside this one can delay any single wake-up (seen once
    /// in three parallel runs: 126 ms), while a cancel that waits for the body fails every time.
    func cancelWhileSending(transport: (any Transport)?) async throws {
        try await withServerSession(transport: transport) { session, server in
            var times: [Duration] = []
            for _ in 0..<3 {
                let partsBefore = server.counter("drip-parts")
                // 100 parts 50 ms apart: five seconds of body, so the request is mid-answer when it is cancelled.
                let task = Task { try await session.send(Request<Data>.get("/drip?size=1000&chunk=10&interval=50")) }
                await eventually("the server is sending the body") { server.counter("drip-parts") >= partsBefore + 2 }
                let cancelledAt = ContinuousClock.now
                task.cancel()
                let result = await task.result
                times.append(cancelledAt.duration(to: .now))
                guard case .failure(let error) = result else {
                    Issue.record("the request finished")
                    return
                }
                #expect((error as? CourierError)?.code == .cancelled)
            }
            let best = try #require(times.min())
            let worst = try #require(times.max())
            #expect(best < .milliseconds(100), "cancellation took \(times)")
            #expect(worst < .seconds(1), "cancellation took \(times)")
        }
    }

    @Test func cancellingTheTaskCancelsPromptlyOverAsyncHTTPClient() async throws {
        try await cancelWhileSending(transport: nil)
    }

    @Test func cancellingTheTaskCancelsPromptlyOverURLSession() async throws {
        try await cancelWhileSending(transport: URLSessionTransport())
    }

    /// Three tries, judged like the cancels: the best must end within 400 ms of the 500 ms deadline, and every one
    /// long before the 50 attempts' 2.5 s of backoff alone.
    @Test func retriesStopAtTheTotalDeadline() async throws {
        try await withServerSession({
            $0.retryPolicy = RetryPolicy(maxAttempts: 50, baseDelay: .milliseconds(50), maxDelay: .milliseconds(50))
            $0.timeouts.total = .milliseconds(500)
        }) { session, server in
            var times: [Duration] = []
            var attempts: [Int] = []
            for _ in 0..<3 {
                let hitsBefore = server.hits("/status/503")
                let start = ContinuousClock.now
                let error = await courierError { _ = try await session.send(Request<Data>.get("/status/503")) }
                times.append(start.duration(to: .now))
                // No retry starts once its backoff would pass the deadline. With full jitter the last one may start
                // just before it: then the deadline cuts that attempt and the caller hears the total timeout;
                // otherwise the caller hears the last 503. Each outcome is checked for what it must be.
                switch error?.code {
                case .httpStatus?: #expect(error?.status?.code == 503)
                case .timeout?: #expect(error?.timeoutKind == .total, "only the total deadline may end it")
                default: Issue.record("neither the last 503 nor the total timeout: \(String(describing: error))")
                }
                attempts.append(server.hits("/status/503") - hitsBefore)
            }
            // Retried, but not 50 times (a first attempt slowed past the deadline by a loaded machine is not retried).
            #expect((attempts.max() ?? 0) >= 2 && attempts.allSatisfy { $0 < 50 }, "attempts: \(attempts)")
            let best = try #require(times.min())
            let worst = try #require(times.max())
            #expect(best < .milliseconds(500) + .milliseconds(400), "the retries ran past the deadline: \(times)")
            #expect(worst < .milliseconds(2500), "the retries ran past the deadline: \(times)")
        }
    }
}
