import Courier
import CourierOpenAPI
import CourierTesting
import Crypto
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The client swift-openapi-generator made from `StreamingAPI/openapi.yaml`, talking to the loopback server through
/// ``CourierClientTransport``: bodies stream both ways, read by OpenAPIRuntime's own event-stream and JSON-lines
/// helpers.
@Suite("CourierOpenAPI: streamed bodies through a generated client")
struct OpenAPIStreamingTests {
    private typealias Tick = Components.Schemas.Tick

    private func client(_ session: Session, _ server: TestServer) -> Client {
        Client(serverURL: server.baseURL, transport: CourierClientTransport(session: session))
    }

    @Test func serverSentEventsReadByTheRuntimesHelpers() async throws {
        try await withServerSession { session, server in
            let output = try await client(session, server).getEvents(query: .init(count: 5, piece: 7))
            let events = try output.ok.body.text_event_hyphen_stream
                .asDecodedServerSentEventsWithJSONData(of: Tick.self)
            var received: [Int] = []
            for try await event in events {
                #expect(event.event == "tick" && event.id == event.data.map { String($0.n) })
                received.append(try #require(event.data).n)
            }
            #expect(received == [1, 2, 3, 4, 5])
        }
    }

    @Test(arguments: [false, true])
    func jsonLinesReadByTheRuntimesHelpers(compressed: Bool) async throws {
        try await withServerSession { session, server in
            let output = try await client(session, server)
                .getJSONLines(query: .init(count: 40, piece: 5, gzip: compressed ? true : nil))
            let body = try output.ok.body.application_jsonl
            #expect(body.length == .unknown && body.iterationBehavior == .single)
            var received: [Int] = []
            for try await tick in body.asDecodedJSONLines(of: Tick.self) { received.append(tick.n) }
            #expect(received == Array(1...40))
        }
    }

    @Test func aResponseBodyArrivesWhileTheServerIsStillWritingIt() async throws {
        try await withServerSession { session, server in
            let output = try await client(session, server)
                .getDrip(query: .init(size: 4 * 4096, chunk: 4096, interval: 300))
            let body = try output.ok.body.binary
            #expect(body.length == .known(4 * 4096) && body.iterationBehavior == .single)
            var iterator = body.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.count <= 4096)
            #expect(server.counter("drip-parts") < 4)  // handed over before the last part was written
            var total = first.count
            while let chunk = try await iterator.next() { total += chunk.count }
            #expect(total == 4 * 4096 && server.counter("drip-parts") == 4)
        }
    }

    @Test func aRequestBodyStreamsOutAsItIsMadeNotGatheredFirst() async throws {
        try await withServerSession { session, server in
            let chunks = (0..<6).map { [UInt8](ServerFiles.bytes(offset: $0 << 20, count: 1 << 20)) }
            // The last chunk is made only once the server has bytes of the body: gathering the body first would
            // never get there.
            let source = HeadFirstChunks(chunks: chunks) { server.counter("request-bytes") > 0 }
            let body = HTTPBody(source, length: .known(6 << 20), iterationBehavior: .single)
            let echo = try await client(session, server).putEcho(body: .binary(body)).ok.body.json
            let expected = SHA256.hash(data: Data(chunks.joined())).map { String(format: "%02x", $0) }.joined()
            #expect(echo.bodyLength == 6 << 20 && echo.bodySHA256 == expected)
            #expect(echo.headers?.additionalProperties["content-length"] == ["\(6 << 20)"])
        }
    }

    @Test func aBodyThatAllowsMultipleIterationsIsSentAgainOnARetryAndOneThatDoesNotIsNot() async throws {
        try await withServerSession({
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
        }) { session, server in
            let api = client(session, server)
            let replayable = HTTPBody([UInt8](repeating: 7, count: 100_000))  // an array: multiple iterations
            let retried = try await api.putFlaky(
                path: .init(key: "multiple"),
                query: .init(failures: 1),
                body: .binary(replayable)
            )
            let text = try await String(collecting: try retried.ok.body.plainText, upTo: 1024)
            #expect(text == "ok after 1 failures" && server.hits("/flaky/multiple") == 2)

            let once = HTTPBody(
                AsyncStream {
                    $0.yield(ArraySlice(repeating: 7, count: 100_000))
                    $0.finish()
                },
                length: .known(100_000)
            )
            let refused = try await api.putFlaky(
                path: .init(key: "single"),
                query: .init(failures: 1),
                body: .binary(once)
            )
            guard case .serviceUnavailable = refused else {
                Issue.record("a body read once cannot be sent again, so the 503 comes back: \(refused)")
                return
            }
            #expect(server.hits("/flaky/single") == 1)
        }
    }

