import CoreMetrics
import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import Testing
import Tracing

/// Keeps every debug message a session delivers.
final class MessageCollector: EventMonitor {
    private let messages = Locked<[DebugMessage]>([])
    var all: [DebugMessage] { messages.withLock { $0 } }
    func didFinish(with message: DebugMessage) { messages.withLock { $0.append(message) } }
}

/// A metrics factory that counts the counters and timers asked of it, and hands the asking on to `TestMetrics`.
private final class CountingFactory: MetricsFactory {
    let base = TestMetrics()
    private let made = Locked<[String: Int]>([:])
    func count(_ label: String) -> Int { made.withLock { $0[label] ?? 0 } }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        made.withLock { $0[label, default: 0] += 1 }
        return base.makeCounter(label: label, dimensions: dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        base.makeMeter(label: label, dimensions: dimensions)
    }
    let recorders = Locked<[String: Int]>([:])
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        recorders.withLock { $0[label, default: 0] += 1 }
        return base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        made.withLock { $0[label, default: 0] += 1 }
        return base.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}

@Suite("Metrics, tracing and debug messages")
struct ObservabilityTests {
    @Test func instrumentsAreMadeOncePerLabelSetNotPerRequest() async throws {
        let metrics = CountingFactory()
        try await withServerSession({ $0.metricsFactory = metrics }) { session, _ in
            for _ in 0..<5 { _ = try await session.send(Request<Data>.get("/small")) }
        }
        let port = try #require(metrics.base.timers.first?.dimensions.first { $0.0 == "server.port" }?.1)
        let dimensions = [
            ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", port),
            ("http.response.status_code", "200"),
        ]
        #expect(try metrics.base.expectTimer("http.client.request.duration", dimensions).values.count == 5)
        #expect(metrics.count("http.client.request.duration") == 1)
        #expect(metrics.recorders.withLock { $0["http.client.response.body.size"] ?? 0 } == 1)
    }

    /// The names are OpenTelemetry's HTTP client conventions, spelled once in `TelemetryNames`.
    @Test func theNamesAreOpenTelemetrysHTTPClientConventions() {
        #expect(TelemetryNames.Metric.requestDuration == "http.client.request.duration")
        #expect(TelemetryNames.Metric.requestBodySize == "http.client.request.body.size")
        #expect(TelemetryNames.Metric.responseBodySize == "http.client.response.body.size")
        #expect(TelemetryNames.Attribute.requestMethod == "http.request.method")
        #expect(TelemetryNames.Attribute.responseStatusCode == "http.response.status_code")
        #expect(TelemetryNames.Attribute.serverAddress == "server.address")
        #expect(TelemetryNames.Attribute.serverPort == "server.port")
        #expect(TelemetryNames.Attribute.errorType == "error.type")
        #expect(TelemetryNames.Attribute.resendCount == "http.request.resend_count")
        #expect(TelemetryNames.Metric.activeRequests == "http.client.active_requests")
        for name in [
            TelemetryNames.Metric.retries, TelemetryNames.Metric.cacheHits, TelemetryNames.Metric.cacheMisses,
            TelemetryNames.Metric.downloadBytes, TelemetryNames.Metric.coalescedCalls,
            TelemetryNames.Metric.queuedRequests,
        ] {
            #expect(name.hasPrefix("courier."), "Courier's own metrics are prefixed: \(name)")
        }
    }

