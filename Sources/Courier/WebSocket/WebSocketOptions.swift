/// How one WebSocket connection behaves: its limits, its keep-alive, compression and subprotocols.
///
/// ```swift
/// var options = WebSocketOptions()
/// options.keepAlive = .init(interval: .seconds(20), timeout: .seconds(10))
/// options.compression = true                      // offer permessage-deflate
/// options.maxMessageBytes = 4 << 20
/// ```
public struct WebSocketOptions: Sendable, Hashable {
    /// The largest message Courier accepts, its fragments joined and, when compressed, inflated: 1 MiB by default,
    /// as URLSession's `maximumMessageSize`. A bigger one ends the connection with
    /// ``WebSocketCloseCode/messageTooBig`` and a ``CourierError/Code/webSocket`` error; so does a single frame
    /// that announces more, before its payload is read.
    public var maxMessageBytes: Int
    /// The most frames one message may come in: 4,096 by default. A server sending more (a fragment storm of
    /// tiny or empty frames) ends the connection with ``WebSocketCloseCode/policyViolation``.
    public var maxFragments: Int
    /// The largest frame Courier sends: a longer message goes out in fragments of this size. 64 KiB by default.
    public var maxOutgoingFrameBytes: Int
    /// Pings sent while the connection is open, and how long a pong may take; `nil` (the default) sends none.
    public var keepAlive: KeepAlive?
    /// Whether to offer permessage-deflate (RFC 7692); used only when the server accepts it. Off by default.
    public var compression: Bool
    /// The subprotocols to offer in `Sec-WebSocket-Protocol`, preferred first; the server's choice is in
    /// ``WebSocket/subprotocol``. A server choosing one not offered fails the handshake.
    public var subprotocols: [String]
    /// How long to wait for the server's close frame, and for it to close the connection, once Courier sent its
    /// own: 10 seconds by default, then Courier closes the connection itself.
    public var closeTimeout: Duration
    /// Whether to open the connection again when it drops, as the call's retry rule says (the request's, else the
    /// session's, else ``RetryPolicy/exponential(maxAttempts:baseDelay:)``); see
    /// ``Session/webSocket(_:options:_:)``. Off by default: the call ends with the connection.
    public var reconnects: Bool

    /// Pings at a fixed interval; a pong that has not come within `timeout` ends the connection with
    /// ``WebSocketCloseCode/goingAway`` and a ``CourierError/Code/timeout`` error.
    public struct KeepAlive: Sendable, Hashable {
        /// Time between pings.
        public var interval: Duration
        /// How long the pong to a ping may take.
        public var timeout: Duration

        /// Creates a keep-alive; `timeout` defaults to `interval`.
        public init(interval: Duration, timeout: Duration? = nil) {
            self.interval = interval
            self.timeout = timeout ?? interval
        }
    }

    /// Creates options; every parameter has the default described on its property.
    public init(
        maxMessageBytes: Int = 1 << 20,
        maxFragments: Int = 4096,
        maxOutgoingFrameBytes: Int = 64 << 10,
        keepAlive: KeepAlive? = nil,
        compression: Bool = false,
        subprotocols: [String] = [],
        closeTimeout: Duration = .seconds(10),
        reconnects: Bool = false
    ) {
        self.maxMessageBytes = max(1, maxMessageBytes)
        self.maxFragments = max(1, maxFragments)
        self.maxOutgoingFrameBytes = max(1, maxOutgoingFrameBytes)
        self.keepAlive = keepAlive
        self.compression = compression
        self.subprotocols = subprotocols
        self.closeTimeout = closeTimeout
        self.reconnects = reconnects
    }
}