    @Test func aGetTheSessionsCacheCanAnswerIsReadWholeAndCached() async throws {
        try await withServerSession({ $0.cache = ResponseCache() }) { session, server in
            let api = client(session, server)
            for _ in 0..<3 {
                let document = try await api.getDocument(query: .init(max_hyphen_age: 60)).ok.body.json
                #expect(document.served == 1)
            }
            #expect(server.hits("/json") == 1)
            // Events are streamed past the cache all the same.
            let events = try await api.getEvents(query: .init(count: 2)).ok.body.text_event_hyphen_stream
            #expect(events.iterationBehavior == .single)
            var count = 0
            for try await _ in events.asDecodedServerSentEvents() { count += 1 }
            #expect(count == 2)
        }
    }

    @Test func aCompressedBodyIsDecompressedAsItStreams() async throws {
        try await withServerSession { session, server in
            let list = try await client(session, server).getCompressed().ok.body.json
            #expect(list.count == 200 && list.items.count == 200 && list.items.last?.id == 199)
        }
    }

    @Test func documentsAreBoundedByTheSessionsLimitsAndEventStreamsAreNot() async throws {
        try await withServerSession({ $0.limits.maxBodyBytes = 1000 }) { session, server in
            let api = client(session, server)
            await #expect(throws: (any Error).self) {
                _ = try await api.getBytes(path: .init(count: 5000))  // its Content-Length says too much
            }
            let chunked = try await api.getBytes(path: .init(count: 300_000), query: .init(chunked: true)).ok.body
                .binary
            do {
                _ = try await Data(collecting: chunked, upTo: .max)
                Issue.record("300,000 bytes passed a limit of 1000")
            } catch {
                #expect((error as? CourierError)?.code == .bodyTooLarge)
            }
            var count = 0
            let events = try await api.getEvents(query: .init(count: 40)).ok.body.text_event_hyphen_stream
            for try await _ in events.asDecodedServerSentEvents() { count += 1 }
            #expect(count == 40)  // about 1.5 KiB of events
        }
    }

    @Test func whichResponsesAreReadWhole() {
        func request(_ method: HTTPRequest.Method, accept: String?) -> HTTPRequest {
            var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: "/")
            request.headerFields[.accept] = accept
            return request
        }
        #expect(CourierClientTransport.gathersResponse(to: request(.head, accept: nil), cached: false))
        #expect(!CourierClientTransport.gathersResponse(to: request(.get, accept: "application/json"), cached: false))
        #expect(CourierClientTransport.gathersResponse(to: request(.get, accept: "application/json"), cached: true))
        #expect(CourierClientTransport.gathersResponse(to: request(.get, accept: nil), cached: true))
        #expect(!CourierClientTransport.gathersResponse(to: request(.post, accept: "application/json"), cached: true))
        for streamed in ["text/event-stream", "application/json;q=0.5, Application/JSONL", "application/octet-stream"] {
            #expect(!CourierClientTransport.gathersResponse(to: request(.get, accept: streamed), cached: true))
        }
    }
}

/// Chunks handed out in turn, the last only once `ready` says so; after 10 s without it, the body fails.
private struct HeadFirstChunks: AsyncSequence, Sendable {
    let chunks: [[UInt8]]
    let ready: @Sendable () -> Bool

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks[...], ready: ready) }

    struct Iterator: AsyncIteratorProtocol {
        var chunks: ArraySlice<[UInt8]>
        let ready: @Sendable () -> Bool

        mutating func next() async throws -> ArraySlice<UInt8>? {
            if chunks.count == 1 {
                let deadline = ContinuousClock.now + .seconds(10)
                while !ready(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
                guard ready() else { throw CancellationError() }
            }
            return chunks.popFirst().map { $0[...] }
        }
    }
}