    @Test func metricsCountRequestsByMethodAndStatusWithDurationsBytesRetriesAndCache() async throws {
        let metrics = TestMetrics()
        try await withServerSession({
            $0.metricsFactory = metrics
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
            $0.cache = ResponseCache(memory: MemoryCacheStore(), disk: nil)
        }) { session, server in
            _ = try await session.send(Request<Data>.post("/echo", body: .text("12345")))
            _ = try await session.send(Request<Data>.get("/flaky/metrics?failures=2&status=503"))
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/404")) }
            _ = try await session.send(Request<Data>.get("/json?max-age=60"))
            _ = try await session.send(Request<Data>.get("/json?max-age=60"))
            _ = await courierError {
                _ = try await session.send(
                    Request<Data>.get("http://127.0.0.1:9/refused").retry(RetryPolicy(maxAttempts: 1))
                )
            }
            let server = [("server.address", "127.0.0.1"), ("server.port", String(server.port))]
            func calls(_ method: String, _ status: Int, error: String? = nil) throws -> Int {
                let dimensions =
                    [("http.request.method", method)] + server + [("http.response.status_code", String(status))]
                    + (error.map { [("error.type", $0)] } ?? [])
                return try metrics.expectTimer("http.client.request.duration", dimensions).values.count
            }
            #expect(try calls("POST", 200) == 1)
            #expect(try calls("GET", 200) == 3)
            #expect(try calls("GET", 404, error: "404") == 1, "error.type is the status code of a 4xx")
            let refused = [
                ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", "9"),
                ("error.type", "connectionFailed"),
            ]
            #expect(try metrics.expectTimer("http.client.request.duration", refused).values.count == 1)
            let sent = try metrics.expectRecorder(
                "http.client.request.body.size",
                [("http.request.method", "POST")] + server + [("http.response.status_code", "200")]
            )
            #expect(sent.values == [5])
        }
        #expect(try metrics.expectCounter("courier.retries", [("http.request.method", "GET")]).totalValue == 2)
        #expect(try metrics.expectCounter("courier.cache.hits").totalValue == 1)
        #expect(try metrics.expectCounter("courier.cache.misses").totalValue >= 1)
    }

    @Test func downloadsCountTheirBytes() async throws {
        let metrics = TestMetrics()
        let directory = try newTemporaryDirectory(prefix: "courier-metrics")
        try await withServerSession({ $0.metricsFactory = metrics }) { session, server in
            let manager = try DownloadManager(session: session)
            let download = try await manager.add(
                server.url("/file/300000"),
                to: .file(directory.appending(path: "f.bin"))
            )
            _ = try await download.completion()
        }
        #expect(try metrics.expectCounter("courier.download.bytes").totalValue == 300_000)
    }

    @Test func aSpanPerRequestWhoseContextTravelsInTheHeaders() async throws {
        let tracer = InMemoryTracer()
        try await withServerSession({ $0.tracer = tracer }) { session, server in
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/500")) }
            let spans = tracer.finishedSpans
            #expect(spans.count == 2)
            let ok = try #require(spans.first)
            #expect(ok.operationName == "GET" && ok.kind == .client)
            #expect(ok.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(ok.attributes["url.full"]?.toSpanAttribute() == .string(server.url("/echo").absoluteString))
            // The server received the very span's identifiers, injected by the tracer.
            #expect(echo.header(InMemoryTracer.spanIDKey) == ok.spanContext.spanID)
            #expect(echo.header(InMemoryTracer.traceIDKey) == ok.spanContext.traceID)
            let failed = try #require(spans.last)
            #expect(failed.status?.code == .error)
            #expect(failed.attributes["error.type"]?.toSpanAttribute() == "500", "a 5xx's error.type is its code")
            #expect(ok.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
        }
    }

