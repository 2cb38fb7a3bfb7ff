import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import NIOCore
import Testing
import Tracing

@Suite("What the connection did for a request: new or reused, where it leads, when it was ready")
struct ConnectionFactsTests {
    @Test func aNewConnectionThenTheSameOneReused() async throws {
        try await withServerSession { session, server in
            let first = try await session.send(Request<Data>.get("/bytes/10")).timing
            let connection = try #require(first.connection)
            #expect(!connection.isReused && !connection.isSecure)
            #expect(connection.remote == ConnectionFacts.Endpoint(address: "127.0.0.1", port: server.port))
            #expect(connection.local?.address == "127.0.0.1" && (connection.local?.port ?? 0) > 0)
            #expect(first.connectionsOpened == 1)
            let connect = try #require(first.timeToConnect)
            let sent = try #require(first.timeToRequestSent)
            let firstByte = try #require(first.timeToFirstByte)
            #expect(connect <= sent && sent <= firstByte && firstByte <= first.total)
            #expect(first.timeToSecureConnection == nil)
            #expect(connection.connected == connection.ready)

            // Plain HTTP/1.1 requests take the transport's lanes (one per event loop) in turn, each with its own
            // connections: later requests reuse those the first ones opened.
            var seen = [connection.id: connection]
            var reused = 0
            for _ in 0..<5 {
                let later = try await session.send(Request<Data>.get("/bytes/10")).timing
                let again = try #require(later.connection)
                if again.isReused {
                    reused += 1
                    #expect(seen[again.id]?.local == again.local && later.connectionsOpened == 0)
                    #expect(later.timeToConnect == nil && later.timeToSecureConnection == nil, "ready before the call")
                    #expect(later.timeToRequestSent != nil)
                } else {
                    #expect(seen[again.id] == nil && later.connectionsOpened == 1)
                    seen[again.id] = again
                }
            }
            #expect(seen.count + reused == 6 && seen.count <= System.coreCount)
        }
    }

    @Test func aStreamedResponseAndItsMonitorSayTheSame() async throws {
        let monitor = TimingMonitor()
        try await withServerSession({ $0.monitors = [monitor] }) { session, _ in
            let response = try await session.stream(Request<Data>.get("/bytes/100000"))
            for try await _ in response.body {}
            let connection = try #require(response.timing.connection)
            #expect(!connection.isReused && response.timing.connectionsOpened == 1)
            #expect(response.timing.firstByte != nil)
            await eventually("the monitor heard the end") { monitor.timings.count == 1 }
            #expect(monitor.timings.first?.connection?.id == connection.id)
        }
    }

    @Test func redirectsCountTheConnectionsTheyOpen() async throws {
        try await withServerSession { session, _ in
            // four exchanges over the lanes in turn (one per event loop): a connection for each lane they reach
            let timing = try await session.send(Request<Data>.get("/redirect/3")).timing
            #expect(timing.connectionsOpened == min(4, System.coreCount))
            #expect(timing.connection?.isReused == (System.coreCount < 4))
        }
    }

    @Test func redirectsOverClosedConnectionsCountEach() async throws {
        try await withServerSession {
            $0.defaultHeaders[.connection] = "close"
        } _: { session, _ in
            let timing = try await session.send(Request<Data>.get("/redirect/2")).timing
            #expect(timing.connectionsOpened == 3)
            #expect(timing.connection?.isReused == false)
        }
    }

