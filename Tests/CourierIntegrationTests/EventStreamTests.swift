import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// What `/events` and `/jsonl` send as data: `{"n":I}`.
struct Tick: Decodable, Sendable, Equatable {
    var n: Int
}

@Suite("Server-sent events and JSON lines over the loopback server", .timeLimit(.minutes(1)))
struct EventStreamTests {
    /// Reads every event of `events` (at most `limit`).
    func collect(_ events: ServerSentEvents, limit: Int = 1_000) async throws -> [ServerSentEvent] {
        var collected: [ServerSentEvent] = []
        for try await event in events {
            collected.append(event)
            if collected.count == limit { break }
        }
        return collected
    }

    /// The stream drops after every third event; each reconnection sends `Last-Event-ID`, so every event arrives
    /// once and in order, and the server's 204 after the last ends the sequence.
    @Test func dropsAreReconnectedWithTheLastEventID() async throws {
        try await withServerSession { session, server in
            let events = try await collect(session.events(Request<Data>.get("/events?count=10&drop-after=3&retry=10")))
            #expect(events.map(\.id) == (1...10).map(String.init))
            #expect(events.allSatisfy { $0.event == "tick" })
            #expect(events.first?.data == "{\"n\":1}")
            #expect(events.first?.retry == .milliseconds(10), "the retry field came with the first event")
            let sent = server.requests("/events").map { $0.header("Last-Event-ID") }
            #expect(sent == [nil, "3", "6", "9", "10"])
            #expect(server.requests("/events").allSatisfy { $0.header("Accept") == "text/event-stream" })
        }
    }

    /// Lines split across chunks (three bytes at a time) and ended by CRLF parse the same.
    @Test func piecesAndCRLFParseTheSame() async throws {
        try await withServerSession { session, _ in
            let events = try await collect(session.events(Request<Data>.get("/events?count=5&piece=3&crlf&retry=10")))
            #expect(events.map(\.data) == (1...5).map { "{\"n\":\($0)}" })
        }
    }

    /// A stream resumed from an ID starts after it.
    @Test func aStreamResumesFromTheGivenID() async throws {
        try await withServerSession { session, _ in
            let request = Request<Data>.get("/events?count=10&retry=10")
            let events = try await collect(session.events(request, options: EventStreamOptions(lastEventID: "7")))
            #expect(events.map(\.id) == ["8", "9", "10"])
        }
    }

    /// 204 ends the stream with no event; another status or a body that is not an event stream fails it without
    /// reconnecting.
    @Test func twoHundredFourEndsItAndOtherAnswersFailIt() async throws {
        try await withServerSession { session, server in
            let none = try await collect(session.events(Request<Data>.get("/status/204")))
            #expect(none.isEmpty)
            let refused = await courierError { _ = try await collect(session.events(Request<Data>.get("/status/404"))) }
            #expect(refused?.code == .httpStatus && refused?.status?.code == 404)
            #expect(server.hits("/status/404") == 1, "a refused status is not asked again")
            let plain = await courierError { _ = try await collect(session.events(Request<Data>.get("/small"))) }
            #expect(plain?.code == .invalidResponse)
        }
    }

