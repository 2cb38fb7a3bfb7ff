import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("Cancellation", .timeLimit(.minutes(1)))
struct CancellationTests {
    @Test func cancellingDuringRetryBackoffStops() async throws {
        // Retry-After fixes the wait at 5 s, so the cancel lands in the backoff (a jittered one could be too short).
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(5)) }) {
            session,
            server in
            let task = Task { try await session.send(Request<Data>.get("/status/503?retry-after=5")) }
            await eventually("the first attempt is answered") { server.hits("/status/503") == 1 }
            task.cancel()
            guard case .failure(let error) = await task.result else {
                Issue.record("finished")
                return
            }
            #expect((error as? CourierError)?.code == .cancelled)
            #expect(server.hits("/status/503") == 1)
        }
    }
}