    @Test func tlsConnectionsReportTheirHandshakeAsOneFigure() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        try await withServerSession(tls: .init(identity: leaf)) {
            $0.tls.default = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        } _: { session, server in
            let timing = try await session.send(Request<Data>.get("/bytes/10")).timing
            let connection = try #require(timing.connection)
            #expect(connection.isSecure && !connection.isReused && connection.connected == nil)
            #expect(connection.remote?.port == server.port)
            #expect(timing.timeToSecureConnection != nil && timing.timeToConnect == nil)
        }
    }

    @Test func aPinnedHostGoesThroughTheRelayWhoseConnectionHasNoAddresses() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        try await withServerSession(tls: .init(identity: leaf)) {
            $0.tls.default = TLSPolicy(
                trustRoots: .pem(authority.certificatePEM),
                pinning: .publicKeys(["sha256/" + leaf.publicKeyPin])
            )
        } _: { session, _ in
            let timing = try await session.send(Request<Data>.get("/bytes/10")).timing
            let connection = try #require(timing.connection)
            #expect(connection.remote == nil && connection.local == nil && connection.connected == nil)
            #expect(timing.timeToConnect == nil && timing.timeToSecureConnection == nil)
            #expect(timing.timeToRequestSent != nil && timing.connectionsOpened == 1)
        }
    }

    @Test func http2StreamsShareTheirConnection() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        try await withServerSession(tls: .init(identity: leaf, http2: true)) {
            $0.tls.default = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        } _: { session, server in
            let first = try #require(try await session.send(Request<Data>.get("/bytes/10")).timing.connection)
            let second = try #require(try await session.send(Request<Data>.get("/bytes/10")).timing.connection)
            #expect(!first.isReused && first.isSecure)
            #expect(second.isReused && second.id == first.id)
            #expect(server.counter("h2-connections") == 1)
        }
    }

    @Test func spansNameThePeerOfEverySend() async throws {
        let tracer = InMemoryTracer()
        try await withServerSession({ $0.tracer = tracer }) { session, server in
            _ = try await session.send(Request<Data>.get("/redirect/1"))
            let spans = tracer.finishedSpans
            #expect(spans.count == 2, "the call's span and the redirect's")
            for span in spans {
                #expect(span.attributes["network.peer.address"]?.toSpanAttribute() == "127.0.0.1")
                #expect(span.attributes["network.peer.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
            }
        }
    }

    @Test func connectionsCountOpenIdleOrActiveAndTheirLifetimes() async throws {
        let metrics = TestMetrics()
        try await withTestServer { server in
            let dimensions = [
                ("server.address", "127.0.0.1"), ("server.port", String(server.port)),
                ("network.peer.address", "127.0.0.1"), ("network.protocol.version", "1.1"),
            ]
            let idleState = [("http.connection.state", "idle")]
            let activeState = [("http.connection.state", "active")]
            let opened = try await withSession(Configuration { $0.metricsFactory = metrics }) { session in
                for _ in 0..<4 { _ = try await session.send(Request<Data>.get(server.url("/bytes/10").absoluteString)) }
                let idle = try metrics.expectMeter("http.client.open_connections", dimensions + idleState)
                let active = try metrics.expectMeter("http.client.open_connections", dimensions + activeState)
                await eventually("every connection is idle again") { idle.lastValue ?? 0 >= 1 && active.lastValue == 0 }
                return Int(idle.lastValue ?? 0)
            }
            #expect(opened >= 1 && opened <= System.coreCount)
            // the session's shutdown closed them: each left the gauge and recorded how long it lived
            await eventually("the connections closed") {
                let lifetimes = try? metrics.expectTimer("http.client.connection.duration", dimensions).values
                let idle = try? metrics.expectMeter("http.client.open_connections", dimensions + idleState)
                return lifetimes?.count == opened && idle?.lastValue == 0
            }
        }
    }

    @Test func anAnswerFromTheCacheHasNoConnection() async throws {
        try await withCachingSession(policy: .cacheElseNetwork(ttl: .seconds(60))) { session, _ in
            let request = Request<Data>.get("/cache/ttl?etag=none&last-modified=none")
            _ = try await session.send(request)
            let cached = try await session.send(request)
            #expect(cached.isFromCache && cached.timing.connection == nil)
        }
    }
}

/// Keeps the timing of every finished request.
private final class TimingMonitor: EventMonitor {
    private let seen = Locked<[Timing]>([])
    var timings: [Timing] { seen.withLock { $0 } }

    func didComplete(_ request: PreparedRequest, result: Result<ResponseBody, CourierError>, timing: Timing) {
        seen.withLock { $0.append(timing) }
    }
}
