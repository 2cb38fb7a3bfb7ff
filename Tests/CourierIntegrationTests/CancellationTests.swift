import Courier
import CourierTesting
import Foundation
import Testing

@Suite("Cancellation", .timeLimit(.minutes(1)))
struct CancellationTests {
    /// Cancels a request while the server is still dripping its body and measures how soon the caller hears.
    func cancelWhileSending(transport: (any Transport)?) async throws {
        try await withServerSession(transport: transport) { session, server in
            let task = Task { try await session.send(Request<Data>.get("/drip?size=1000&chunk=10&interval=50")) }
            try await Task.sleep(for: .milliseconds(300))  // the head and some body have arrived by now
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let result = await task.result
            let elapsed = cancelledAt.duration(to: .now)
            guard case .failure(let error) = result else { Issue.record("the request finished"); return }
            #expect((error as? CourierError)?.code == .cancelled)
            #expect(elapsed < .milliseconds(100), "cancellation took \(elapsed)")
        }
    }

    @Test func cancellingTheTaskCancelsPromptlyOverAsyncHTTPClient() async throws {
        try await cancelWhileSending(transport: nil)
    }

    @Test func cancellingTheTaskCancelsPromptlyOverURLSession() async throws {
        try await cancelWhileSending(transport: URLSessionTransport())
    }

    @Test func cancellingDuringRetryBackoffStops() async throws {
        // Retry-After fixes the wait at 5 s; a jittered backoff could be shorter than the 200 ms below.
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(5)) }) { session, server in
            let task = Task { try await session.send(Request<Data>.get("/status/503?retry-after=5")) }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            guard case .failure(let error) = await task.result else { Issue.record("finished"); return }
            #expect((error as? CourierError)?.code == .cancelled)
            #expect(server.hits("/status/503") == 1)
        }
    }
}
