import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Redirects and retries", .timeLimit(.minutes(1)))
struct RedirectAndRetryTests {
    @Test func followsRedirectsToTheEnd() async throws {
        try await withServerSession { session, server in
            let response = try await session.send(Request<Echo>.get("/redirect/3?x=1"))
            #expect(response.value.path == "/redirect/0")
            #expect(response.url.path() == "/redirect/0")
            #expect(server.hits("/redirect/3") == 1 && server.hits("/redirect/0") == 1)
        }
    }

    /// A `Location` holding non-ASCII and an escape reaches the server encoded once: `/é%41` as `/%C3%A9%41`.
    @Test func aLocationIsRequestedAsTheServerWroteIt() async throws {
        try await withServerSession { session, server in
            let request = Request<Data>.get("/redirect-to", query: ["url": "/echo/é%41"]).withoutSessionValidators()
            let response = try await session.send(request)
            #expect(response.url.absoluteString.hasSuffix("/echo/%C3%A9%41"), "\(response.url)")
            let seen = server.requests("/redirect-to").count
            #expect(seen == 1)
        }
    }

    @Test func loopsAndLongChainsAreTypedErrors() async throws {
        try await withServerSession({ $0.redirects.maxHops = 2 }) { session, _ in
            #expect(
                await courierError { _ = try await session.send(Request<Data>.get("/redirect-loop")) }?.code
                    == .redirectLoop
            )
            #expect(
                await courierError { _ = try await session.send(Request<Data>.get("/redirect/5")) }?.code
                    == .tooManyRedirects
            )
        }
    }

    @Test func disabledRedirectsReturnThe3xx() async throws {
        try await withServerSession({
            $0.redirects = .none
            $0.validators = []
        }) { session, _ in
            let response = try await session.send(Request<Data>.get("/redirect/1"))
            #expect(response.status.code == 302 && response.headers[.location] == "/redirect/0")
        }
    }

    @Test func credentialsAreStrippedOnACrossOriginHop() async throws {
        try await withServerSession({ $0.defaultHeaders[.authorization] = "Bearer secret" }) { session, server in
            let sameOrigin = try await session.send(Request<Echo>.get("/redirect/1")).value
            #expect(sameOrigin.header("authorization") == "Bearer secret")
            // localhost is another origin than 127.0.0.1, though it reaches the same server.
            let target = "http://localhost:\(server.port)/echo"
            var request = Request<Echo>.get("/redirect-to", query: ["url": .string(target)])
            request.rawHeaders.append(("Cookie", "sid=1"))
            let crossOrigin = try await session.send(request).value
            #expect(crossOrigin.header("authorization") == nil)
            #expect(crossOrigin.header("cookie") == nil)
        }
    }

    @Test func postBecomesGetOn303AndKeepsItsBodyOn307() async throws {
        try await withServerSession { session, _ in
            let see = try await session.send(
                Request<Echo>.post("/redirect-to", body: .text("data"), parameters: [:])
                    .query(["url": "/echo", "status": 303])
            ).value
            #expect(see.method == "GET" && see.body.isEmpty)
            let keep = try await session.send(
                Request<Echo>.post("/redirect-to", body: .text("data")).query(["url": "/echo", "status": 307])
            ).value
            #expect(keep.method == "POST" && keep.body == "data")
        }
    }

    @Test func transientStatusesAreRetriedThenSucceed() async throws {
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10)) }) {
            session,
            server in
            let response = try await session.send(Request<String>.get("/flaky/a?failures=2"))
            #expect(response.value == "ok after 2 failures")
            #expect(server.hits("/flaky/a") == 3)
        }
    }

    @Test func postIsNotRetriedUnlessOptedIn() async throws {
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10)) }) {
            session,
            server in
            let error = await courierError {
                _ = try await session.send(Request<Data>.post("/flaky/b?failures=1", body: .text("x")))
            }
            #expect(error?.code == .httpStatus && error?.status?.code == 503)
            #expect(server.hits("/flaky/b") == 1)
            var optIn = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10))
            optIn.retriesNonIdempotent = true
            _ = try await session.send(Request<Data>.post("/flaky/c?failures=1", body: .text("x")).retry(optIn))
            #expect(server.hits("/flaky/c") == 2)
        }
    }

    @Test func retryAfterIsHonoured() async throws {
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1)) }) {
            session,
            server in
            let start = ContinuousClock.now
            _ = try await session.send(Request<Data>.get("/flaky/d?failures=1&status=429&retry-after=1"))
            #expect(start.duration(to: .now) >= .seconds(1))
            #expect(server.hits("/flaky/d") == 2)
        }
    }

    @Test func connectionResetIsRetried() async throws {
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5)) }) {
            session,
            server in
            _ = await courierError { _ = try await session.send(Request<Data>.get("/fault/reset")) }
            // Three attempts, and the free resend of the first: a reset before any answer is also what a kept-alive
            // connection the server had closed gives, so it goes again at once, once, as a stale connection does.
            #expect(server.hits("/fault/reset") == 4)
        }
    }
}
