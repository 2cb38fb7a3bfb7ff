import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Faults from the server end in typed errors", .timeLimit(.minutes(1)))
struct FaultTests {
    func failure(
        _ path: String,
        _ configure: @escaping (inout Configuration) -> Void = { _ in }
    ) async throws -> CourierError? {
        try await withServerSession(configure) { session, _ in
            await courierError { _ = try await session.send(Request<Data>.get(path)) }
        }
    }

    @Test func closeMidBodyIsConnectionClosed() async throws {
        #expect(try await failure("/fault/close-at/1000?size=50000")?.code == .connectionClosed)
    }

    @Test func resetIsConnectionReset() async throws {
        let mid = try await failure("/fault/reset?after=5000")
        #expect(mid?.code == .connectionReset || mid?.code == .connectionClosed)
        let before = try await failure("/fault/reset")
        #expect(before?.code == .connectionReset || before?.code == .connectionClosed)
    }

    @Test func shortBodyAgainstContentLengthIsConnectionClosed() async throws {
        #expect(try await failure("/fault/wrong-length?claimed=1000&actual=10")?.code == .connectionClosed)
    }

    @Test func badChunkingIsInvalidResponse() async throws {
        #expect(try await failure("/fault/bad-chunked")?.code == .invalidResponse)
    }

    @Test func hugeHeaderIsInvalidResponse() async throws {
        #expect(try await failure("/fault/huge-header")?.code == .invalidResponse)
    }

    @Test func stallMidBodyHitsTheReadIdleTimeout() async throws {
        let error = try await failure("/fault/stall") { $0.timeouts.readIdle = .milliseconds(300) }
        #expect(error?.code == .timeout)
        #expect(error?.timeoutKind == .readIdle)
    }

    @Test func stallBeforeTheHeadHitsTheReadIdleTimeout() async throws {
        let error = try await failure("/fault/stall?at=head") { $0.timeouts.readIdle = .milliseconds(300) }
        #expect(error?.timeoutKind == .readIdle)
    }

    @Test func aBodyStalledPastTheTotalTimeoutEndsThere() async throws {
        let start = ContinuousClock.now
        let error = try await failure("/fault/stall") { $0.timeouts.total = .milliseconds(400) }
        #expect(error?.timeoutKind == .total)
        // The server stalls for an hour: ending within 30 s is ending at the timeout, on a loaded machine too.
        #expect(start.duration(to: .now) < .seconds(30))
    }

    @Test func slowBodyHitsTheTotalTimeout() async throws {
        let error = try await failure("/drip?size=100&chunk=1&interval=50") { $0.timeouts.total = .milliseconds(400) }
        #expect(error?.code == .timeout)
        #expect(error?.timeoutKind == .total)
        #expect(error?.description.contains("400 ms") == true)
    }

    @Test func perRequestTimeoutOverridesTheSession() async throws {
        try await withServerSession { session, _ in
            let error = await courierError {
                _ = try await session.send(Request<Data>.get("/delay/2000").timeout(.milliseconds(200)))
            }
            #expect(error?.timeoutKind == .total)
        }
    }

    @Test func connectionRefusedIsConnectionFailed() async throws {
        let error = try await withSession(Configuration { $0.timeouts.connect = .seconds(2) }) { session in
            await courierError { _ = try await session.send(Request<Data>.get("http://127.0.0.1:1/x")) }
        }
        #expect(error?.code == .connectionFailed)
    }

    @Test func gzipAndDeflateBodiesAreDecoded() async throws {
        try await withServerSession { session, _ in
            for path in ["/gzip", "/deflate"] {
                let response = try await session.send(Request<[String: ParameterValue]>.get(path))
                #expect(response.value["count"] == 200)
            }
        }
    }

    @Test func invalidAndTruncatedGzipAreDecompressionErrors() async throws {
        #expect(try await failure("/fault/bad-gzip")?.code == .decompression)
        #expect(try await failure("/fault/truncated-gzip")?.code == .decompression)
    }

    @Test func aDecompressionBombIsRefused() async throws {
        let error = try await failure("/fault/bomb")
        #expect(error?.code == .decompression)
        #expect(error?.message.contains("200×") == true)
    }

    @Test func bodyLimitIsEnforcedWhileStreaming() async throws {
        try await withServerSession({ $0.limits.maxBodyBytes = 100_000 }) { session, _ in
            let declared = await courierError { _ = try await session.send(Request<Data>.get("/bytes/200000")) }
            #expect(declared?.code == .bodyTooLarge)
            let chunked = await courierError {
                _ = try await session.send(Request<Data>.get("/bytes/200000?chunked=1"))
            }
            #expect(chunked?.code == .bodyTooLarge)
            var small = Request<Data>.get("/bytes/2000")
            small.maxResponseBytes = 1000
            #expect(await courierError { _ = try await session.send(small) }?.code == .bodyTooLarge)
            let allowed = try await session.send(Request<Data>.get("/bytes/90000"))
            #expect(allowed.body.count == 90_000)
        }
    }

    @Test func theSessionStillWorksAfterEveryFault() async throws {
        // 2 s: the stall's bound, and enough for a /small on a machine running every suite at once (1 s once
        // was not).
        try await withServerSession({ $0.timeouts.readIdle = .seconds(2) }) { session, _ in
            for path in [
                "/fault/close-at/10", "/fault/reset", "/fault/bad-chunked", "/fault/wrong-length", "/fault/stall",
                "/fault/huge-header",
            ] {
                _ = await courierError { _ = try await session.send(Request<Data>.get(path)) }
                let next = try await session.send(Request<String>.get("/small"))
                #expect(next.value.count == 1024)
            }
        }
    }
}
