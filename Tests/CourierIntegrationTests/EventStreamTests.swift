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
            #expect(server.requests("/events").allSatisfy { $0.header("Cache-Control") == "no-cache" })
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
            #expect(json.stderr.contains("courier: the event stream dropped (connectionClosed"), "\(json.stderr)")
            #expect(json.stderr.contains("courier: the event stream reconnected"), "\(json.stderr)")
            let text = try await CLI.run(["events", url, "--last-event-id", "4"])
            #expect(text.status == 0)
            #expect(text.stdout == "id: 5\nevent: tick\nretry: 10\ndata: {\"n\":5}\n\n")
        }
    }

    /// Control sequences a server puts in an event's id, type and data are escaped on a terminal and in JSON, and
    /// in the content type an error names: no clipboard write, title change or cleared screen.
    @Test func controlSequencesFromTheServerAreEscaped() async throws {
        try await withTestServer { server in
            let url = server.url("/events?count=1&hostile").absoluteString
            let terminal = try await CLI.run(["events", url], onTerminal: true)
            #expect(terminal.status == 0, "\(terminal.stdout)")
            #expect(!terminal.stdout.contains("\u{1B}") && !terminal.stdout.contains("\u{9B}"))
            #expect(terminal.stdout.contains("id: \\x1B]52;c;cHduZWQ=\\x07"), "\(terminal.stdout)")
            let json = try await CLI.run(["events", url, "--json"])
            #expect(!json.stdout.contains("\u{1B}") && !json.stdout.contains("\u{9B}"))
            #expect(json.stdout.contains(#""data":"\u009b31mred\u001b]0;title\u0007""#), "\(json.stdout)")
            let type = "text/html\u{9B}2J"  // C1 CSI; C0 controls never pass HTTP's header grammar
            var components = URLComponents(url: server.url("/response-headers"), resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "Content-Type", value: type)]
            let wrongType = try await CLI.run(["events", components.url!.absoluteString])
            #expect(wrongType.status != 0)
            #expect(wrongType.stderr.contains("content type text/html\\x9B2J"), "\(wrongType.stderr)")
            #expect(!wrongType.stderr.contains("\u{9B}"))
        }
    }

    /// The id is printed when it changes, not with every event (a long id cannot multiply the output), and
    /// `--max-event-size` bounds an event.
    @Test func theIDIsPrintedWhenItChangesAndEventsAreBounded() async throws {
        try await withTestServer { server in
            let text = try await CLI.run(["events", server.url("/events?count=3&id-once&retry=10").absoluteString])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.components(separatedBy: "id: ").count == 2, "\(text.stdout)")
            #expect(text.stdout.hasPrefix("id: 3\n") && text.stdout.components(separatedBy: "data: ").count == 4)
            let large = server.url("/events?count=1&pad=2000").absoluteString
            let bounded = try await CLI.run(["events", large, "--max-event-size", "1K"])
            #expect(bounded.status == 63, "\(bounded.stderr)")
            #expect(try await CLI.run(["events", large, "--max-event-size", "4K"]).status == 0)
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
    /// An event cut off by a drop does not set the next connection's `Last-Event-ID`: that is the id of the last
    /// event that was whole.
    @Test func aCutEventDoesNotSetTheNextID() async throws {
        try await withServerSession { session, server in
            let options = EventStreamOptions(minReconnectDelay: .zero)
            let request = Request<Data>.get("/events?count=4&drop-after=2&cut-mid-event&retry=1")
            let events = try await collect(session.events(request, options: options))
            #expect(events.map(\.id) == ["1", "2", "3", "4"])
            #expect(server.requests("/events").map { $0.header("Last-Event-ID") } == [nil, "2", "4"])
            // Events without an id line after the reconnection take the last dispatched event's id, never the cut
            // event's (1003).
            let resumed = Request<Data>.get("/events?count=4&drop-after=2&cut-mid-event&retry=1&resumed-id-last")
            let inherited = try await collect(session.events(resumed, options: options))
            #expect(inherited.map(\.id) == ["1", "2", "2", "4"])
        }
    }

    /// A drop for a read timeout (a server quiet past the read-idle time) and the reconnection after it are
    /// reported beside the events, and the sequence goes on.
    @Test func dropsAndReconnectionsAreReportedWithTheirError() async throws {
        try await withServerSession { session, _ in
            // The quiet (1.5 s) is ten times the read-idle time, and the head of a reconnection has 400 ms. On a
            // loaded machine a reconnection's head can still come late: that is one more drop (for the same
            // timeout), so the loop reads on until a reconnection is followed by a drop, within eight tries.
            var request = Request<Data>.get("/events?count=3&interval=1500&retry=1")
            request.timeouts.readIdle = .milliseconds(400)
            var seen: [String] = []
            let options = EventStreamOptions(maxReconnectDelay: .seconds(2), maxReconnects: 8)
            for try await activity in session.events(request, options: options).activity {
                switch activity {
                case .event(let event): seen.append("event \(event.id)")
                case .dropped(let drop):
                    #expect(drop.error.code == .timeout, "\(drop.error)")
                    #expect(drop.delay >= .milliseconds(250), "the floor holds whatever retry asks")
                    seen.append("dropped")
                case .reconnected: seen.append("reconnected")
                }
                let reconnection = seen.firstIndex(of: "reconnected")
                if let reconnection, seen[(reconnection + 1)...].contains("dropped") { break }
            }
            #expect(seen.first == "dropped", "\(seen)")
            let reconnected = try #require(seen.firstIndex(of: "reconnected"), "\(seen)")
            #expect(seen[(reconnected + 1)...].contains("dropped"), "the sequence goes on after it: \(seen)")
        }
    }

    /// A compressed stream that turns into a bomb after megabytes of text that does not compress is refused as the
    /// bomb starts (the ratio is checked per window of output, which arrives in pieces of at most 64 KiB), not
    /// after it has grown past what came before.
    @Test func aBombInACompressedStreamIsRefusedWhereItStarts() async throws {
        try await withServerSession { session, _ in
            let request = Request<Data>.get("/fault/bomb?mib=256&prefix=8&type=text/event-stream")
            let error = await courierError {
                for try await _ in session.events(request, options: EventStreamOptions(maxReconnects: 0)) {}
            }
            #expect(error?.code == .decompression, "\(String(describing: error))")
        }
    }

    /// An ordinary large event (a JSON snapshot of several MiB) fits the default limit of 16 MiB.
    @Test func aLargeEventFitsTheDefaultLimit() async throws {
        #expect(EventStreamOptions().maxEventBytes == 16 << 20)
        try await withServerSession { session, _ in
            let events = try await collect(session.events(Request<Data>.get("/events?count=1&pad=6000000")))
            #expect(events.first?.data.utf8.count == 6_000_007)
        }
    }

    /// A server that drops every connection before an event counts against the limit, and `retry: 0` cannot make
    /// the stream reconnect in a tight loop: the floor holds and the wait doubles.
    /// A server that goes quiet after an event, with the connection open, is dropped once the read-idle time has
    /// passed and reconnected to, and the next event comes (LaunchDarkly's contract test "can set read timeout").
    @Test func aServerQuietPastTheReadTimeoutIsReconnectedTo() async throws {
        try await withServerSession { session, server in
            var request = Request<Data>.get("/events?count=0&silent-after=1&retry=0")
            request.timeouts.readIdle = .milliseconds(500)
            var ids: [String] = []
            var drops: [CourierError.Code] = []
            let started = ContinuousClock.now
            for try await activity in session.events(request, options: EventStreamOptions(maxReconnects: 5)).activity {
                switch activity {
                case .event(let event): ids.append(event.id)
                case .dropped(let drop): drops.append(drop.error.code)
                default: break
                }
                if ids.count == 3 { break }
            }
            #expect(ids == ["1", "2", "3"])
            // Two drops at least, each a read timeout (a loaded machine may time out a connection's first read too).
            #expect(drops.count >= 2 && drops.allSatisfy { $0 == .timeout }, "\(drops)")
            #expect(server.requests("/events").compactMap { $0.header("last-event-id") }.starts(with: ["1"]))
            #expect(ContinuousClock.now - started < .seconds(30), "well before a 30 s read timeout would have")
        }
    }

    @Test func dropsWithoutAnEventCountAndBackOff() async throws {
        try await withServerSession { session, server in
            let request = Request<Data>.get("/events?count=0&drop-after=0&retry=0")
            var delays: [Duration] = []
            let error = await courierError {
                for try await activity in session.events(request, options: EventStreamOptions(maxReconnects: 3))
                    .activity
                {
                    if case .dropped(let drop) = activity { delays.append(drop.delay) }
                }
            }
            #expect(error?.code == .connectionClosed)
            #expect(server.requests("/events").count == 4)
            #expect(delays == [.milliseconds(250), .milliseconds(500), .milliseconds(1000)])
        }
    }

    /// A server that sends a batch of events and closes, again and again, is healthy: each connection that brought
    /// an event starts the count again, so every wait is the server's `retry` time (here the 250 ms floor). They
    /// had doubled to 32 s by the seventh batch.
    @Test func aConnectionThatBroughtEventsResetsTheBackoff() async throws {
        try await withServerSession { session, server in
            let request = Request<Data>.get("/events?count=50&drop-after=7&retry=0")
            var delays: [Duration] = []
            var ids: [String] = []
            for try await activity in session.events(request, options: EventStreamOptions(maxReconnects: 2)).activity {
                switch activity {
                case .event(let event): ids.append(event.id)
                case .dropped(let drop):
                    #expect(drop.failuresInARow == 1)
                    delays.append(drop.delay)
                case .reconnected: break
                }
            }
            #expect(ids == (1...50).map(String.init))
            // Seven batches of seven cut, the last event and the stream's end, then the 204.
            #expect(delays.count == 8 && delays.allSatisfy { $0 == .milliseconds(250) }, "\(delays)")
            #expect(server.requests("/events").count == 9)
        }
    }

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
