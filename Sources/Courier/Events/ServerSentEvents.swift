import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Session {
    /// The server-sent events of `request` (`text/event-stream`), parsed as the WHATWG HTML standard says, with
    /// the reconnection an `EventSource` makes: when the stream ends or drops, the session waits the server's
    /// `retry` time (or ``EventStreamOptions/reconnectDelay``) and asks again with `Last-Event-ID`.
    ///
    /// The stream ends when the server answers 204, and fails on any other status than 200 (the request's retry
    /// rule has had its say by then), on a response that is not `text/event-stream`, or after
    /// ``EventStreamOptions/maxReconnects`` failed reconnections (connections that fail, bring no event or end
    /// quickly; the wait doubles after each, from at least ``EventStreamOptions/minReconnectDelay``). Leaving the
    /// loop closes the connection at once. Its ``ServerSentEvents/activity`` reports each drop, with the error that
    /// caused it, and each reconnection beside the events.
    /// Each connection is a call like any other: the pool tracks it, the authenticator signs it and the retry rule
    /// retries its head. Without a total timeout of its own, a connection has none (the stream may last for days);
    /// the read-idle timeout applies, and a server that is quiet for longer is reconnected to.
    ///
    /// Events are read as the caller asks for them, so a slow consumer slows the reads and memory stays flat.
    ///
    /// ```swift
    /// for try await event in session.events(Request<Data>.get("/events")) {
    ///     print(event.id, event.event, event.data)
    /// }
    /// ```
    public nonisolated func events(
        _ request: Request<Data>,
        options: EventStreamOptions = EventStreamOptions()
    )
        -> ServerSentEvents
    {
        ServerSentEvents(session: self, request: request, options: options)
    }
}

/// The events of one event stream, across reconnections: what ``Session/events(_:options:)`` returns. Iterate it
/// once; each iteration opens a stream of its own.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = ServerSentEvent

    let session: Session
    let request: Request<Data>
    let options: EventStreamOptions

    /// Opens the stream on the first call to `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: EventStreamReader(session: session, request: request, options: options))
    }

    /// Reads the stream; dropping it closes the connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let reader: EventStreamReader
        /// The events of the chunks parsed last, handed out from here, and the next one's place.
        @usableFromInline var batch: [ServerSentEvent] = []
        @usableFromInline var index = 0

        init(reader: EventStreamReader) {
            self.reader = reader
        }

        /// The next event, `nil` once the stream has ended (a 204), or throws the ``CourierError`` that ended it.
        ///
        /// Inlinable, and the batch a value of the iterator's own, so the caller's loop takes an event of a chunk
        /// already parsed (most of them) as a plain read: no async function of another module entered, no access
        /// to a class's properties checked, for each event.
        @inlinable
        public mutating func next() async throws -> ServerSentEvent? {
            if index < batch.count {
                defer { index &+= 1 }
                return batch[index]
            }
            return try await nextBatch()
        }

        /// Reads and parses until the stream brings events, and hands out the first.
        @usableFromInline
        mutating func nextBatch() async throws -> ServerSentEvent? {
            index = 0
            guard try await reader.take(into: &batch) else { return nil }
            index = 1
            return batch[0]
        }
    }
}

/// One iteration of an event stream: the connection, the parser and the reconnection rule. Owned by one iterator
/// and used by one task at a time, so it needs no lock.
@usableFromInline
final class EventStreamReader {
    private let session: Session
    private let request: Request<Data>
    private let options: EventStreamOptions
    /// Whether drops and reconnections are kept for the caller (``ServerSentEvents/activity``).
    private let reportsConnections: Bool
    private var parser: ServerSentEventParser
    private var ready: [ServerSentEvent] = []
    private var readyIndex = 0
    /// Drops and reconnections not yet handed out, when they are reported.
    private var notices: [EventStreamActivity] = []
    private var body: ByteStream.AsyncIterator?
    private var hasConnected = false
    /// Whether the current connection has brought an event: one that ends without an event counts as a failed one.
    private var connectionBroughtEvents = false
    private var failedReconnects = 0
    /// The wait before the next connection, set when the last one ended.
    private var reconnectDelay = Duration.zero
    private var isFinished = false

