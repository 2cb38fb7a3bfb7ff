import HTTPTypes

/// The names of Courier's metrics and span attributes, in one place: OpenTelemetry's semantic conventions for HTTP
/// clients where they name the thing, `courier.` for what is Courier's own. Use them to find Courier's series in a
/// dashboard or an alert.
///
/// | Metric | Kind | Attributes |
/// | --- | --- | --- |
/// | `http.client.request.duration` | timer (seconds) | method, `server.address`, `server.port`, status code, `error.type` |
/// | `http.client.request.body.size` | histogram (bytes) | the same |
/// | `http.client.response.body.size` | histogram (bytes) | the same |
/// | `courier.retries` | counter | method |
/// | `courier.cache.hits`, `courier.cache.misses` | counter | — |
/// | `courier.coalesced_calls` | counter | — (calls answered by an identical call in flight) |
/// | `courier.download.bytes` | counter | — (bytes written by downloads) |
/// | `http.client.active_requests` | gauge | `server.address`, `server.port` (calls on the wire now) |
/// | `courier.pool.queued` | gauge | `server.address`, `server.port` (calls waiting for a slot in the pool) |
/// | `http.client.open_connections` | gauge | `server.address`, `server.port`, `network.peer.address`, `network.protocol.version`, `http.connection.state` (`idle` or `active`) |
/// | `http.client.connection.duration` | timer (seconds) | the same but the state (how long each connection lived) |
///
/// The two connection metrics come from the connections of a session's own transport, into the factory the session
/// was made with; a connection counts from its first request, which names its server.
///
/// Client spans carry `network.peer.address` and `network.peer.port` too: the peer the final request's connection
/// reached.
///
/// `error.type` is the status code of a 4xx or 5xx answer, else the ``CourierError/Code`` of a failure; it is
/// left out of a success.
public enum TelemetryNames {
    /// Metric names.
    public enum Metric {
        /// How long a call took, from the caller's start to its answer or failure: a timer, in seconds.
        public static let requestDuration = "http.client.request.duration"
        /// The size of a request body sent: a histogram, in bytes.
        public static let requestBodySize = "http.client.request.body.size"
        /// The size of a response body received (after decoding): a histogram, in bytes.
        public static let responseBodySize = "http.client.response.body.size"
        /// Attempts sent again by the retry rule: a counter.
        public static let retries = "courier.retries"
        /// Answers from the response cache: a counter.
        public static let cacheHits = "courier.cache.hits"
        /// Cacheable requests the cache could not answer: a counter.
        public static let cacheMisses = "courier.cache.misses"
        /// Bytes written by downloads: a counter.
        public static let downloadBytes = "courier.download.bytes"
        /// Calls answered by an identical call already in flight instead of a call of their own: a counter.
        public static let coalescedCalls = "courier.coalesced_calls"
        /// Calls on the wire now, per server: a gauge (OpenTelemetry's up-down counter).
        public static let activeRequests = "http.client.active_requests"
        /// Calls waiting for a slot in the session's pool, per server: a gauge.
        public static let queuedRequests = "courier.pool.queued"
        /// Connections open now, per server and state (`idle` or `active`): a gauge (OpenTelemetry's up-down
        /// counter).
        public static let openConnections = "http.client.open_connections"
        /// How long each connection lived, from ready to closed: a timer, in seconds.
        public static let connectionDuration = "http.client.connection.duration"
    }

    /// Attribute names, for metric dimensions and span attributes alike.
    public enum Attribute {
        /// The request's method (`GET`).
        public static let requestMethod = "http.request.method"
        /// The answer's status code (`200`).
        public static let responseStatusCode = "http.response.status_code"
        /// The host the request went to.
        public static let serverAddress = "server.address"
        /// The port the request went to (the scheme's default when the URL names none).
        public static let serverPort = "server.port"
        /// Why a call failed: a 4xx or 5xx status code, or a ``CourierError/Code``.
        public static let errorType = "error.type"
        /// The URL, with credentials redacted.
        public static let urlFull = "url.full"
        /// Which resend of the call an attempt is (0 for the first): retries, redirects, credential refreshes.
        public static let resendCount = "http.request.resend_count"
        /// The IP address of the peer the request's connection reached: the server, or a proxy.
        public static let networkPeerAddress = "network.peer.address"
        /// The port of the peer the request's connection reached.
        public static let networkPeerPort = "network.peer.port"
        /// The HTTP version a connection speaks: `1.1` or `2`.
        public static let networkProtocolVersion = "network.protocol.version"
        /// Whether a connection carries a request now (`active`) or waits for one (`idle`).
        public static let httpConnectionState = "http.connection.state"
    }
}

extension TelemetryNames {
    /// OpenTelemetry's `error.type` for a call: the status code of a 4xx or 5xx answer (whether or not a validator
    /// refused it), else the failure's ``CourierError/Code``; `nil` for a success.
    static func errorType(status: HTTPResponse.Status?, failure: CourierError?) -> String? {
        if let status, status.code >= 400 { return String(status.code) }
        return failure.map { $0.code.description }
    }
}
