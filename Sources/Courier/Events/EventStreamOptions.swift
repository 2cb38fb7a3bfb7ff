/// How ``Session/events(_:options:)`` reads and reconnects.
public struct EventStreamOptions: Sendable, Hashable {
    /// The wait before reconnecting until the server sets one with a `retry` field: 3 seconds, as browsers wait.
    public var reconnectDelay: Duration
    /// The shortest wait before reconnecting, whatever a `retry` field asks (default 250 ms), so `retry: 0` and a
    /// server that drops every connection at once cannot make the stream reconnect in a tight loop.
    public var minReconnectDelay: Duration
    /// The longest wait a server's `retry` field or the backoff may set, so a hostile value cannot park the stream.
    public var maxReconnectDelay: Duration
    /// How many reconnections in a row may fail before the stream gives up with the last error; `nil` keeps
    /// trying as long as the caller iterates, as a browser's `EventSource` does.
    ///
    /// A connection that fails or brings no event counts as a failure; one that brought an event was progress and
    /// starts the count again, however short it was (a server may close after each batch). After each failure in
    /// a row the wait doubles (from the server's `retry` time or ``reconnectDelay``, up to ``maxReconnectDelay``);
    /// ``minReconnectDelay`` keeps a server that drops every connection at once from making a tight loop.
    public var maxReconnects: Int?
    /// The largest event (its data and the line being read) the stream holds (default 16 MiB, enough for a full
    /// JSON snapshot); a larger one ends the stream with ``CourierError/Code/bodyTooLarge``.
    public var maxEventBytes: Int
    /// The longest event `id` the stream takes (default 4 KiB): it is kept and sent back as `Last-Event-ID`, so a
    /// longer one ends the stream with ``CourierError/Code/bodyTooLarge``.
    public var maxEventIDBytes: Int
    /// The event ID to resume from: sent as `Last-Event-ID` with the first request too.
    public var lastEventID: String?

    /// Creates options.
    public init(
        reconnectDelay: Duration = .seconds(3),
        minReconnectDelay: Duration = .milliseconds(250),
        maxReconnectDelay: Duration = .seconds(300),
        maxReconnects: Int? = nil,
        maxEventBytes: Int = 16 << 20,
        maxEventIDBytes: Int = 4096,
        lastEventID: String? = nil
    ) {
        self.reconnectDelay = reconnectDelay
        self.minReconnectDelay = minReconnectDelay
        self.maxReconnectDelay = maxReconnectDelay
        self.maxReconnects = maxReconnects
        self.maxEventBytes = maxEventBytes
        self.maxEventIDBytes = maxEventIDBytes
        self.lastEventID = lastEventID
    }
}