    /// Calls answered by an identical call in flight are counted, and the pool's gauges per server rise while calls
    /// wait and run, and fall back to zero when they end.
    @Test func coalescedCallsAndThePoolsGaugesPerServer() async throws {
        let metrics = TestMetrics()
        try await withServerSession({
            $0.metricsFactory = metrics
            $0.scheduling.maxConcurrentRequests = 1
        }) { session, server in
            let server = [("server.address", "127.0.0.1"), ("server.port", String(server.port))]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 {  // identical: one call, four answered by it
                    group.addTask { _ = try await session.send(Request<Data>.get("/delay/300", query: ["q": "1"])) }
                }
                group.addTask { _ = try await session.send(Request<Data>.get("/delay/100", query: ["q": "2"])) }
                await eventually("one call runs while the other waits") {
                    let active = try? metrics.expectMeter("http.client.active_requests", server).lastValue
                    let queued = try? metrics.expectMeter("courier.pool.queued", server).lastValue
                    return active == 1 && queued == 1
                }
                try await group.waitForAll()
            }
            #expect(try metrics.expectMeter("http.client.active_requests", server).lastValue == 0)
            #expect(try metrics.expectMeter("courier.pool.queued", server).lastValue == 0)
        }
        #expect(try metrics.expectCounter("courier.coalesced_calls").totalValue == 4)
    }

    /// OpenTelemetry's conventions: every send after the first (a retry, a redirect, a send with a refreshed
    /// credential) is a span of its own under the call's, with `http.request.resend_count`, and its context is the
    /// one that travels in that send's headers.
    @Test func eachResendIsASpanUnderTheCallsWithItsResendCount() async throws {
        let tracer = InMemoryTracer()
        try await withServerSession({
            $0.tracer = tracer
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
        }) { session, server in
            _ = try await session.send(Request<Data>.get("/flaky/spans?failures=1&status=503"))
            let retried = tracer.finishedSpans
            #expect(retried.count == 2, "the call and its one resend")
            let call = try #require(retried.last)
            let resend = try #require(retried.first)
            #expect(resend.spanContext.parentSpanID == call.spanContext.spanID)
            #expect(resend.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
            #expect(resend.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(call.attributes["http.request.resend_count"] == nil, "the first send is the call's own span")

            let echo = try await session.send(Request<Echo>.get("/redirect/2")).value
            let redirected = Array(tracer.finishedSpans.dropFirst(2))
            #expect(redirected.count == 3, "the call and its two redirects")
            let counts = redirected.compactMap { $0.attributes["http.request.resend_count"]?.toSpanAttribute() }
            #expect(counts == [1, 2])
            // The last hop's request carried its own span's context, not the call's.
            #expect(echo.header(InMemoryTracer.spanIDKey) == redirected[1].spanContext.spanID)
            #expect(
                redirected[1].attributes["url.full"]?.toSpanAttribute()
                    == .string(server.url("/redirect/0").absoluteString)
            )
        }
    }

    @Test func aDebugMessageCarriesTheOriginalAndCurrentRequestResponseErrorAndTiming() async throws {
        let collector = MessageCollector()
        try await withServerSession({ $0.monitors = [collector] }) { session, _ in
            _ = try await session.send(Request<Data>.get("/redirect/1").header("Authorization", "Bearer hidden"))
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/503")) }
            _ = await courierError {
                _ = try await session.send(
                    Request<Data>.get("/redirect-to", query: ["url": "http://127.0.0.1:9/gone", "status": 303])
                )
            }
        }
        let messages = collector.all
        #expect(messages.count == 3)
        let redirected = try #require(messages.first)
        #expect(redirected.originalRequest.url.path() == "/redirect/1")
        #expect(redirected.currentRequest.url.path() == "/redirect/0")
        #expect(redirected.response?.status == .ok && redirected.error == nil && redirected.attempts == 1)
        #expect(redirected.timing.timeToFirstByte != nil)
        #expect(redirected.description.contains("sent as: GET"))
        #expect(!redirected.description.contains("hidden"))
        // The redirect it followed: the request as sent, the 302, where it went, and the hop's own time.
        #expect(redirected.redirects.count == 1)
        let hop = try #require(redirected.redirects.first)
        #expect(hop.request.url.path() == "/redirect/1" && hop.status == .found && hop.location.path() == "/redirect/0")
        #expect(hop.headers[.location] == "/redirect/0" && hop.timing.total <= redirected.timing.total)
        #expect(hop.timing.connection != nil)
        #expect(redirected.description.contains("302 → http://127.0.0.1:"))
        let failed = try #require(messages[1] as DebugMessage?)
        #expect(failed.error?.code == .httpStatus && failed.response == nil && failed.redirects.isEmpty)
        // A call that fails after a redirect names the request it failed on, not the one it began with.
        let gone = try #require(messages.last)
        #expect(gone.error?.code == .connectionFailed && gone.redirects.count == 1)
        #expect(gone.currentRequest.url.absoluteString == "http://127.0.0.1:9/gone")
    }
}