    /// Leaving the loop closes the connection at once: the server sees it close and stops sending.
    @Test func leavingTheLoopClosesTheConnection() async throws {
        try await withServerSession { session, server in
            let events = try await collect(session.events(Request<Data>.get("/events?count=0&interval=20")), limit: 3)
            #expect(events.count == 3)
            await eventually("the server sees the stream closed", within: .seconds(5)) {
                server.counter("events-open") == 0
            }
            let sent = server.counter("events-sent")
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.counter("events-sent") == sent, "nothing more is sent")
        }
    }

    /// Cancelling the task that iterates ends the stream with `cancelled`, also while it waits to reconnect.
    @Test func cancellingTheIteratingTaskEndsIt() async throws {
        try await withServerSession { session, server in
            let reading = Task {
                try await collect(session.events(Request<Data>.get("/events?count=0&drop-after=1&retry=60000")))
            }
            await eventually("the first event went out") { server.counter("events-sent") >= 1 }
            try await Task.sleep(for: .milliseconds(100))
            reading.cancel()
            let error = await courierError { _ = try await reading.value }
            #expect(error?.code == .cancelled)
        }
    }

    /// An event larger than the limit ends the stream with `bodyTooLarge` instead of filling memory.
    @Test func anOversizedEventEndsTheStream() async throws {
        try await withServerSession { session, _ in
            let options = EventStreamOptions(maxEventBytes: 8)
            let error = await courierError {
                _ = try await collect(session.events(Request<Data>.get("/events?count=3"), options: options))
            }
            #expect(error?.code == .bodyTooLarge)
        }
    }

    /// After `maxReconnects` reconnections in a row that fail, the stream gives up with the last error.
    @Test func reconnectionsAreBoundedWhenAsked() async throws {
        let server = try await TestServer.start()
        let url = server.url("/events?count=0&drop-after=1&retry=1")
        try await withSession(Configuration()) { session in
            let options = EventStreamOptions(maxReconnects: 2)
            var received = 0
            let error = await courierError {
                for try await _ in session.events(Request<Data>.get(url.absoluteString), options: options) {
                    received += 1
                    if received == 2 { await server.shutdown() }  // the server goes away for good
                }
            }
            #expect(received == 2)
            #expect(error?.code == .connectionFailed)
        }
    }

    /// Each event's data decoded as JSON.
    @Test func eventDataDecodesAsJSON() async throws {
        try await withServerSession { session, _ in
            var ticks: [Tick] = []
            for try await tick in session.events(Request<Data>.get("/events?count=4&retry=10")).decoded(as: Tick.self) {
                ticks.append(tick)
            }
            #expect(ticks == (1...4).map { Tick(n: $0) })
        }
    }

    /// JSON lines split seven bytes at a time decode one value per line, the last one without a line feed.
    @Test func jsonLinesDecodeOneValuePerLine() async throws {
        try await withServerSession { session, _ in
            var ticks: [Tick] = []
            for try await tick in session.jsonLines(Request<Data>.get("/jsonl?count=100&piece=7"), as: Tick.self) {
                ticks.append(tick)
            }
            #expect(ticks == (1...100).map { Tick(n: $0) })
            let wrong = await courierError {
                for try await _ in session.jsonLines(Request<Data>.get("/events?count=2"), as: Tick.self) {}
            }
            #expect(wrong?.code == .decoding)
            // The session asks for gzip; a stream the server compressed is decoded as it is read.
            var compressed: [Tick] = []
            for try await tick in session.jsonLines(Request<Data>.get("/jsonl?count=30&piece=5&gzip"), as: Tick.self) {
                compressed.append(tick)
            }
            #expect(compressed == (1...30).map { Tick(n: $0) })
        }
    }
}

@Suite("courier events", .timeLimit(.minutes(2)))
struct EventsCLITests {
    /// Each event on its own JSON line, across a drop, and exit 0 at the server's 204; the text form prints the
    /// fields as a stream writes them.
    @Test func eventsPrintAsTheyArriveAcrossADrop() async throws {
        try await withTestServer { server in
            let url = server.url("/events?count=5&drop-after=2&retry=10").absoluteString
            let json = try await CLI.run(["events", url, "--json"])
            #expect(json.status == 0, "\(json.stderr)")
            let lines = json.stdout.split(separator: "\n")
            #expect(lines.count == 5)
            #expect(lines.first == #"{"data":"{\"n\":1}","event":"tick","id":"1","retry":10}"#)
            #expect(lines.dropFirst().first == #"{"data":"{\"n\":2}","event":"tick","id":"2"}"#)
            #expect(
                lines.last == #"{"data":"{\"n\":5}","event":"tick","id":"5","retry":10}"#,
                "each connection sets it"
            )
            let text = try await CLI.run(["events", url, "--last-event-id", "4"])
            #expect(text.status == 0)
            #expect(text.stdout == "id: 5\nevent: tick\nretry: 10\ndata: {\"n\":5}\n\n")
        }
    }

    /// A refused stream exits as `get` does for the same status.
    @Test func aRefusedStreamExitsNonZero() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run(["events", server.url("/status/404").absoluteString])
            #expect(outcome.status != 0)
            #expect(outcome.stderr.contains("httpStatus"))
        }
    }
}

extension EventStreamTests {
    /// After the error that ended it, the sequence has ended: the next call returns nil at once, without asking
    /// again (a first connection that fails is not retried).
    @Test func afterItsErrorTheSequenceHasEnded() async throws {
        try await withSession(Configuration()) { session in
            let refused = Request<Data>.get("http://127.0.0.1:9/events").retry(RetryPolicy(maxAttempts: 1))
            // A reconnection would wait an hour, past the suite's time limit.
            let options = EventStreamOptions(reconnectDelay: .seconds(3600), maxReconnectDelay: .seconds(3600))
            var iterator = session.events(refused, options: options).makeAsyncIterator()
            let error = await courierError { _ = try await iterator.next() }
            #expect(error?.code == .connectionFailed)
            let after = try await iterator.next()
            #expect(after == nil)
        }
    }
}
