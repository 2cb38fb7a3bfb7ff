/// One server-sent event, as the WHATWG HTML standard's event-stream parser dispatches it (§9.2.6): what
/// ``Session/events(_:options:)`` yields.
public struct ServerSentEvent: Sendable, Hashable {
    /// The last event ID the stream has set, by this event's `id` field or an earlier one's; empty when none has.
    /// It is the `Last-Event-ID` a reconnection sends.
    public var id: String
    /// The event's type: its `event` field, or `message` when it has none.
    public var event: String
    /// Its `data` lines, joined by line feeds.
    public var data: String
    /// The reconnection time a `retry` field set since the previous event, if one did.
    public var retry: Duration?

    /// Creates an event.
    public init(id: String = "", event: String = "message", data: String, retry: Duration? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }
}