    init(session: Session, request: Request<Data>, options: EventStreamOptions, reportsConnections: Bool = false) {
        self.session = session
        self.request = request
        self.options = options
        self.reportsConnections = reportsConnections
        var parser = ServerSentEventParser(maxEventBytes: options.maxEventBytes, maxIDBytes: options.maxEventIDBytes)
        if let lastEventID = options.lastEventID { parser.resume(from: lastEventID) }
        self.parser = parser
    }

    /// The next event of the chunks parsed so far, if there is one.
    func nextReady() -> ServerSentEvent? {
        guard readyIndex < ready.count else { return nil }
        defer { readyIndex += 1 }
        return ready[readyIndex]
    }

    /// Replaces `events` with the events not yet handed out, reading and parsing (and reconnecting) until there
    /// is at least one; `false` once the stream has ended.
    func take(into events: inout [ServerSentEvent]) async throws(CourierError) -> Bool {
        while readyIndex >= ready.count {
            guard try await advance() else { return false }
        }
        events.removeAll(keepingCapacity: true)
        if readyIndex == 0 {
            swap(&events, &ready)  // the usual case: the parsed chunk's array, and its capacity, change hands
        } else {
            events.append(contentsOf: ready[readyIndex...])
        }
        ready.removeAll(keepingCapacity: true)
        readyIndex = 0
        return true
    }

    /// The next event, drop or reconnection.
    func nextActivity() async throws(CourierError) -> EventStreamActivity? {
        while true {
            if !notices.isEmpty { return notices.removeFirst() }
            if let event = nextReady() { return .event(event) }
            guard try await advance() else { return nil }
        }
    }

    /// One step once the parsed events are handed out: connects, or reads and parses the next chunk, or takes a
    /// drop; `false` once the stream has ended.
    private func advance() async throws(CourierError) -> Bool {
        ready.removeAll(keepingCapacity: true)
        readyIndex = 0
        if isFinished { return false }
        guard var stream = body else {
            try await connect()
            return true
        }
        let chunk: ByteBuffer?
        do {
            chunk = try await stream.next()
        } catch {
            try dropped(CourierError.normalized(error))
            return true
        }
        body = stream
        guard let chunk else {
            try dropped(nil)
            return true
        }
        do {
            try chunk.withUnsafeReadableBytes { bytes in try parser.parse(bytes, into: &ready) }
        } catch {
            body = nil  // closes the connection
            isFinished = true
            throw CourierError.normalized(error)
        }
        if !ready.isEmpty { connectionBroughtEvents = true }
        return true
    }

    /// Opens a connection: at once the first time, after the reconnection delay later on.
    private func connect() async throws(CourierError) {
        let isReconnection = hasConnected
        if isReconnection { try await waitToReconnect() }
        hasConnected = true
        let response: StreamedResponse
        do {
            response = try await session.streamWithinLimits(streamRequest(), boundsLength: false)
        } catch {
            let error = CourierError.normalized(error)
            guard failedReconnects > 0, error.code != .cancelled, error.code != .sessionClosed else {
                isFinished = true  // after the error, the sequence has ended
                throw error
            }
            return try giveUpOrRetry(after: error)  // the server went away between connections: try again
        }
        switch response.status.code {
        case 200 where Self.isEventStream(response.headers[.contentType]):
            body = response.body.makeAsyncIterator()
            connectionBroughtEvents = false
            if isReconnection, reportsConnections { notices.append(.reconnected) }
        case 200:
            isFinished = true
            let type = CourierError.printable(response.headers[.contentType] ?? "none", limit: 200)
            throw CourierError(code: .invalidResponse, message: "expected text/event-stream, got content type \(type)")
        case 204:
            isFinished = true  // the server's way of saying there is nothing more
        default:
            isFinished = true
            throw response.statusError
        }
    }

