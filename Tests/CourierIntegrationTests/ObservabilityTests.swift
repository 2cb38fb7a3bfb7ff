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
private final class MessageCollector: EventMonitor {
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
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
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
        #expect(
            try metrics.base.expectCounter("courier_requests_total", [("method", "GET"), ("status", "2xx")]).totalValue
                == 5
        )
        #expect(metrics.count("courier_requests_total") == 1)
        #expect(metrics.count("courier_request_duration_seconds") == 1)
        #expect(metrics.count("courier_response_bytes_total") == 1)
    }

    @Test func metricsCountRequestsByMethodAndStatusWithDurationsBytesRetriesAndCache() async throws {
        let metrics = TestMetrics()
        try await withServerSession({
            $0.metricsFactory = metrics
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
            $0.cache = ResponseCache(memory: MemoryCacheStore(), disk: nil)
        }) { session, _ in
            _ = try await session.send(Request<Data>.post("/echo", body: .text("12345")))
            _ = try await session.send(Request<Data>.get("/flaky/metrics?failures=2&status=503"))
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/404")) }
            _ = try await session.send(Request<Data>.get("/json?max-age=60"))
            _ = try await session.send(Request<Data>.get("/json?max-age=60"))
        }
        #expect(
            try metrics.expectCounter("courier_requests_total", [("method", "POST"), ("status", "2xx")]).totalValue == 1
        )
        #expect(
            try metrics.expectCounter("courier_requests_total", [("method", "GET"), ("status", "2xx")]).totalValue == 3
        )
        #expect(
            try metrics.expectCounter("courier_requests_total", [("method", "GET"), ("status", "4xx")]).totalValue == 1
        )
        #expect(try metrics.expectTimer("courier_request_duration_seconds", [("method", "GET")]).values.count == 4)
        #expect(try metrics.expectCounter("courier_request_bytes_total").totalValue == 5)
        #expect(try metrics.expectCounter("courier_response_bytes_total").totalValue > 5)
        #expect(try metrics.expectCounter("courier_retries_total", [("method", "GET")]).totalValue == 2)
        #expect(try metrics.expectCounter("courier_cache_hits_total").totalValue == 1)
        #expect(try metrics.expectCounter("courier_cache_misses_total").totalValue >= 1)
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
        #expect(try metrics.expectCounter("courier_download_bytes_total").totalValue == 300_000)
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
            #expect(failed.attributes["error.type"]?.toSpanAttribute() == "httpStatus")
        }
    }

    @Test func aDebugMessageCarriesTheOriginalAndCurrentRequestResponseErrorAndTiming() async throws {
        let collector = MessageCollector()
        try await withServerSession({ $0.monitors = [collector] }) { session, _ in
            _ = try await session.send(Request<Data>.get("/redirect/1").header("Authorization", "Bearer hidden"))
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/503")) }
        }
        let messages = collector.all
        #expect(messages.count == 2)
        let redirected = try #require(messages.first)
        #expect(redirected.originalRequest.url.path() == "/redirect/1")
        #expect(redirected.currentRequest.url.path() == "/redirect/0")
        #expect(redirected.response?.status == .ok && redirected.error == nil && redirected.attempts == 1)
        #expect(redirected.timing.timeToFirstByte != nil)
        #expect(redirected.description.contains("sent as: GET"))
        #expect(!redirected.description.contains("hidden"))
        let failed = try #require(messages.last)
        #expect(failed.error?.code == .httpStatus && failed.response == nil)
    }
}
