/// What happened on an event stream: an event, or a connection that dropped or came back. What
/// ``ServerSentEvents/activity`` yields, for a consumer that wants to know of each drop (a read timeout, a server
/// that closed the stream) without the sequence ending.
public enum EventStreamActivity: Sendable {
    /// An event, as ``ServerSentEvents`` yields it.
    case event(ServerSentEvent)
    /// The connection dropped, or a reconnection failed; the stream connects again after the drop's delay.
    case dropped(EventStreamDrop)
    /// A connection opened again after a drop.
    case reconnected
}

/// A dropped connection of an event stream, and what the stream does about it.
public struct EventStreamDrop: Sendable {
    /// What ended the connection: ``CourierError/Code/timeout`` for a server quiet past the read-idle time,
    /// ``CourierError/Code/connectionClosed`` for a stream the server ended, or the error of a failed reconnection.
    public var error: CourierError
    /// How many connections in a row have failed, brought no event or ended quickly, this one included: what
    /// ``EventStreamOptions/maxReconnects`` counts.
    public var failuresInARow: Int
    /// The wait before the next connection.
    public var delay: Duration
}

extension ServerSentEvents {
    /// The stream's events with its drops and reconnections between them, in the order they happened.
    ///
    /// ```swift
    /// for try await activity in session.events(Request<Data>.get("/events")).activity {
    ///     switch activity {
    ///     case .event(let event): print(event.data)
    ///     case .dropped(let drop): print("dropped (\(drop.error.code)); again in \(drop.delay)")
    ///     case .reconnected: print("reconnected")
    ///     }
    /// }
    /// ```
    public var activity: EventStreamActivities { EventStreamActivities(events: self) }
}

/// An event stream's events, drops and reconnections: what ``ServerSentEvents/activity`` returns. Iterate it
/// once; each iteration opens a stream of its own.
public struct EventStreamActivities: AsyncSequence, Sendable {
    /// Each element is an event, a drop or a reconnection.
    public typealias Element = EventStreamActivity

    let events: ServerSentEvents

    /// Opens the stream on the first call to `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            reader: EventStreamReader(
                session: events.session,
                request: events.request,
                options: events.options,
                reportsConnections: true
            )
        )
    }

    /// Reads the stream; dropping it closes the connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: EventStreamReader

        /// The next event, drop or reconnection; `nil` once the stream has ended, or throws the ``CourierError``
        /// that ended it.
        public mutating func next() async throws -> EventStreamActivity? {
            try await reader.nextActivity()
        }
    }
}
