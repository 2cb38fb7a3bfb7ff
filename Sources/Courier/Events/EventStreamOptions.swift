/// How ``Session/events(_:options:)`` reads and reconnects.
public struct EventStreamOptions: Sendable, Hashable {
    /// The wait before reconnecting until the server sets one with a `retry` field: 3 seconds, as browsers wait.
    public var reconnectDelay: Duration
    /// The longest wait a server's `retry` field may set, so a hostile value cannot park the stream.
    public var maxReconnectDelay: Duration
    /// How many reconnections in a row may fail, or bring no event, before the stream gives up with the last
    /// error; `nil` keeps trying as long as the caller iterates, as a browser's `EventSource` does.
    public var maxReconnects: Int?
    /// The largest event (its data and the line being read) the stream holds; a larger one ends the stream with
    /// ``CourierError/Code/bodyTooLarge``.
    public var maxEventBytes: Int
    /// The event ID to resume from: sent as `Last-Event-ID` with the first request too.
    public var lastEventID: String?

    /// Creates options.
    public init(
        reconnectDelay: Duration = .seconds(3),
        maxReconnectDelay: Duration = .seconds(300),
        maxReconnects: Int? = nil,
        maxEventBytes: Int = 1 << 20,
        lastEventID: String? = nil
    ) {
        self.reconnectDelay = reconnectDelay
        self.maxReconnectDelay = maxReconnectDelay
        self.maxReconnects = maxReconnects
        self.maxEventBytes = maxEventBytes
        self.lastEventID = lastEventID
    }
}