    /// The stream ended or failed mid-body: reconnect, unless the caller has gone. A connection that brought an
    /// event was progress, however short (a server that closes after each batch of events is a healthy one): it
    /// resets the count of failures first, so the wait is the server's `retry` time (at least the floor) again.
    private func dropped(_ error: CourierError?) throws(CourierError) {
        body = nil
        parser.finish()
        if let error, error.code == .cancelled || error.code == .sessionClosed {
            isFinished = true
            throw error
        }
        if connectionBroughtEvents { failedReconnects = 0 }
        try giveUpOrRetry(
            after: error
                ?? CourierError(code: .connectionClosed, message: "the server ended the event stream")
        )
    }

    /// Counts one more connection in a row that failed or brought no event; ends the stream with `error` past the
    /// limit, and otherwise sets the wait before the next one: the server's `retry` time (or the
    /// default), at least the floor, doubled for each failure in a row after the first.
    private func giveUpOrRetry(after error: CourierError) throws(CourierError) {
        failedReconnects += 1
        if let limit = options.maxReconnects, failedReconnects > limit {
            isFinished = true
            throw error
        }
        let base = max(parser.reconnectionTime ?? options.reconnectDelay, options.minReconnectDelay)
        reconnectDelay = Backoff(base: min(base, options.maxReconnectDelay), maximum: options.maxReconnectDelay)
            .delay(after: failedReconnects)
        if reportsConnections {
            notices.append(
                .dropped(EventStreamDrop(error: error, failuresInARow: failedReconnects, delay: reconnectDelay))
            )
        }
    }

    private func waitToReconnect() async throws(CourierError) {
        do {
            try await Task.sleep(for: reconnectDelay)
        } catch {
            isFinished = true
            throw .cancelled("the event stream was cancelled")
        }
    }

    /// The request with the headers an event stream sends, as browsers send them, and no total timeout unless it
    /// has one of its own.
    private func streamRequest() -> Request<Data> {
        var request = request
        request.headers[.accept] = "text/event-stream"
        request.headers[.cacheControl] = "no-cache"
        if !parser.lastEventID.isEmpty {
            request.headers[Self.lastEventIDField] = parser.lastEventID
        }
        if request.timeouts.total == nil { request.timeouts.total = Self.noTotalTimeout }
        return request
    }

    /// A valid field name literal, so it always makes a name.
    private static let lastEventIDField = HTTPField.Name("Last-Event-ID")!
    /// A century: long enough to be none, short enough for every clock and timer to add to now.
    private static let noTotalTimeout = Duration.seconds(100 * 365 * 24 * 3600)

    private static func isEventStream(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        return MediaType.essence(of: contentType) == "text/event-stream"
    }
}

extension ServerSentEvents {
    /// Each event's `data` decoded from JSON as `Value`: what model APIs and live feeds send. An event whose data
    /// does not decode ends the sequence with ``CourierError/Code/decoding``.
    ///
    /// ```swift
    /// struct Tick: Decodable, Sendable { var n: Int }
    /// for try await tick in session.events(Request<Data>.get("/events")).decoded(as: Tick.self) { print(tick.n) }
    /// ```
    public func decoded<Value: Decodable>(
        as type: Value.Type,
        decoder: JSONDecoder = JSONDecoder()
    )
        -> DecodedEvents<Value>
    {
        DecodedEvents(events: self, decoder: decoder)
    }
}

/// The events of a stream with their data decoded from JSON: what ``ServerSentEvents/decoded(as:decoder:)``
/// returns.
public struct DecodedEvents<Value: Decodable>: AsyncSequence, Sendable {
    /// Each element is one event's data, decoded.
    public typealias Element = Value

    let events: ServerSentEvents
    let decoder: JSONDecoder

    /// Opens the stream on the first call to `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: events.makeAsyncIterator(), decoder: decoder)
    }

    /// Reads and decodes the stream; dropping it closes the connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var events: ServerSentEvents.AsyncIterator
        let decoder: JSONDecoder

        /// The next event's data, decoded; `nil` once the stream has ended.
        public mutating func next() async throws -> Value? {
            guard let event = try await events.next() else { return nil }
            do {
                return try decoder.decode(Value.self, from: Data(event.data.utf8))
            } catch {
                let name = event.id.isEmpty ? "an event without an id" : "event \(event.id)"
                throw CourierError(code: .decoding, message: "the data of \(name) did not decode as \(Value.self)")
            }
        }
    }
}
