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

/// A stream and a cache-then-network call take the road a send takes: each reaches the monitors, the accessories,
/// the metrics and a trace span, and its outcome is told once, when it has ended.
@Suite("Every kind of call is observed", .timeLimit(.minutes(1)))
struct EveryRoadIsObservedTests {
    /// What one session saw: its monitor's and accessory's events, its metrics and its spans.
    struct Seen {
        let events = Locked<[String]>([])
        let monitor = RecordingMonitor()
        let metrics = TestMetrics()
        let tracer = InMemoryTracer()

        func configure(_ configuration: inout Configuration) {
            configuration.monitors = [monitor]
            configuration.metricsFactory = metrics
            configuration.tracer = tracer
        }

        func accessory() -> RecordingAccessory { RecordingAccessory(name: "a", events: events) }

        /// How many calls the duration timer holds for `path`'s server with `status`.
        func timed(_ method: String, _ status: Int, port: Int) throws -> Int {
            try metrics.expectTimer(
                "http.client.request.duration",
                [
                    ("http.request.method", method), ("server.address", "127.0.0.1"), ("server.port", String(port)),
                    ("http.response.status_code", String(status)),
                ]
            ).values.count
        }
    }

    @Test func aStreamIsObservedWhenItsBodyHasBeenRead() async throws {
        let seen = Seen()
        try await withServerSession(seen.configure) { session, server in
            let response = try await session.stream(Request<Data>.get("/bytes/5000").accessory(seen.accessory()))
            #expect(seen.events.withLock { $0 } == ["a willStart /bytes/5000"], "nothing ends before the body does")
            #expect(seen.tracer.finishedSpans.isEmpty)
            var count = 0
            for try await chunk in response.body { count += chunk.readableBytes }
            #expect(count == 5000)
            #expect(
                seen.events.withLock { $0 }
                    == ["a willStart /bytes/5000", "a willStop 200 0 bytes", "a didStop 200 0 bytes"]
            )
            #expect(seen.monitor.all.contains("didComplete ok"))
            #expect(try seen.timed("GET", 200, port: server.port) == 1)
            let span = try #require(seen.tracer.finishedSpans.first)
            #expect(seen.tracer.finishedSpans.count == 1 && span.operationName == "GET" && span.kind == .client)
            #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(span.attributes["network.peer.address"]?.toSpanAttribute() == "127.0.0.1")
            #expect(span.attributes["network.peer.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
        }
    }

    @Test func aStreamThatFailsBeforeItsHeadIsObservedOnce() async throws {
        let seen = Seen()
        try await withServerSession(seen.configure) { session, _ in
            let request = Request<Data>.get("http://127.0.0.1:9/refused").accessory(seen.accessory())
            let error = await courierError { _ = try await session.stream(request) }
            #expect(error?.code == .connectionFailed)
            #expect(
                seen.events.withLock { $0 }
                    == ["a willStart /refused", "a willStop connectionFailed", "a didStop connectionFailed"]
            )
            #expect(seen.monitor.all.filter { $0.hasPrefix("didComplete") } == ["didComplete connectionFailed"])
            #expect(seen.tracer.finishedSpans.count == 1)
            #expect(seen.tracer.finishedSpans.first?.status?.code == .error)
        }
    }

    @Test func cacheThenNetworkIsObservedOnceWithTheNetworksAnswer() async throws {
        let seen = Seen()
        try await withServerSession({
            seen.configure(&$0)
            $0.cache = ResponseCache(memory: MemoryCacheStore(), disk: nil)
        }) { session, server in
            _ = try await session.send(Request<Data>.get("/json?max-age=60"))  // stored for the next call
            let before = seen.tracer.finishedSpans.count
            var answers: [Bool] = []
            for try await response in session.responses(
                for: Request<Data>.get("/json?max-age=60").accessory(seen.accessory())
            ) {
                answers.append(response.isFromCache)
            }
            #expect(answers == [true, false], "the cached answer, then the network's")
            let events = seen.events.withLock { $0 }
            #expect(events.count == 3 && events.first == "a willStart /json")
            #expect(events.last?.hasPrefix("a didStop 200 ") == true, "told once, with the network's answer")
            #expect(seen.tracer.finishedSpans.count == before + 1, "one span for the call")
            #expect(try seen.timed("GET", 200, port: server.port) == 2, "the send before it and this call")
            #expect(seen.monitor.all.filter { $0 == "didComplete ok" }.count == 2)
        }
    }

    /// A monitor that writes the end of each call into a shared list, so its calls interleave with accessories'.
    struct EndMonitor: EventMonitor {
        let events: Locked<[String]>
        func didComplete(_ request: PreparedRequest, result: Result<ResponseBody, CourierError>, timing: Timing) {
            events.withLock { $0.append("monitor didComplete") }
        }
        func didFinish(with message: DebugMessage) { events.withLock { $0.append("monitor didFinish") } }
    }

    /// A sink that keeps only the count of what it was given.
    final class CountingSink: ResponseSink {
        let count = Locked(0)
        func head(_ response: StreamedResponse) throws {}
        func write(_ chunk: ByteBuffer) throws { count.withLock { $0 += chunk.readableBytes } }
    }

    enum Kind: String, CaseIterable {
        case send, stream, sink, upload, download, events, webSocket, cacheThenNetwork
    }

    @Test(arguments: Kind.allCases)
    func everyKindOfCallEndsInOneOrderEachStepOnce(_ kind: Kind) async throws {
        let seen = Seen()
        let events = Locked<[String]>([])
        try await withServerSession({
            seen.configure(&$0)
            $0.monitors = [EndMonitor(events: events)]
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))
        }) { session, server in
            let accessory = RecordingAccessory(name: "a", events: events)
            switch kind {
            case .send:
                _ = try await session.send(Request<Data>.get("/bytes/5000").accessory(accessory))
            case .stream:
                let response = try await session.stream(Request<Data>.get("/bytes/5000").accessory(accessory))
                for try await _ in response.body {}
            case .sink:
                let sink = CountingSink()
                _ = try await session.stream(Request<Data>.get("/bytes/5000").accessory(accessory), into: sink)
                #expect(sink.count.withLock { $0 } == 5000)
            case .upload:
                // A 307 to a route that fails once with 503: the retry goes from the first URL again.
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ends-\(UUID())")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(repeating: 7, count: 5000).write(to: file)
                let upload = try session.upload(
                    Request<Data>.put("/redirect-to?status=307&url=/flaky/ends%3Ffailures%3D1", body: .file(file))
                        .accessory(accessory)
                )
                _ = try await upload.response
                #expect(server.requests("/flaky/ends").map(\.bodyLength) == [5000, 5000])
            case .download:
                let manager = try DownloadManager(session: session)
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ends-\(UUID())")
                defer { try? FileManager.default.removeItem(at: directory) }
                let download = try await manager.add(
                    server.url("/bytes/5000"),
                    to: .file(directory.appendingPathComponent("f"))
                )
                _ = try await download.completion()
            case .events:
                for try await _ in session.events(Request<Data>.get("/events?count=3").accessory(accessory)) { break }
            case .cacheThenNetwork:
                for try await _ in session.responses(for: Request<Data>.get("/json?max-age=60").accessory(accessory)) {}
            case .webSocket:
                try await session.webSocket(Request<Data>.get("/ws/echo").accessory(accessory)) { socket in
                    try await socket.send("hello")
                    for try await _ in socket { break }
                }
            }
            let steps = events.withLock { $0 }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
            // A download takes a URL, so it has no accessory of its own; everything else is the same.
            let accessorySteps: Set = ["a willStart", "a willStop", "a didStop"]
            let expected = ["a willStart", "monitor didComplete", "monitor didFinish", "a willStop", "a didStop"]
                .filter { kind != .download || !accessorySteps.contains($0) }
            #expect(steps == expected, "\(kind): \(events.withLock { $0 })")
            // One span for the call; a resend (a retry, a redirect's hop) is a child span of its own.
            let callSpans = seen.tracer.finishedSpans.filter { $0.attributes["http.request.resend_count"] == nil }
            #expect(callSpans.count == 1, "\(kind): one span")
            let durations = seen.metrics.timers.filter { timer in
                timer.label == "http.client.request.duration"
                    && timer.dimensions.contains { $0 == ("server.port", String(server.port)) }
            }
            #expect(durations.count == 1 && durations[0].values.count == 1, "\(kind): one duration")
            let method = kind == .upload ? "PUT" : "GET"
            #expect(durations.first?.dimensions.contains { $0 == ("http.request.method", method) } == true)
        }
    }
}
