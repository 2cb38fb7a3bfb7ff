import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// A session that turns on no optional step (no tracer, cache, monitors, cookie jar, retries or connectivity wait)
/// runs the same call machine with nothing to decide; these tests turn coalescing off as well, so each request
/// makes its own call. What every request gets must not depend on that: redirects, validation, the pool's
/// controls, limits and deadlines, the stale-connection resend, and a request's own retry rule or accessory. The
/// fault matrix runs every fault through such a session too.
@Suite("A lean session", .timeLimit(.minutes(1)))
struct LeanSessionTests {
    func withLeanSession(
        _ configure: (inout Configuration) -> Void = { _ in },
        transport: (any Transport)? = nil,
        _ body: (Session, TestServer) async throws -> Void
    ) async throws {
        try await withServerSession(
            transport: transport,
            {
                $0.scheduling.coalescesRequests = false
                configure(&$0)
            },
            body
        )
    }

    @Test func redirectsAreFollowedAndStatusesValidated() async throws {
        try await withLeanSession { session, server in
            let response = try await session.send(Request<Data>.get("/redirect/2"))
            #expect(response.status == .ok && response.url.path() == "/redirect/0" && server.hits("/redirect/2") == 1)
            let rejected = await courierError { _ = try await session.send(Request<Data>.get("/status/404")) }
            #expect(rejected?.code == .httpStatus && rejected?.status?.code == 404)
            let decoded = try await session.send(Request<Echo>.get("/echo", query: ["q": "1"])).value
            #expect(decoded.query["q"] == "1")
        }
    }

    @Test func thePoolCancelsItsRequestsAndEndsThemAtTheirDeadline() async throws {
        try await withLeanSession { session, _ in
            let held = Task { try await session.send(Request<Data>.get("/delay/5000").tag("held")) }
            await eventually("the request is in flight") { await session.pool.count == 1 }
            #expect(await session.pool.cancelAll(tag: "held") == 1)
            guard case .failure(let error) = await held.result else {
                Issue.record("a cancelled request got an answer")
                return
            }
            #expect((error as? CourierError)?.code == .cancelled)

            let late = await courierError {
                _ = try await session.send(Request<Data>.get("/delay/5000").timeout(.milliseconds(300)))
            }
            #expect(late?.code == .timeout && late?.timeoutKind == .total)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func theConcurrencyLimitQueuesRequests() async throws {
        try await withLeanSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, _ in
            async let first = session.send(Request<Data>.get("/delay/300"))
            async let second = session.send(Request<Data>.get("/delay/300"))
            await eventually("one runs and one waits") {
                await session.pool.snapshot().map(\.state).sorted { $0.rawValue < $1.rawValue } == [.running, .waiting]
            }
            let statuses = try await [first.status, second.status]
            #expect(statuses == [.ok, .ok])
            // Past its deadline while it waits for its slot, a request times out.
            async let holder = session.send(Request<Data>.get("/delay/600"))
            await eventually("the slot is taken") { await session.pool.count == 1 }
            let late = await courierError {
                _ = try await session.send(Request<Data>.get("/small").timeout(.milliseconds(200)))
            }
            #expect(late?.code == .timeout && late?.timeoutKind == .total)
            _ = try await holder
        }
    }

    /// A transport whose first answer meets a kept-alive connection the server had closed; later ones succeed.
    final class StaleFirst: Transport {
        let sends = Locked(0)
        func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse {
            let count = sends.withLock {
                $0 += 1
                return $0
            }
            if count == 1 {
                var stale = CourierError(
                    code: .connectionClosed,
                    message: "stale",
                    underlying: ChannelError.ioOnClosedChannel
                )
                stale.isStaleConnection = true  // how any transport reports it
                throw stale
            }
            return TransportResponse(status: .ok, headers: [:], body: ByteStream(chunks: [ByteBuffer(string: "fresh")]))
        }
        func shutdown() async throws {}
    }

    @Test func aStaleConnectionIsMetByOneResendAndTheSlotIsGivenBackOnce() async throws {
        let transport = StaleFirst()
        try await withLeanSession({ $0.scheduling.maxConcurrentRequests = 1 }, transport: transport) { session, _ in
            #expect(try await session.send(Request<String>.get("/x")).value == "fresh")
            #expect(transport.sends.withLock { $0 } == 2)
            // With the one slot leaked or given back twice, the next request would wait forever or run beside another.
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<3 { group.addTask { try await session.send(Request<Data>.get("/y")).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == [.ok, .ok, .ok])
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func rateLimitsRefuseOrHoldARequestBeforeItsSlot() async throws {
        let refusing = RateLimitRule(pathPrefix: "/small", limit: .minimumInterval(.seconds(60)), whenLimited: .fail)
        let holding = RateLimitRule(pathPrefix: "/echo", limit: .minimumInterval(.milliseconds(200)))
        try await withLeanSession({ $0.scheduling.rateLimits = [refusing, holding] }) { session, _ in
            _ = try await session.send(Request<Data>.get("/small"))
            #expect(
                await courierError { _ = try await session.send(Request<Data>.get("/small")) }?.code == .tooFrequent
            )
            let start = ContinuousClock.now
            _ = try await session.send(Request<Data>.get("/echo"))
            _ = try await session.send(Request<Data>.get("/echo"))
            #expect(start.duration(to: .now) >= .milliseconds(150), "the second request waited out its interval")
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func aRequestsOwnRetryPolicyAndAccessoryStillWork() async throws {
        final class Recorder: RequestAccessory {
            let stops = Locked(0)
            func requestDidStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>) {
                stops.withLock { $0 += 1 }
            }
        }
        try await withLeanSession { session, server in
            let retried = try await session.send(
                Request<String>.get("/flaky/plain?failures=1").retry(
                    RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))
                )
            )
            #expect(retried.value == "ok after 1 failures" && server.hits("/flaky/plain") == 2)
            let recorder = Recorder()
            _ = try await session.send(Request<Data>.get("/small").accessory(recorder))
            #expect(recorder.stops.withLock { $0 } == 1)
        }
    }
}
