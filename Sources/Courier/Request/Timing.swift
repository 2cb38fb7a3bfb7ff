#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Points in time of one request, on the monotonic clock, and the wall-clock start; and the connection that
/// carried it.
///
/// The instants are kept as nanosecond ticks (see `Tick`), so a response has a fixed layout and the async
/// functions that carry one keep it in their frames; they read and write as `ContinuousClock` instants, to the
/// nanosecond.
///
/// Where the time went, as curl's `-w` splits it (each from ``start``):
///
/// ```swift
/// let timing = try await session.send(Request<Data>.get("/users")).timing
/// if let connection = timing.connection, !connection.isReused {
///     print("new connection to", connection.remote?.description ?? "a Unix socket")
///     print("secured after", timing.timeToSecureConnection ?? .zero)
/// }
/// print("sent after", timing.timeToRequestSent ?? .zero, "first byte after", timing.timeToFirstByte ?? .zero)
/// ```
public struct Timing: Sendable, Hashable {
    /// Wall-clock time the request started, for logs.
    public var startDate: Date
    private var startTick: Tick
    private var firstByteTick: Tick?
    private var endTick: Tick
    /// The connection that carried the final request, when the transport said.
    private(set) var use: ConnectionUse?

    /// When the request started.
    public var start: ContinuousClock.Instant {
        get { startTick.instant }
        set { startTick = Tick(newValue) }
    }
    /// When the response head arrived (after the last redirect).
    public var firstByte: ContinuousClock.Instant? {
        get { firstByteTick?.instant }
        set { firstByteTick = newValue.map(Tick.init) }
    }
    /// When the body was complete.
    public var end: ContinuousClock.Instant {
        get { endTick.instant }
        set { endTick = Tick(newValue) }
    }

    /// The connection that carried the final request (after redirects): whether it was opened for it, where it
    /// leads, and when it was ready. `nil` when the answer came from the cache, or from a transport that does not
    /// say (URLSession's, a stub's, or an `HTTPClient` you made without
    /// ``AsyncHTTPClientTransport/preparedConfiguration(_:)``).
    public var connection: ConnectionFacts? {
        get { use.map(ConnectionFacts.init) }
        set { use = newValue.map { ConnectionUse($0) } }
    }

    /// How many connections the request opened, its redirects' included (curl's `num_connects`): 0 when every
    /// exchange reused one, or when the transport does not say.
    public var connectionsOpened: Int { use?.opened ?? 0 }

    /// Creates a timing value.
    public init(
        startDate: Date,
        start: ContinuousClock.Instant,
        firstByte: ContinuousClock.Instant?,
        end: ContinuousClock.Instant,
        connection: ConnectionFacts? = nil
    ) {
        self.init(
            startDate: startDate,
            startTick: Tick(start),
            firstByteTick: firstByte.map(Tick.init),
            endTick: Tick(end),
            use: connection.map { ConnectionUse($0) }
        )
    }

    /// A timing whose start date is read back from `startTick`: the request path keeps no `Date` of its own, whose
    /// layout the compiler cannot see and which would cost every async frame holding it a task allocation.
    init(startTick: Tick, firstByteTick: Tick?, endTick: Tick, use: ConnectionUse? = nil) {
        self.init(
            startDate: startTick.date,
            startTick: startTick,
            firstByteTick: firstByteTick,
            endTick: endTick,
            use: use
        )
    }

    init(startDate: Date, startTick: Tick, firstByteTick: Tick?, endTick: Tick, use: ConnectionUse?) {
        self.startDate = startDate
        self.startTick = startTick
        self.firstByteTick = firstByteTick
        self.endTick = endTick
        self.use = use
    }

    /// The same figures counted from the end of `earlier`: a request after a redirect, timed from its hop's end.
    func counted(after earlier: Timing) -> Timing {
        Timing(startTick: earlier.endTick, firstByteTick: firstByteTick, endTick: endTick, use: use)
    }

    /// Start to end.
    public var total: Duration { startTick.duration(to: endTick) }
    /// Start to the first byte of the response.
    public var timeToFirstByte: Duration? { firstByteTick.map { startTick.duration(to: $0) } }

    /// Start to the moment the final request's connection was connected (curl's `time_connect`): for a connection
    /// that was connected during the call (for it, or for one of its redirects) and is not TLS; `nil` otherwise (see
    /// ``ConnectionFacts/connected``).
    public var timeToConnect: Duration? {
        guard let use = openedDuringCall, !use.record.isSecure, use.record.remote != nil else { return nil }
        return startTick.duration(to: use.record.ready)
    }

    /// Start to the moment the final request's connection finished its TLS handshake (curl's `time_appconnect`):
    /// for a TLS connection that was opened during the call; `nil` otherwise.
    public var timeToSecureConnection: Duration? {
        guard let use = openedDuringCall, use.record.isSecure else { return nil }
        return startTick.duration(to: use.record.ready)
    }

    /// Start to the moment the final request's head was written to its connection (curl's `time_pretransfer`).
    public var timeToRequestSent: Duration? { use.map { startTick.duration(to: $0.sent) } }

    /// The final request's connection, when it became ready after the call started.
    private var openedDuringCall: ConnectionUse? { use.flatMap { $0.record.ready >= startTick ? $0 : nil } }
}
