/// What the connection that carried a request did for it: whether it was opened for the request or reused, where it
/// leads, and when it was ready. ``Timing/connection`` holds it.
///
/// Courier learns a connection's facts as AsyncHTTPClient opens it, through the connection initialisers it
/// installs. AsyncHTTPClient 1.37 hands a connection over only once its TCP connect and its TLS handshake are both
/// done, so for a TLS connection the two are one figure, ``ready``, and ``connected`` is `nil`; name resolution
/// happens inside its connection bootstrap, so no figure exists for it. The proposal that would expose both is in
/// <doc:UpstreamReports>.
public struct ConnectionFacts: Sendable, Hashable {
    /// An IP address and a port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// The IP address, as text (`127.0.0.1`, `::1`).
        public var address: String
        /// The port.
        public var port: Int

        /// Creates an endpoint.
        public init(address: String, port: Int) {
            self.address = address
            self.port = port
        }

        /// `address:port`, with an IPv6 address in brackets.
        public var description: String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }
    }

    /// The connection's number in this process, counting from 1; every request the connection carries shows the
    /// same number (HAR's `connection`).
    public var id: Int
    /// Whether the connection had carried a request before this one (an HTTP/2 connection: a stream).
    public var isReused: Bool
    /// Whether the connection is TLS.
    public var isSecure: Bool
    /// The peer's address: the server's, or the proxy's when the request went through one (curl's `remote_ip` and
    /// `remote_port`); `nil` over a Unix socket, which Courier's relay for pinned hosts and authenticated SOCKS
    /// proxies uses.
    public var remote: Endpoint?
    /// This side's address (curl's `local_ip` and `local_port`); `nil` over a Unix socket.
    public var local: Endpoint?
    /// When the connection was ready for requests: its TCP connect done and, for TLS, its handshake too.
    public var ready: ContinuousClock.Instant
    /// When the request's head was written to the connection.
    public var requestSent: ContinuousClock.Instant
    /// The HTTP version the connection speaks, `HTTP/1.1` or `HTTP/2`; `nil` when not known.
    public var httpVersion: String?

    /// When the TCP connect was done: ``ready`` for a plain connection; `nil` for TLS, whose handshake
    /// AsyncHTTPClient finishes before it hands the connection over, and over a Unix socket (Courier's relay makes
    /// the server's connection and handshake after AsyncHTTPClient's head reaches it, so they fall in the wait for
    /// the answer).
    public var connected: ContinuousClock.Instant? { isSecure || remote == nil ? nil : ready }

    /// Creates the facts of one connection's use.
    public init(
        id: Int,
        isReused: Bool,
        isSecure: Bool,
        remote: Endpoint?,
        local: Endpoint?,
        ready: ContinuousClock.Instant,
        requestSent: ContinuousClock.Instant,
        httpVersion: String? = nil
    ) {
        self.id = id
        self.isReused = isReused
        self.isSecure = isSecure
        self.remote = remote
        self.local = local
        self.ready = ready
        self.requestSent = requestSent
        self.httpVersion = httpVersion
    }

    init(_ use: ConnectionUse) {
        self.init(
            id: use.record.id,
            isReused: use.isReused,
            isSecure: use.record.isSecure,
            remote: use.record.remote,
            local: use.record.local,
            ready: use.record.ready.instant,
            requestSent: use.sent.instant,
            httpVersion: use.record.version.isEmpty ? nil : "HTTP/" + use.record.version
        )
    }
}

extension ConnectionUse {
    init(_ facts: ConnectionFacts) {
        self.init(record: ConnectionRecord(facts), isReused: facts.isReused, sent: Tick(facts.requestSent))
    }
}
